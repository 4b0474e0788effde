package sink

import (
	"io"
	"os"
	"sync"
)

// artQueueBytes is the size of the queue between the sink and the goroutine that writes its artifact.
const artQueueBytes = 1 << 20

// An artifact file that has grown past preallocFrom gets its blocks reserved ahead of the writes, a
// quarter of its size at a time (preallocMin to preallocMax), never past its cap; what is reserved but
// not written is handed back when it is closed. On ext4 a write into reserved blocks costs a tenth of
// the CPU of one that must allocate them as it goes (delayed allocation: 0.1 s against 0.2–2.7 s per
// GB, measured with dd on the development machine), which was a third of what a large output cost.
//
// A reservation is made only while it is at most 1/preallocShare of the space the file system has
// available: reserved blocks are taken from everyone else until they are written or handed back, and the
// command itself may need them (on a nearly full disk, a command that wrote a file next to its artifact
// after its output ran out of space where it had not without the reservation).
const (
	preallocFrom  = 4 << 20
	preallocMin   = 8 << 20
	preallocMax   = 64 << 20
	preallocShare = 16
)

// artWriter writes to the artifact file from a goroutine of its own, so that the file system's time
// overlaps the sanitizer's instead of adding to it: Write copies into a queue of artQueueBytes (a ring)
// and returns, blocking only while the queue is full; the goroutine writes what is queued in pieces as
// large as the queue holds, as soon as it is there. A write error is sticky: Write and Close return it
// (Write from the call after the failed file write on). Close waits for the queue to be written, then
// closes the file. Not safe for concurrent Writes (the sink serializes them).
type artWriter struct {
	w io.WriteCloser

	// Preallocation (see preallocFrom), by the goroutine only: file is w when it is an *os.File.
	file               *os.File
	limit              int64 // the most the artifact holds (its cap); reservations stop there
	written, allocated int64
	retryAt            int64 // no reservation is tried again before the file reaches this size

	mu      sync.Mutex
	cond    sync.Cond // signalled when data is queued, room is made, or the writer ends
	buf     []byte
	r, n    int // queued data: n bytes from buf[r] on, wrapping
	closing bool
	ended   bool  // the goroutine returned
	err     error // the first error of a file write
}

// newArtWriter writes to w, at most limit bytes and a little more (the sink's cap and its marker).
func newArtWriter(w io.WriteCloser, limit int64) *artWriter {
	a := &artWriter{w: w, buf: make([]byte, artQueueBytes), limit: limit}
	a.file, _ = w.(*os.File)
	a.cond.L = &a.mu
	go a.loop()
	return a
}

func (a *artWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	total := len(p)
	for len(p) > 0 {
		for a.n == len(a.buf) && a.err == nil {
			a.cond.Wait()
		}
		if a.err != nil {
			return 0, a.err
		}
		w := (a.r + a.n) % len(a.buf)
		end := len(a.buf)
		if w < a.r {
			end = a.r
		}
		k := copy(a.buf[w:end], p)
		a.n += k
		p = p[k:]
		a.cond.Broadcast()
	}
	return total, a.err
}

// loop writes what is queued until Close, then returns.
func (a *artWriter) loop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for a.n == 0 && !a.closing {
			a.cond.Wait()
		}
		if a.n == 0 || a.err != nil {
			a.ended = true
			a.cond.Broadcast()
			return
		}
		k := min(a.n, len(a.buf)-a.r) // the contiguous part; Write only fills the room outside it
		piece := a.buf[a.r : a.r+k]
		a.mu.Unlock()
		a.reserve(int64(k))
		n, err := a.w.Write(piece)
		a.written += int64(n)
		a.mu.Lock()
		if err != nil {
			a.err = err
			a.n = 0
		} else {
			a.r = (a.r + k) % len(a.buf)
			a.n -= k
		}
		a.cond.Broadcast()
	}
}

// reserve preallocates ahead of a write of n bytes (see preallocFrom).
func (a *artWriter) reserve(n int64) {
	end := a.written + n
	if a.file == nil || end <= a.allocated || end <= a.retryAt || a.written < preallocFrom || a.allocated < 0 {
		return
	}
	step := min(max(a.written/4, preallocMin), preallocMax)
	to := min(end+step, max(a.limit, end))
	if to <= a.allocated {
		return
	}
	from := max(a.allocated, a.written)
	avail, ok := availableBytes(a.file)
	if !ok {
		a.allocated = -1 // not again
		return
	}
	if avail/preallocShare < to-from {
		a.retryAt = end + step // too large a share of what is left: look again a step later
		return
	}
	if !preallocate(a.file, from, to-from) {
		a.allocated = -1 // not again
		return
	}
	a.allocated = to
}

// Close writes what is queued and closes the file. writeErr is the first error of a file write, closeErr
// that of the close.
func (a *artWriter) Close() (writeErr, closeErr error) {
	a.mu.Lock()
	a.closing = true
	a.cond.Broadcast()
	for !a.ended {
		a.cond.Wait()
	}
	writeErr = a.err
	a.buf = nil
	a.mu.Unlock()
	if a.allocated > a.written {
		// Blocks reserved past the end are the file system's again (a truncation to the size it has).
		if err := a.file.Truncate(a.written); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	return writeErr, a.w.Close()
}
