package screen

import "unicode/utf8"

// utf8Fix replaces the bytes of a stream that do not form UTF-8 with U+FFFD, as a terminal shows them, before
// the emulator sees them: x/vt v0.1.0 takes the bytes after a stray lead byte as its continuation, so a line
// end or a letter after one vanished from the screen. A sequence cut at the end of a write is held for the
// next (at most 3 bytes).
type utf8Fix struct {
	carry   [utf8.UTFMax]byte
	n       int    // bytes held in carry
	in, out []byte // reused between writes
}

// fix returns p with every byte that is not part of a UTF-8 sequence replaced by U+FFFD: p itself when
// nothing needs changing, else a buffer of f's, valid until the next call.
func (f *utf8Fix) fix(p []byte) []byte {
	if f.n == 0 && utf8.Valid(p) {
		return p
	}
	f.in = append(append(f.in[:0], f.carry[:f.n]...), p...)
	f.n = 0
	out := f.out[:0]
	for i := 0; i < len(f.in); {
		if c := f.in[i]; c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(f.in[i:])
		switch {
		case r != utf8.RuneError || size > 1:
			out = append(out, f.in[i:i+size]...)
			i += size
		case !utf8.FullRune(f.in[i:]): // a valid start, cut by the end of this write
			f.n = copy(f.carry[:], f.in[i:])
			i = len(f.in)
		default:
			out = append(out, "\uFFFD"...)
			i++
		}
	}
	f.out = out
	return out
}

// reset forgets a held sequence (the emulator started again).
func (f *utf8Fix) reset() { f.n = 0 }
