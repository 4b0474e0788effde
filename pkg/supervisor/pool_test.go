package supervisor

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// spares returns the pool's idle supervisors once it holds n (the refill runs in the background).
func spares(t *testing.T, l *Local, n int) []*Process {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		got := append([]*Process(nil), l.spares...)
		l.mu.Unlock()
		if len(got) >= n {
			return got
		}
	}
	t.Fatalf("the pool never held %d spares", n)
	return nil
}

// TestPoolRefillsAndCloses: a take is refilled to Spares; Close ends every idle supervisor and reaps it.
func TestPoolRefillsAndCloses(t *testing.T) {
	l := &Local{Spares: 2}
	l.Prewarm()
	spares(t, l, 2)
	o, err := run.Run(context.Background(), l, spec(t, "echo one", 10*time.Second))
	if err != nil || o.Summary.Text != "one\n" {
		t.Fatalf("run: %+v, %v", o, err)
	}
	idle := spares(t, l, 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range idle {
		if err := syscall.Kill(p.spid, 0); err == nil {
			t.Errorf("spare %d still runs after Close", p.spid)
		}
	}
	l.mu.Lock()
	n := len(l.spares)
	l.mu.Unlock()
	if n != 0 {
		t.Errorf("%d spares after Close", n)
	}
	// After Close a run still works, with a supervisor of its own; none is kept.
	if o, err := run.Run(context.Background(), l, spec(t, "echo two", 10*time.Second)); err != nil || o.Summary.Text != "two\n" {
		t.Fatalf("run after Close: %+v, %v", o, err)
	}
}

// TestDeadSpareIsReplaced: a spare killed while it waited does not fail the run that takes it.
func TestDeadSpareIsReplaced(t *testing.T) {
	l := &Local{Spares: 1}
	defer l.Close()
	l.Prewarm()
	p := spares(t, l, 1)[0]
	if err := syscall.Kill(p.spid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(p.spid, 0) == nil { // a zombie until reaped: wait for its socket end to close
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(p.spid, &ws, syscall.WNOHANG, nil); pid == p.spid {
			p.waitOnce.Do(func() {})
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	o, err := run.Run(context.Background(), l, spec(t, "echo after", 10*time.Second))
	if err != nil || o.Summary.Text != "after\n" {
		t.Fatalf("run with a dead spare: %+v, %v", o, err)
	}
}
