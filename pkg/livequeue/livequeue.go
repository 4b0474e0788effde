// Package livequeue passes live output on to a writer that may be slow (a terminal, a client's socket)
// without ever blocking the one who writes: a bounded queue that drops the oldest lines when full.
package livequeue

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// Writer passes writes to an underlying writer from its own goroutine, so a slow terminal or client never
// slows the reading of the command's output pipe (which would let the bounded drain of reference §3.7 cut the
// stream). At most max bytes wait in its queue; past that, the oldest queued lines are dropped — the newest
// output matters most — and a marker in the live view says how many bytes it skipped ([SkippedText]); an
// underlying writer that is a [Counted] is told the skip instead, with the counts given to WriteCounted.
// Write never blocks and never fails.
type Writer struct {
	w       io.Writer
	max     int
	mu      sync.Mutex
	wake    *sync.Cond
	queue   []byte
	spare   []byte
	dropped int64
	counts  [2]int64 // the counts given with the newest write (WriteCounted)
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

// Counted is an underlying writer that takes each chunk of the queue with the counts given with its last
// write ([Writer.WriteCounted]) and the bytes the queue dropped just before it (so the chunk does not
// continue what came before), instead of a marker in the text.
type Counted interface {
	WriteCounted(text []byte, skipped, totalBytes, totalLines int64) error
}

// Write queues p, or drops it when the queue is full. It always reports len(p), nil.
func (a *Writer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.put(p)
	return len(p), nil
}

// WriteCounted is Write with the counts at p's end (the sink's counts of the whole stream), which a
// [Counted] underlying writer gets with the chunk that ends with p.
func (a *Writer) WriteCounted(p []byte, totalBytes, totalLines int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts = [2]int64{totalBytes, totalLines}
	a.put(p)
}

func (a *Writer) put(p []byte) {
	if a.closed {
		return
	}
	a.queue = append(a.queue, p...)
	if over := len(a.queue) - a.max; over > 0 {
		cut := over
		if i := bytes.IndexByte(a.queue[cut:], '\n'); i >= 0 {
			cut += i + 1 // resume at a line start
		} else {
			for cut < len(a.queue) && !utf8.RuneStart(a.queue[cut]) {
				cut++ // else at a character's start
			}
		}
		a.dropped += int64(cut)
		a.queue = a.queue[cut:]
	}
	a.wake.Signal()
}

// SkippedText is the marker line a Writer puts in the live view where it dropped n bytes.
func SkippedText(n int64) string {
	return fmt.Sprintf("\n… [live view skipped %d bytes; the result is complete] …\n", n)
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
		dropped, counts := a.dropped, a.counts
		a.dropped = 0
		a.mu.Unlock()
		if cw, ok := a.w.(Counted); ok {
			failed = failed || cw.WriteCounted(chunk, dropped, counts[0], counts[1]) != nil
			continue
		}
		if dropped > 0 && !failed {
			_, err := io.WriteString(a.w, SkippedText(dropped))
			failed = err != nil
		}
		if !failed {
			if _, err := a.w.Write(chunk); err != nil {
				failed = true // a closed terminal: keep consuming, write nothing
			}
		}
	}
}
