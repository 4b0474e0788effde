package sink

import (
	"io"
	"os"
)

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

// artWriter writes the artifact file in the sink's own Write, from the caller's buffer: no copy, and no
// goroutine to hand the bytes to. (A goroutine behind a 1 MiB queue, so the file system's time overlapped
// the scan, cost more than it saved once the output pipe is read in large pieces: a copy of every byte
// and two thread hand-overs per read. The supervisor's CPU per GB of plain text went from 1.19 to 0.97 s
// without it, of coloured text, where the sink is what the command waits for, from 2.14 to 1.99 s.) A
// write error is sticky: Write and Close return it. Not safe for concurrent use (the sink serializes it).
type artWriter struct {
	w io.WriteCloser

	// Preallocation (see preallocFrom): file is w when it is an *os.File.
	file               *os.File
	limit              int64 // the most the artifact holds (its cap); reservations stop there
	written, allocated int64
	retryAt            int64 // no reservation is tried again before the file reaches this size

	err error // the first error of a file write
}

// newArtWriter writes to w, at most limit bytes and a little more (the sink's cap and its marker).
func newArtWriter(w io.WriteCloser, limit int64) *artWriter {
	a := &artWriter{w: w, limit: limit}
	a.file, _ = w.(*os.File)
	return a
}

func (a *artWriter) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	a.reserve(int64(len(p)))
	n, err := a.w.Write(p)
	a.written += int64(n)
	a.err = err
	return n, err
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

// Close closes the file. writeErr is the first error of a file write, closeErr that of the close.
func (a *artWriter) Close() (writeErr, closeErr error) {
	writeErr = a.err
	if a.allocated > a.written {
		// Blocks reserved past the end are the file system's again (a truncation to the size it has).
		if err := a.file.Truncate(a.written); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	return writeErr, a.w.Close()
}
