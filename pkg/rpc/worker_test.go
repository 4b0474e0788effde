package rpc

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// emptyCall is a call that serving does nothing with but end.
func emptyCall() *call {
	c := &call{}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	return c
}

// settled waits until cond holds (goroutines come and go on their own schedule), failing after guard.
func settled(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(guard); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("never settled")
		}
	}
}

// Calls served one after the other are served by one goroutine, which waits for the next; at most
// maxIdleWorkers wait after a burst, and they end with the loop.
func TestWorkersAreReused(t *testing.T) {
	l := &loop{calls: map[*call]struct{}{}, stop: make(chan struct{}), idle: make(chan *call)}
	before := runtime.NumGoroutine()
	for range 20 {
		l.wg.Add(1)
		l.run(emptyCall())
		l.wg.Wait()
		settled(t, func() bool { return l.waiting.Load() == 1 })
	}
	// At most: a goroutine an earlier test left may end meanwhile (the race detector's runs are slow
	// enough for it), never one more start.
	if n := runtime.NumGoroutine(); n > before+1 {
		t.Fatalf("%d goroutines after 20 calls one after the other, want %d (one waiting)", n, before+1)
	}
	for range 3 * maxIdleWorkers {
		l.wg.Add(1)
		go l.work(emptyCall()) // as run does when none waits
	}
	l.wg.Wait()
	settled(t, func() bool { return runtime.NumGoroutine() <= before+maxIdleWorkers })
	if w := l.waiting.Load(); w > maxIdleWorkers {
		t.Fatalf("%d workers wait, want at most %d", w, maxIdleWorkers)
	}
	close(l.stop)
	settled(t, func() bool { return runtime.NumGoroutine() <= before && l.waiting.Load() == 0 })
}
