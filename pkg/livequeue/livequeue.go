// Package livequeue passes live output on to a writer that may be slow (a terminal, a client's socket)
// without ever blocking the one who writes: a bounded queue that drops the oldest lines when full.
package livequeue

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// Writer passes writes to an underlying writer from its own goroutine, so a slow terminal or client never
// slows the reading of the command's output pipe (which would let the bounded drain of SPEC §3.7 cut the
// stream). At most max bytes wait in its queue; past that, the oldest queued lines are dropped — the newest
// output matters most — and a marker in the live view says how many bytes it skipped.
// Write never blocks and never fails.
type Writer struct {
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

// New starts a Writer for w with a queue of at most max bytes.
func New(w io.Writer, max int) *Writer {
	a := &Writer{w: w, max: max, done: make(chan struct{})}
	a.wake = sync.NewCond(&a.mu)
	go a.loop()
	return a
}

// Write queues p, or drops it when the queue is full. It always reports len(p), nil.
func (a *Writer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return len(p), nil
	}
	a.queue = append(a.queue, p...)
	if over := len(a.queue) - a.max; over > 0 {
		cut := over
		if i := bytes.IndexByte(a.queue[cut:], '\n'); i >= 0 {
			cut += i + 1 // resume at a line start
		}
		a.dropped += int64(cut)
		a.queue = a.queue[cut:]
	}
	a.wake.Signal()
	return len(p), nil
}

// Close writes what is queued and stops the goroutine; it returns when everything was written.
func (a *Writer) Close() error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		a.wake.Signal()
	}
	a.mu.Unlock()
	<-a.done
	return nil
}

func (a *Writer) loop() {
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
		dropped := a.dropped
		a.dropped = 0
		a.mu.Unlock()
		if dropped > 0 && !failed {
			_, err := fmt.Fprintf(a.w, "\n… [live view skipped %d bytes; the result is complete] …\n", dropped)
			failed = err != nil
		}
		if !failed {
			if _, err := a.w.Write(chunk); err != nil {
				failed = true // a closed terminal: keep consuming, write nothing
			}
		}
	}
}
