package sink

// ring keeps the last len(buf) bytes of a byte stream. Positions are logical offsets in the stream
// (int64, never wrapped); the bytes of positions [lo, w) are held. The stream can be shortened at
// its end (retract), which is how a CR discards a run that is still held.
type ring struct {
	buf []byte
	w   int64 // stream length: position of the next byte
	lo  int64 // first position still held
}

func newRing(size int) ring { return ring{buf: make([]byte, size)} }

// write appends b to the stream. O(len(b)) with at most two copies; never allocates.
func (r *ring) write(b []byte) {
	c := int64(len(r.buf))
	if int64(len(b)) > c {
		r.w += int64(len(b)) - c
		b = b[int64(len(b))-c:]
	}
	off := r.w % c
	n := copy(r.buf[off:], b)
	copy(r.buf, b[n:])
	r.w += int64(len(b))
	r.lo = max(r.lo, r.w-c)
}

// retract removes the last n bytes of the stream (n <= w-lo).
func (r *ring) retract(n int64) { r.w -= n }

// at returns the byte at position q (lo <= q < w).
func (r *ring) at(q int64) byte { return r.buf[q%int64(len(r.buf))] }

// slice returns a new copy of the bytes at positions [from, to) (lo <= from <= to <= w).
func (r *ring) slice(from, to int64) []byte {
	out := make([]byte, to-from)
	if len(out) == 0 {
		return out
	}
	c := int64(len(r.buf))
	a, b := from%c, to%c
	if a < b {
		copy(out, r.buf[a:b])
	} else {
		n := copy(out, r.buf[a:])
		copy(out[n:], r.buf[:b])
	}
	return out
}
