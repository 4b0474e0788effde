package supervisor

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// spares returns the pool's idle supervisors once it holds n (the refill runs in the background).
func spares(t *testing.T, l *Pool, n int) []*child {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		got := append([]*child(nil), l.spares...)
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
	l := &Pool{Spares: 2}
	l.Prewarm()
	spares(t, l, 2)
	o, err := runJob(context.Background(), l, spec(t, "echo one", 10*time.Second))
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
	if o, err := runJob(context.Background(), l, spec(t, "echo two", 10*time.Second)); err != nil || o.Summary.Text != "two\n" {
		t.Fatalf("run after Close: %+v, %v", o, err)
	}
}

// TestDeadSpareIsReplaced: a spare killed while it waited does not fail the run that takes it.
func TestDeadSpareIsReplaced(t *testing.T) {
	l := &Pool{Spares: 1}
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
			p.reaped = true
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	o, err := runJob(context.Background(), l, spec(t, "echo after", 10*time.Second))
	if err != nil || o.Summary.Text != "after\n" {
		t.Fatalf("run with a dead spare: %+v, %v", o, err)
	}
}

// startRun starts r on l and returns the run, failing the test on an error.
func startRun(t *testing.T, l *Pool, j job) *Attached {
	t.Helper()
	p, err := l.Start(context.Background(), j.Spec, j.Streams)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*Attached)
}

// runOn runs command on l to its end and returns the supervisor that ran it, with the outcome.
func runOn(t *testing.T, l *Pool, ctx context.Context, j job) (int, run.Outcome) {
	t.Helper()
	p, err := l.Start(ctx, j.Spec, j.Streams)
	if err != nil {
		t.Fatal(err)
	}
	rn := p.(*Attached)
	o, err := rn.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return rn.SupervisorPid(), o
}

// A pool's supervisor serves the next run after one that left nothing behind: no exec per run, and no
// refill while it comes back. Close, Release and a cancel of an ended run do not touch the run it serves
// next.
func TestPoolReusesSupervisor(t *testing.T) {
	l := &Pool{Spares: 2}
	defer l.Close()
	l.Prewarm()
	idle := spares(t, l, 2)
	ctx, cancel := context.WithCancel(context.Background())
	first, o := runOn(t, l, ctx, spec(t, "echo one", 10*time.Second))
	if o.Summary.Text != "one\n" {
		t.Fatalf("first run: %+v", o)
	}
	cancel() // after its done: must not reach the next run
	for i := range 5 {
		j := spec(t, "sleep 0.2; echo again", 10*time.Second)
		p, err := l.Start(context.Background(), j.Spec, j.Streams)
		if err != nil {
			t.Fatal(err)
		}
		rn := p.(*Attached)
		o, err := rn.Wait()
		if err != nil || o.Summary.Text != "again\n" || o.Cancelled || o.ExitCode != 0 {
			t.Fatalf("run %d: %+v %v", i, o, err)
		}
		if rn.SupervisorPid() != first {
			t.Fatalf("run %d had supervisor %d, want %d again", i, rn.SupervisorPid(), first)
		}
		rn.Release()
		if err := rn.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l.mu.Lock()
	now := append([]*child(nil), l.spares...)
	l.mu.Unlock()
	if len(now) != 2 || now[0] != idle[0] {
		t.Fatalf("pool %v after the runs, want the same two supervisors as before (%v)", now, idle)
	}
}

// A run that leaves a process behind, a task and a run with stdin do not hand their supervisor back; a
// timed-out run, whose tree was swept, does; the pool goes on working after each.
func TestPoolReuseOnlyWhenNothingIsLeft(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	l := &Pool{Spares: 1}
	defer l.Close()
	a, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	b, o := runOn(t, l, context.Background(), spec(t, "("+hang(m)+" >/dev/null 2>&1 &)", 10*time.Second))
	if b != a || len(o.LeftoverPids) == 0 {
		t.Fatalf("the leftover run: supervisor %d (want %d), leftovers %v", b, a, o.LeftoverPids)
	}
	c, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	if c == b {
		t.Fatalf("supervisor %d served a run after one that left %v", c, o.LeftoverPids)
	}
	d, o := runOn(t, l, context.Background(), spec(t, "setsid "+hang(m+"t")+" & sleep 300", 500*time.Millisecond))
	if d != c || !o.TimedOut {
		t.Fatalf("the timed-out run: supervisor %d (want %d), %+v", d, c, o)
	}
	if e, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second)); e != d {
		t.Fatalf("a timed-out run whose tree is gone did not hand back its supervisor (%d, then %d)", d, e)
	}
	in := spec(t, "cat", 10*time.Second)
	in.Stdin = strings.NewReader("from stdin\n")
	f, o := runOn(t, l, context.Background(), in)
	if o.Summary.Text != "from stdin\n" || f == d {
		t.Fatalf("the stdin run: supervisor %d (the reused one is %d), %+v", f, d, o)
	}
	if g, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second)); g == f {
		t.Fatalf("the supervisor of a run with stdin served another")
	}
}

