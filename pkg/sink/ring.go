package sink

// ring keeps the last size bytes of a byte stream. Positions are logical offsets in the stream
// (int64, never wrapped); the bytes of positions [lo, w) are held at buf[pos % len(buf)]. The stream
// can be shortened at its end (retract), which is how a CR discards a run that is still held. buf
// starts small and doubles up to size while the stream is shorter than it, so a short output does
// not pay for a large window.
type ring struct {
	buf  []byte
	size int64
	w    int64 // stream length: position of the next byte
	lo   int64 // first position still held
}

func newRing(size int) ring { return ring{size: int64(size)} }

// write appends b to the stream. O(len(b)) with at most two copies; never allocates.
func (r *ring) write(b []byte) {
	if need := r.w + int64(len(b)); need > int64(len(r.buf)) && int64(len(r.buf)) < r.size {
		r.grow(need)
	}
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

// grow enlarges buf towards size to hold need bytes. Nothing has wrapped yet (w <= len(buf)), so
// positions keep their indices.
func (r *ring) grow(need int64) {
	n := min(r.size, max(need, 2*int64(len(r.buf)), 4096))
	buf := make([]byte, n)
	copy(buf, r.buf[:r.w])
	r.buf = buf
}

// retract removes the last n bytes of the stream (n <= w-lo).
func (r *ring) retract(n int64) { r.w -= n }

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

// prefix keeps the first size bytes of a byte stream that, like the one a ring keeps, can be shortened
// at its end (a CR discard). Positions are offsets in the stream, held at buf[pos] while pos < size, so
// bytes written after a retract simply overwrite the ones it removed. buf grows like a ring's.
type prefix struct {
	buf  []byte
	size int64
	w    int64 // stream length
}

func newPrefix(size int) prefix { return prefix{size: int64(size)} }

// write appends b to the stream, keeping what falls within the first size bytes. Never allocates once
// buf has reached size.
func (p *prefix) write(b []byte) {
	if p.w < p.size {
		need := min(p.w+int64(len(b)), p.size)
		if need > int64(len(p.buf)) {
			buf := make([]byte, min(p.size, max(need, 2*int64(len(p.buf)), 4096)))
			copy(buf, p.buf[:p.w])
			p.buf = buf
		}
		copy(p.buf[p.w:need], b)
	}
	p.w += int64(len(b))
}

// retract removes the last n bytes of the stream (n <= w).
func (p *prefix) retract(n int64) { p.w -= n }

// bytes returns the first min(w, size) bytes of the stream; the slice is only valid until the next write.
func (p *prefix) bytes() []byte { return p.buf[:min(p.w, p.size)] }
