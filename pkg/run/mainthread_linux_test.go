package run

import (
	"context"
	"runtime"
	"testing"
)

// The main thread's loop runs what do hands it and says so; once it ended, do runs nothing and says
// that too (the caller then starts its shell itself).
func TestMainLoopDo(t *testing.T) {
	m := &mainLoop{funcs: make(chan func()), ended: make(chan struct{})}
	quit := make(chan struct{})
	go func() { // the loop, as ServeMainThread runs it
		defer close(m.ended)
		for {
			select {
			case f := <-m.funcs:
				f()
			case <-quit:
				return
			}
		}
	}()
	ran := false
	if !m.do(func() { ran = true }) || !ran {
		t.Fatal("do did not run its function on the loop")
	}
	close(quit)
	<-m.ended
	if m.do(func() { t.Error("ran after the loop ended") }) {
		t.Fatal("do says it ran after the loop ended")
	}
}

// Off the main thread ServeMainThread serves nothing: it returns what result delivers, and a run meanwhile
// starts its shell as any other goroutine's does.
func TestServeMainThreadOffTheMainThread(t *testing.T) {
	got := make(chan int, 1)
	hold := make(chan struct{}) // keeps a goroutine that landed on the main thread there, so the next cannot
	defer close(hold)
	for range 2 {
		go func() {
			runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
			if onMainThread() {
				got <- -1
				<-hold
				return
			}
			result := make(chan int)
			go func() {
				if mainThread.Load() != nil {
					t.Error("the main thread's loop is set off the main thread")
				}
				var out buffer
				o, err := loop(context.Background(), spec(t, "echo ran", &out))
				if err != nil || out.String() != "ran\n" || o.ExitCode != 0 {
					t.Errorf("run meanwhile: %+v %q %v", o, out.String(), err)
				}
				result <- 7
			}()
			got <- ServeMainThread(result)
		}()
		switch v := <-got; v {
		case -1:
			continue // on the main thread: again, off it
		case 7:
			return
		default:
			t.Fatalf("ServeMainThread returned %d, want 7", v)
		}
	}
	t.Fatal("no goroutine ran off the main thread")
}
