package screen

import (
	"unicode"
	"unicode/utf8"
)

// filter is what the stream goes through before the emulator sees it: the hazards of x/vt v0.1.0 that no
// real program needs are taken out, so a hostile command cannot cost the supervisor memory or its screen.
//   - Bytes that are not UTF-8 become U+FFFD, as a terminal shows them: x/vt took the bytes after a stray
//     lead byte (line ends included) as its continuation. A sequence cut at the end of a write is held for
//     the next (at most 3 bytes).
//   - String sequences (OSC, DCS, APC, PM, SOS) of more than maxString bytes, and every hyperlink (OSC 8),
//     are dropped: x/vt keeps a hyperlink per cell and splits an OSC on every ';' (4 MB of ';' took 206 MB),
//     and none of them changes the text on the screen. Short ones (a title, a colour query) pass whole.
//   - Past maxMarks combining marks on one character the rest are dropped: x/vt keeps them all per cell
//     (1900 per cell took 94 MB, and a screen text of 34 MB).
type filter struct {
	carry [utf8.UTFMax]byte
	n     int // bytes held in carry
	out   []byte

	state int    // stText, stEsc, stString, stStringEsc
	str   []byte // the string sequence so far: ESC, its introducer, its payload (up to maxString)
	long  bool   // the string is past maxString (or a hyperlink): it is dropped
	marks int    // combining marks on the current character
}

const (
	maxString = 256
	maxMarks  = 8
)

const (
	stText = iota
	stEsc
	stString
	stStringEsc
)

// fix returns p filtered: p itself when nothing needs changing (plain UTF-8 text without an escape
// sequence's string), else a buffer of f's, valid until the next call.
func (f *filter) fix(p []byte) []byte {
	if f.n == 0 && f.state == stText && plain(p) {
		f.marks = 0
		return p
	}
	in := p
	if f.n > 0 {
		in = append(f.carry[:f.n:f.n], p...)
		f.n = 0
	}
	out := f.out[:0]
	for i := 0; i < len(in); {
		c := in[i]
		switch f.state {
		case stEsc:
			f.state = stText
			switch c {
			case ']', 'P', '_', '^', 'X':
				f.state, f.str, f.long = stString, append(f.str[:0], 0x1b, c), false
				i++
				continue
			}
			out = append(out, 0x1b) // not a string: ESC and this byte go on as they are
			continue
		case stString, stStringEsc:
			i++
			if f.state == stStringEsc {
				f.state = stString
				if c == '\\' { // ST
					out = f.endString(out, "\x1b\\")
					continue
				}
				f.state = stText // an ESC ends the string (ECMA-48) and starts what follows
				out = f.endString(out, "\x1b\\")
				f.state = stEsc
				i--
				continue
			}
			switch {
			case c == 0x07 && f.str[1] == ']': // BEL ends an OSC
				out = f.endString(out, "\x07")
			case c == 0x1b:
				f.state = stStringEsc
			case c == 0x18 || c == 0x1a: // CAN, SUB: the string is abandoned
				f.state = stText
			default:
				if len(f.str) < 2+maxString {
					f.str = append(f.str, c)
				} else {
					f.long = true
				}
			}
			continue
		}
		if c == 0x1b {
			f.state, f.marks = stEsc, 0
			i++
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			f.marks = 0
			i++
			continue
		}
		r, size := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && size <= 1 && !utf8.FullRune(in[i:]): // a valid start, cut by the end
			f.n = copy(f.carry[:], in[i:])
			i = len(in)
		case r == utf8.RuneError && size <= 1:
			out = append(out, "\uFFFD"...)
			f.marks = 0
			i++
		case unicode.In(r, unicode.Mn, unicode.Me):
			if f.marks++; f.marks <= maxMarks {
				out = append(out, in[i:i+size]...)
			}
			i += size
		default:
			out = append(out, in[i:i+size]...)
			f.marks = 0
			i += size
		}
	}
	f.out = out
	return out
}

// endString ends the string sequence being read with its terminator term: out gets it whole, unless it is
// dropped (too long, or a hyperlink).
func (f *filter) endString(out []byte, term string) []byte {
	f.state = stText
	payload := f.str[2:]
	if f.long || f.str[1] == ']' && len(payload) >= 2 && payload[0] == '8' && payload[1] == ';' {
		return out
	}
	return append(append(out, f.str...), term...)
}

// reset forgets what was held (the emulator started again).
func (f *filter) reset() { *f = filter{out: f.out, str: f.str[:0]} }

// plain reports whether p is UTF-8 without ESC and without combining marks (the common case, passed as
// it is).
func plain(p []byte) bool {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c == 0x1b {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 || unicode.In(r, unicode.Mn, unicode.Me) {
			return false
		}
		i += size
	}
	return true
}