// A supervisor SIGKILLed while its command runs: the run's error is ErrDied, says how the supervisor ended
// in words (no bare "EOF") and that what the command started may still run, which is so: the shell died
// with its supervisor, what the shell started did not.
func TestKilledSupervisorSaysWhatMayRun(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	l := &Pool{}
	defer l.Close()
	rn := startRun(t, l, spec(t, hang(m)+" & wait", 600*time.Second))
	if !waitFor(5*time.Second, func() bool { return len(alive(m)) == 1 }) {
		t.Fatalf("the marked process never appeared: %v", alive(m))
	}
	if err := unix.Kill(rn.SupervisorPid(), unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, err := rn.Wait()
	if !errors.Is(err, ErrDied) || !errors.Is(err, io.EOF) {
		t.Fatalf("Wait returned %v, want ErrDied after the socket's EOF", err)
	}
	text := err.Error()
	for _, want := range []string{"killed by SIGKILL", "its socket closed before the run's end", orphansText} {
		if !strings.Contains(text, want) {
			t.Errorf("error %q does not say %q", text, want)
		}
	}
	if strings.Contains(text, "EOF") {
		t.Errorf("error %q says EOF", text)
	}
	if len(alive(m)) != 1 {
		t.Errorf("alive %v: the command's child should have outlived its supervisor, as the error says", alive(m))
	}
}

// A reused supervisor is still the run's watcher: its client going away kills the tree, and one killed
// while it waits in the pool is replaced without failing the run that takes it.
func TestReusedSupervisorWatchesItsClient(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	l := &Pool{Spares: 1}
	defer l.Close()
	first, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	rn := startRun(t, l, spec(t, "setsid "+hang(m)+" & "+hang(m+"b"), 600*time.Second))
	if rn.SupervisorPid() != first {
		t.Fatalf("supervisor %d, want %d again", rn.SupervisorPid(), first)
	}
	done := make(chan error, 1)
	go func() { _, err := rn.Wait(); done <- err }()
	if !waitFor(5*time.Second, func() bool { return len(alive(m)) == 2 }) {
		t.Fatalf("the marked processes never appeared: %v", alive(m))
	}
	rn.p.conn.Close() // what the kernel does when the client dies
	if !waitFor(1500*time.Millisecond, func() bool { return len(alive(m)) == 0 }) {
		t.Fatalf("alive %v after the client went away", alive(m))
	}
	if err := <-done; !errors.Is(err, ErrDied) {
		t.Fatalf("Wait returned %v, want ErrDied", err)
	}

	a, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	if err := syscall.Kill(a, syscall.SIGTERM); err != nil { // idle, back in the pool: it ends
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool { return !running(a) && !holdsFiles(a) }) {
		t.Fatalf("an idle reused supervisor %d did not end on SIGTERM", a)
	}
	if b, o := runOn(t, l, context.Background(), spec(t, "echo after", 10*time.Second)); b == a || o.Summary.Text != "after\n" {
		t.Fatalf("after the idle supervisor was killed: supervisor %d, %+v", b, o)
	}
}

// holdsFiles reports whether pid still has open descriptors: a process killed by a signal shows as a
// zombie once its main thread ended, while its other threads may still be exiting with its socket open.
func holdsFiles(pid int) bool {
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return err == nil && len(fds) > 0
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// A supervisor serves MaxRuns runs at most; the next one gets another.
func TestReuseIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs MaxRuns commands")
	}
	l := &Pool{Spares: 1}
	defer l.Close()
	first, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	for i := 2; i <= MaxRuns; i++ {
		if s, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second)); s != first {
			t.Fatalf("run %d had supervisor %d, want %d", i, s, first)
		}
	}
	if s, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second)); s == first {
		t.Fatalf("supervisor %d served more than %d runs", s, MaxRuns)
	}
}

