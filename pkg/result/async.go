package result

import (
	"fmt"
	"io"
	"sync"
)

// AsyncWriter passes writes to an underlying writer from its own goroutine, so a slow terminal never slows
// the reading of the command's output pipe (which would let the bounded drain of SPEC §3.7 cut the stream).
// At most max bytes wait in its queue; past that, writes are dropped and counted, and a marker in the live
// view says how many bytes it skipped. Write never blocks and never fails.
type AsyncWriter struct {
	w       io.Writer
	max     int
	mu      sync.Mutex
	wake    *sync.Cond
	queue   []byte
	spare   []byte
	dropped int64
	closed  bool
	done    chan struct{}
}

// NewAsyncWriter starts an AsyncWriter for w with a queue of at most max bytes.
func NewAsyncWriter(w io.Writer, max int) *AsyncWriter {
	a := &AsyncWriter{w: w, max: max, done: make(chan struct{})}
	a.wake = sync.NewCond(&a.mu)
	go a.loop()
	return a
}

// Write queues p, or drops it when the queue is full. It always reports len(p), nil.
func (a *AsyncWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
	case len(a.queue)+len(p) > a.max:
		a.dropped += int64(len(p))
	default:
		a.skipMarker()
		a.queue = append(a.queue, p...)
		a.wake.Signal()
	}
	return len(p), nil
}

// skipMarker queues the marker for dropped bytes, if any. Called with mu held.
func (a *AsyncWriter) skipMarker() {
	if a.dropped > 0 {
		a.queue = fmt.Appendf(a.queue, "\n… [live view skipped %d bytes; the result is complete] …\n", a.dropped)
		a.dropped = 0
	}
}

// Close writes what is queued and stops the goroutine; it returns when everything was written.
func (a *AsyncWriter) Close() error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		a.skipMarker()
		a.wake.Signal()
	}
	a.mu.Unlock()
	<-a.done
	return nil
}

func (a *AsyncWriter) loop() {
	defer close(a.done)
	failed := false
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && !a.closed {
			a.wake.Wait()
		}
		if len(a.queue) == 0 && a.closed {
			a.mu.Unlock()
			return
		}
		chunk := a.queue
		a.queue, a.spare = a.spare[:0], chunk
		a.mu.Unlock()
		if !failed {
			if _, err := a.w.Write(chunk); err != nil {
				failed = true // a closed terminal: keep consuming, write nothing
			}
		}
	}
}