// A quiet start (what Pool.Run sends) gets no started event: the first event is the run's done, with
// its outcome; the pid of such a run is not known to the client.
func TestQuietStartReportsOnlyTheEnd(t *testing.T) {
	p, err := spawn()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	j := spec(t, "echo quiet; exit 4", 10*time.Second)
	rn, err := p.start(context.Background(), j.Spec, j.Streams, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := rn.next()
	if err != nil {
		t.Fatal(err)
	}
	if ev.Op != OpDone || ev.Outcome == nil || ev.Outcome.ExitCode != 4 || ev.Summary.Text != "quiet\n" {
		t.Fatalf("first event %+v, want the done event of the run", ev)
	}
	if rn.Pid() != 0 {
		t.Fatalf("pid %d known after a quiet start", rn.Pid())
	}
	rn.end(false)
}

// Pool.Run, like Start, gives a run that a retired supervisor refused (a command changed what it passes
// on) to another, and a failed start is its error.
func TestPoolRunRetriesRetired(t *testing.T) {
	if _, err := exec.LookPath("renice"); err != nil {
		t.Skip("no renice")
	}
	l := &Pool{Spares: 1}
	defer l.Close()
	s, o := runOn(t, l, context.Background(), spec(t, "renice -n 5 -p $PPID >/dev/null", 10*time.Second))
	if o.ExitCode != 0 {
		t.Fatalf("renice: %+v", o)
	}
	if got := spares(t, l, 1); got[0].spid != s {
		t.Fatalf("the pool holds %d, want the changed supervisor %d back (it retires at its next start)", got[0].spid, s)
	}
	o, err := runJob(context.Background(), l, spec(t, "echo next", 10*time.Second))
	if err != nil || o.Summary.Text != "next\n" {
		t.Fatalf("the run after the change: %+v, %v", o, err)
	}
	if !waitFor(5*time.Second, func() bool { return !running(s) }) {
		t.Fatalf("the retired supervisor %d runs on", s)
	}
	bad := spec(t, "true", 10*time.Second)
	bad.Shell = "/nonexistent/bash"
	if _, err := runJob(context.Background(), l, bad); !errors.Is(err, run.ErrShellNotFound) {
		t.Fatalf("err = %v, want ErrShellNotFound", err)
	}
}

// A supervisor offered reuse makes itself lean (pkg/memlimit) before its first run, and once; a
// supervisor of one run (no reuse offered, as `run`'s) does not.
func TestReusedSupervisorIsLean(t *testing.T) {
	// How many times the command's supervisor made itself lean so far (the hook init sets).
	leans := func(l *Pool, runs int) []string {
		t.Helper()
		defer l.Close()
		mark := filepath.Join(t.TempDir(), "lean")
		t.Setenv(leanMarkEnv, mark) // read by the supervisor this pool spawns next
		var got []string
		for range runs {
			_, o := runOn(t, l, context.Background(), spec(t, "cat "+mark+" 2>/dev/null | wc -l", 10*time.Second))
			got = append(got, strings.TrimSpace(o.Summary.Text))
		}
		return got
	}
	if got := leans(&Pool{Spares: 1}, 3); !slices.Equal(got, []string{"1", "1", "1"}) {
		t.Errorf("lean before runs 1-3 of a supervisor offered reuse: %q times, want once, before the first", got)
	}
	if got := leans(&Pool{}, 1); !slices.Equal(got, []string{"0"}) {
		t.Errorf("lean before the run of a supervisor of one run: %q times, want never", got)
	}
}

// The shell of a reused supervisor's later run (started on the main thread for the goroutine that serves
// it) dies with its supervisor: a SIGKILLed supervisor leaves no shell behind (its parent-death signal).
func TestReusedRunDiesWithItsSupervisor(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	l := &Pool{Spares: 1}
	defer l.Close()
	first, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	second, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	rn := startRun(t, l, spec(t, "exec -a "+m+" sleep 300", 600*time.Second))
	if second != first || rn.SupervisorPid() != first {
		t.Fatalf("supervisors %d, %d, %d: want the same one three times", first, second, rn.SupervisorPid())
	}
	if !waitFor(5*time.Second, func() bool { return len(alive(m)) == 1 }) {
		t.Fatalf("the shell never appeared: %v", alive(m))
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitFor(2*time.Second, func() bool { return len(alive(m)) == 0 }) {
		t.Fatalf("the shell %v outlived its SIGKILLed supervisor", alive(m))
	}
	if _, err := rn.Wait(); !errors.Is(err, ErrDied) {
		t.Fatalf("Wait returned %v, want ErrDied", err)
	}
}

// A reused supervisor without the proxy's server (as one pkg/supervisor/entry served; this test binary
// links no server) runs nothing that needs the proxy: it retires at that start, and the run goes to
// another supervisor, whose first run it is (here, one that fails closed: no server either).
func TestReusedSupervisorRetiresForTheProxy(t *testing.T) {
	l := &Pool{Spares: 1}
	defer l.Close()
	s, o := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	if o.ExitCode != 0 {
		t.Fatalf("true: %+v", o)
	}
	if got := spares(t, l, 1); got[0].spid != s {
		t.Fatalf("the pool holds %d, want %d back", got[0].spid, s)
	}
	j := spec(t, "touch ran", 10*time.Second)
	j.Sandbox = &sandbox.Confinement{Network: sandbox.NetworkProxy}
	_, err := runJob(context.Background(), l, j)
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), proxy.ErrNoServer.Error()) {
		t.Fatalf("err = %v; want the sandbox unavailable: %v", err, proxy.ErrNoServer)
	}
	if !waitFor(5*time.Second, func() bool { return !running(s) }) {
		t.Fatalf("the supervisor %d without the proxy's server runs on", s)
	}
	if _, err := os.Stat(filepath.Join(string(j.Dir), "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

// Resolve remembers the process's working directory only while the path it found still names it: after a
// rename it finds the new path, after the directory's removal it says so, as run.ResolveDir does.
func TestResolveWorkingDirectory(t *testing.T) {
	base := t.TempDir()
	a := filepath.Join(base, "a")
	if err := os.Mkdir(a, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(a)
	pool := &Pool{}
	for range 2 { // found, then remembered
		tg, err := pool.Resolve("", "")
		if err != nil || tg.Dir != a {
			t.Fatalf("Resolve: dir %q, %v; want %q", tg.Dir, err, a)
		}
	}
	b := filepath.Join(base, "b")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	want, wantErr := run.ResolveDir("", "")
	tg, err := pool.Resolve("", "")
	if tg.Dir != want || (err == nil) != (wantErr == nil) || want != b {
		t.Errorf("after a rename: Resolve %q, %v; ResolveDir %q, %v; want %q", tg.Dir, err, want, wantErr, b)
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	want, wantErr = run.ResolveDir("", "")
	tg, err = pool.Resolve("", "")
	if wantErr == nil || err == nil || err.Error() != wantErr.Error() || tg.Dir != want {
		t.Errorf("after removal: Resolve %q, %v; ResolveDir %q, %v; want the same error", tg.Dir, err, want, wantErr)
	}
}
