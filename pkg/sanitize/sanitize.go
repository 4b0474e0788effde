// Package sanitize turns a command's raw output bytes into the text the model is shown (reference §3.8), as a
// stream with bounded memory: valid UTF-8 (U+FFFD for invalid bytes), escape sequences removed, CRLF → LF,
// a bare CR discarding the run it overwrites, other controls removed.
//
// Two forms, the same rules: [State] is the state machine that the sink (pkg/sink) embeds and drives,
// receiving the text through an [Emitter] without allocating; [NewWriter] is a streaming io.Writer filter,
// used to print an artifact's text (`agentbash artifact ID`): the text whose lines the truncation notice
// counts.
//
// The rules (all state carries across writes):
//   - UTF-8 is decoded incrementally; each maximal invalid subpart becomes one U+FFFD (as the WHATWG
//     decoder and Python do).
//   - Complete escape sequences are removed: CSI (ESC [ … final 0x40–0x7E), OSC (ESC ] … BEL or ST),
//     DCS/SOS/PM/APC (ESC P/X/^/_ … ST, BEL accepted too), ESC + intermediates + final, and two-byte
//     ESC x. A sequence cut by an invalid byte (a C0 control inside it, for example), longer than
//     [MaxEscapeBytes], or unterminated at the end is not removed: its ESC is dropped and the rest is
//     text again. 8-bit C1 introducers are not interpreted (in UTF-8 they are U+0080–U+009F, removed
//     as controls).
//   - CRLF → LF. A bare CR followed by text discards the text before it on its line (since the line
//     start or the previous CR; a run longer than [MaxOverwriteBytes] is kept), so only the final
//     state of a progress bar stays. A CR followed by a newline, or at the end, discards nothing.
//     (Applying the discard only when text follows keeps "100%\r" at the end of a stream.)
//   - Backspace is applied within the line as a terminal applies it: BS moves the cursor back one
//     character and the next character (tab included) overwrites the one there, the characters after it
//     staying ("ab\bc" → "ac", "N\bNA\bA" → "NA", "|\b/\b-\bdone" → "done", "ab\b\n" → "ab"). A BS at
//     the line start (or after a CR that is still pending) does nothing, and so does one in a line whose
//     run (since the line start or the last CR) is longer than [MaxBackspaceBytes] or followed a CR that
//     kept a run longer than [MaxOverwriteBytes]. A CR or a newline puts the cursor back at the end.
//   - Other C0 controls (NUL included), DEL and C1 controls are removed; tab and newline stay. Binary
//     detection (a NUL byte) is the sink's job.
package sanitize

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"unicode/utf8"
)

// Bounds of the sanitizer. Both are part of what "the sanitized text" means, so the sink and
// [NewWriter] (used by `agentbash artifact ID`) produce the same text for the same raw bytes.
const (
	// MaxEscapeBytes bounds an escape sequence, ESC and terminator included. A sequence that is not
	// complete within it (or is cut by an invalid byte, or by the end of the stream) is not removed: its
	// ESC is dropped and the bytes after it are text again.
	MaxEscapeBytes = 4096

	// MaxOverwriteBytes bounds what a bare CR can discard. A CR followed by text discards the text of
	// the current line back to the line start (or back to the previous CR) when that text is at most
	// MaxOverwriteBytes long; a longer run is kept and the CR dropped. The bound keeps
	// [NewWriter] streaming with bounded memory: it holds at most this much of a line.
	MaxOverwriteBytes = 64 << 10

	// MaxBackspaceBytes bounds the line a backspace acts in: the state machine holds the current run of
	// the line (since the line start or the last CR) while it is at most this long, and a BS moves back
	// only within such a run (else it is removed, as before). An overwrite is passed on as a CR discard of
	// the run and the run's new text, so it costs at most this much.
	MaxBackspaceBytes = 1 << 10
)

// ErrClosed is returned by a [NewWriter] writer's Write after Close.
var ErrClosed = errors.New("sanitize: write after close")

// Machine states.
const (
	stGround   uint8 = iota
	stEsc            // after ESC
	stEscInter       // ESC + intermediate bytes 0x20–0x2F
	stCSI            // ESC [
	stStr            // ESC ] / ESC P / ESC X / ESC ^ / ESC _: a control string
	stStrEsc         // ESC inside a control string: ST (ESC \) or an abort
)

// plain marks the ASCII bytes that pass through unchanged: printable characters, tab and newline.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// replacementChar is handed to emitters (package-level so that passing it never allocates).
var replacementChar = []byte("\uFFFD")

// Emitter receives the sanitized text of a [State]. Slices passed to it are only valid during the call.
type Emitter interface {
	// Text receives sanitized text; lastNL is the index of the last '\n' in b, or -1.
	Text(b []byte, lastNL int)
	// CR reports a bare CR followed by text. n >= 0: the last n bytes emitted (the current run since
	// the line start or the previous CR) are discarded. n < 0: that run was longer than
	// MaxOverwriteBytes and is kept. Either way a new run starts.
	CR(n int)
}

// State is the byte-level state machine of reference §3.8 (the rules in the package comment): it takes raw
// bytes ([State.Write]) and passes the sanitized text to its [Emitter]. All state carries across Write
// calls; nothing allocates. The zero value is not ready: call [State.Init] first. It is meant to be
// embedded by value (it holds a MaxEscapeBytes buffer) and is not safe for concurrent use.
type State struct {
	out Emitter

	// Bounds: MaxEscapeBytes and MaxOverwriteBytes (smaller in tests, to reach them with small inputs).
	escMax, owMax int

	state     uint8
	crPending bool // a CR was seen and no text has followed yet
	run       int  // bytes emitted since the last '\n' or CR event

	// Backspace: the cursor is back characters before the run's end (0: at its end). line holds the
	// run's text passed to the Emitter (nline bytes; the batch holds the rest), while it is at most
	// bsMax bytes long (min(MaxBackspaceBytes, owMax)); nline > bsMax: the run is not held. kept: a CR
	// kept a run longer than owMax on this line, so the run is not the whole line.
	back, nline, bsMax int
	kept               bool
	line               [MaxBackspaceBytes + utf8.UTFMax - 1]byte

	// UTF-8 decoder: need more continuation bytes, the next within [lower, upper].
	need         int
	lower, upper byte
	npend        int
	pend         [utf8.UTFMax]byte

	// Escape sequence: seqN bytes so far (ESC included); seq holds the bytes after the ESC that turn
	// back into text if the sequence is aborted.
	seqN, seqLen int
	seq          [MaxEscapeBytes]byte

	// Batch: small pieces of text (between escape sequences and CRs) gathered into one Emitter.Text call,
	// passed on when it is full and at the end of each Write; batchNL is the index of its last '\n', or -1.
	// A CR that discards a run held in the batch only shortens it.
	nbatch, batchNL int
	batch           [batchBytes]byte
}

// The batch: its size, and the size from which a piece of text is passed on by itself (no copy).
const (
	batchBytes  = 4 << 10
	directBytes = 256
)

// Init readies z to pass its text to out, with the bounds [MaxEscapeBytes] and [MaxOverwriteBytes], or
// smaller ones where escMax or owMax is > 0 and below them (tests reach the bounds with small inputs).
func (z *State) Init(out Emitter, escMax, owMax int) {
	*z = State{out: out, escMax: MaxEscapeBytes, owMax: MaxOverwriteBytes, batchNL: -1}
	if escMax > 0 && escMax < MaxEscapeBytes {
		z.escMax = escMax
	}
	if owMax > 0 && owMax < MaxOverwriteBytes {
		z.owMax = owMax
	}
	z.bsMax = min(MaxBackspaceBytes, z.owMax)
}

// Write sanitizes p.
func (z *State) Write(p []byte) {
	for i := 0; i < len(p); {
		if z.state != stGround {
			i += z.escape(p[i:])
			continue
		}
		if z.need > 0 {
			c := p[i]
			if c < z.lower || c > z.upper {
				z.invalid() // c is looked at again as the start of something new
				continue
			}
			i++
			z.pend[z.npend] = c
			z.npend++
			z.need--
			z.lower, z.upper = 0x80, 0xbf
			if z.need == 0 {
				n := z.npend
				z.npend = 0
				if n == 2 && z.pend[0] == 0xc2 && z.pend[1] < 0xa0 {
					continue // C1 control U+0080–U+009F
				}
				z.emit(z.pend[:n])
			}
			continue
		}
		if z.back > 0 {
			// Characters overwrite: one at a time, until the cursor is back at the run's end.
			if i += z.overwrite(p[i:]); z.back == 0 || i == len(p) {
				continue
			}
		} else if i = z.ground(p, i); i == len(p) {
			break
		}
		c := p[i] // a byte >= 0x80, a BS, or an ESC that does not start a whole CSI sequence in p
		if c >= utf8.RuneSelf {
			// The longest run of bytes that pass unchanged.
			if j := i + plainRun(p[i:]); j > i {
				z.emit(p[i:j])
				i = j
				continue
			}
		}
		i++
		switch {
		case c == '\r':
			z.crPending = true
		case c == 0x1b:
			if n := z.csi(p[i:]); n > 0 {
				i += n // a whole CSI sequence in p: skipped at once
				continue
			}
			z.state, z.seqN, z.seqLen = stEsc, 1, 0
		case c == '\b':
			z.backspace()
		case c < utf8.RuneSelf:
			// other C0 control or DEL: removed
		default:
			z.lead(c)
		}
	}
	z.flush()
}

// ground is Write's loop for the bytes of the ground state, from p[i] on (z.state is stGround and no
// character is incomplete): text is copied into the batch eight bytes at a time, a CR is marked pending,
// other controls and DEL are removed, a whole CSI sequence in p is skipped, and text with other
// characters is passed on as Write would (plainRun, emit), mostly without a call per piece. It returns
// the index of the first byte it leaves to Write (an invalid or incomplete character or a C1 control, or
// any byte >= 0x80 among the last bytes, which groundTail takes; an ESC that does not start a whole CSI
// sequence in p) or len(p). The result is the same as taking the bytes one at a time; only the pieces
// the Emitter receives may be cut differently.
//
// p is taken in blocks of 64 bytes. The mask of a block's events (every byte that is not printable
// ASCII or tab, newlines included) is made first, from eight independent words, and the events are then
// taken in order from the mask: where the next event is does not wait on the work of the last one (the
// loop is no chain of dependent loads, so the processor overlaps the events' work). The text between two
// events is copied as whole words (the bytes after it are overwritten later; it may read up to 15 bytes
// past the block, which the loop leaves in p); the end of a CSI sequence is found in the word after its
// '['. A run of text of directBytes or more is passed on by itself (emit), after what the batch holds,
// so long runs keep plainRun's speed. The last bytes of p, fewer than a block and that margin, are
// groundTail's.
func (z *State) ground(p []byte, i int) int {
	// The batch's length, the run and the pending CR are kept in locals while the loop runs, and stored
	// back around every call that looks at them (flush, crText, emit) and at the end; the batch's last
	// newline (z.batchNL) is not (fewer locals than registers).
	nb, run, crPending := z.nbatch, z.run, z.crPending
	piece := 0 // bytes of text since the last event other than a newline (newlines not counted)
	for i+blockBytes+16 <= len(p) {
		q := p[i : i+blockBytes+16 : i+blockBytes+16]
		ev := eventMask(q)
		pos := 0 // the start of the text not yet taken, in q
		for {
			e := bits.TrailingZeros64(ev) // the next event; 64 (the block's end) when none is left
			if e > pos {
				// The text q[pos:e], without a newline. A pending CR before it discards the run, as
				// crText does; the common case (the run is in the batch) here.
				if crPending {
					crPending = false
					if run <= nb && run <= z.owMax {
						nb, run = nb-run, 0 // the run has no newline, so it lies after batchNL
						z.nline = 0
					} else {
						z.nbatch, z.run = nb, run
						z.crText(q[pos])
						nb, run = z.nbatch, z.run
					}
				}
				if nb > batchBytes-blockBytes-8 {
					z.nbatch = nb
					z.flush()
					nb = 0
				}
				// Sixteen bytes at once (most pieces are shorter), then eight at a time.
				b := z.batch[nb : nb+blockBytes+8 : nb+blockBytes+8]
				binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(q[pos:]))
				binary.LittleEndian.PutUint64(b[8:], binary.LittleEndian.Uint64(q[pos+8:]))
				for o := 16; o < e-pos; o += 8 {
					binary.LittleEndian.PutUint64(b[o:], binary.LittleEndian.Uint64(q[pos+o:]))
				}
				nb, run, piece = nb+e-pos, run+e-pos, piece+e-pos
			}
			if e == blockBytes {
				break
			}
			ev &= ev - 1
			pos = e + 1
			switch c := q[e]; {
			case c == '\n':
				crPending = false // CRLF → LF
				if nb > batchBytes-blockBytes-8 {
					z.nbatch = nb
					z.flush()
					nb = 0
				}
				z.batch[nb] = '\n'
				z.batchNL, nb, run = nb, nb+1, 0
			case c == 0x1b:
				// A CSI sequence: '[', then the first byte that is not a parameter or intermediate
				// byte (0x20–0x3F) must be a final byte. The word after the '[' shows where it is when
				// it holds it; else csi reads on. n: the sequence's bytes after the ESC.
				n := 0
				if q[e+1] == '[' {
					w := binary.LittleEndian.Uint64(q[e+2:])
					// Zero in the lanes 0x20–0x3F; the others have a bit among their top three set.
					if other := w&(0xe0*lanes1) ^ 0x20*lanes1; other != 0 {
						f := bits.TrailingZeros64(other) >> 3 // parameter bytes
						if c := byte(w >> (f << 3)); c >= 0x40 && c <= 0x7e && f+3 <= z.escMax {
							n = f + 2
						}
					} else {
						n = z.csi(p[i+e+1:])
					}
				}
				if n == 0 {
					goto leave
				}
				// The sequence's bytes after the ESC are no events (parameter, intermediate and final
				// bytes are printable ASCII), so ev holds none before its end, which may be past the block.
				pos, piece = e+1+n, 0
			case c == '\r':
				crPending, piece = true, 0
			case c >= utf8.RuneSelf:
				// Text with other characters: the longest run that passes unchanged, passed on as Write
				// would (emit), so the block goes on after it. Its bytes that are events are characters'
				// bytes and newlines, which emit took.
				k := plainRun(p[i+e:])
				z.nbatch, z.run, z.crPending = nb, run, crPending
				if k == 0 {
					return i + e // an invalid or incomplete character, or a C1 control: Write's
				}
				z.emit(p[i+e : i+e+k])
				nb, run, crPending = z.nbatch, z.run, false
				pos, piece = e+k, 0
				ev &^= 1<<pos - 1 // all of it when pos >= 64
			case c == '\b':
				goto leave // Write's
			default:
				piece = 0 // another C0 control or DEL: removed
			}
			continue
		leave: // the event at e is Write's
			z.nbatch, z.run, z.crPending = nb, run, crPending
			return i + e
		}
		i += max(pos, blockBytes)
		if piece >= directBytes {
			// A long run of text: passed on by itself, uncopied, after what the batch holds.
			z.nbatch, z.run, z.crPending = nb, run, false
			z.flush()
			j := i + plainRun(p[i:])
			z.emit(p[i:j])
			i, nb, run, piece = j, z.nbatch, z.run, 0
		}
	}
	z.nbatch, z.run, z.crPending = nb, run, crPending
	return z.groundTail(p, i)
}

// groundTail is ground for the last bytes of p (fewer than blockBytes+16): eight at a time, a piece of
// text and the event after it for each word (the word's SWAR mask says where the piece ends and where its
// newlines are), then one at a time. Unlike the blocks it leaves every byte >= 0x80 to Write.
func (z *State) groundTail(p []byte, i int) int {
	nb, nl, run, crPending := z.nbatch, z.batchNL, z.run, z.crPending
	for i+8 <= len(p) {
		w := binary.LittleEndian.Uint64(p[i:])
		m, nls := attentionNL(w)
		k := bits.TrailingZeros64(m) >> 3 // 8 when m == 0
		if k > 0 {
			// A piece of text: w's first k bytes. A pending CR before it is resolved first, as crText
			// does; the common case (the run it discards is in the batch) here.
			if crPending {
				crPending = false
				if c := byte(w); c != '\n' {
					if run <= nb && run <= z.owMax {
						nb, run = nb-run, 0 // the run has no newline, so it lies after batchNL
						z.nline = 0
					} else {
						z.nbatch, z.batchNL, z.run = nb, nl, run
						z.crText(c)
						nb, nl, run = z.nbatch, z.batchNL, z.run
					}
				}
			}
			if nb > batchBytes-8 {
				z.nbatch, z.batchNL = nb, nl
				z.flush()
				nb, nl = 0, -1
			}
			binary.LittleEndian.PutUint64(z.batch[nb:], w)
			if nls &= m&-m - 1; nls != 0 { // the newlines before the first byte that is not plain ASCII
				last := (63 - bits.LeadingZeros64(nls)) >> 3
				nl, run = nb+last, k-last-1
			} else {
				run += k
			}
			i, nb = i+k, nb+k
			if m == 0 {
				continue
			}
		}
		switch c := byte(w >> (k << 3)); { // the byte of the first marked lane: p[i]
		case c == 0x1b:
			n := z.csi(p[i+1:])
			if n == 0 {
				z.nbatch, z.batchNL, z.run, z.crPending = nb, nl, run, crPending
				return i
			}
			i += 1 + n
		case c == '\r':
			crPending = true
			i++
		case c >= utf8.RuneSelf || c == '\b':
			z.nbatch, z.batchNL, z.run, z.crPending = nb, nl, run, crPending
			return i
		default:
			i++ // another C0 control or DEL: removed
		}
	}
	// Fewer than eight bytes left: one at a time.
	for i < len(p) {
		c := p[i]
		switch {
		case c >= utf8.RuneSelf || c == '\b':
			z.nbatch, z.batchNL, z.run, z.crPending = nb, nl, run, crPending
			return i
		case c == 0x1b:
			n := z.csi(p[i+1:])
			if n == 0 {
				z.nbatch, z.batchNL, z.run, z.crPending = nb, nl, run, crPending
				return i
			}
			i += 1 + n
			continue
		case c == '\r':
			crPending = true
			i++
			continue
		case !plain[c]:
			i++ // another C0 control or DEL: removed
			continue
		}
		if crPending {
			crPending = false
			if c != '\n' {
				z.nbatch, z.batchNL, z.run = nb, nl, run
				z.crText(c)
				nb, nl, run = z.nbatch, z.batchNL, z.run
			}
		}
		if nb == batchBytes {
			z.nbatch, z.batchNL = nb, nl
			z.flush()
			nb, nl = 0, -1
		}
		if c == '\n' {
			nl, run = nb, -1
		}
		z.batch[nb] = c
		i, nb, run = i+1, nb+1, run+1
	}
	z.nbatch, z.batchNL, z.run, z.crPending = nb, nl, run, crPending
	return i
}

// Masks of a byte in each lane of a 64-bit word.
const (
	lanes1  = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// plainRun returns the length of the longest prefix of p that passes unchanged: printable ASCII, tab,
// newline and valid characters from U+00A0 up. A long stretch of ASCII is looked at by plainASCII.
func plainRun(p []byte) int {
	j, ascii := 0, 8 // ascii: plain ASCII bytes in a row, or 8 to look at what follows at once
	for j < len(p) {
		if ascii == 8 {
			ascii = 0
			if j += plainASCII(p[j:]); j == len(p) {
				break
			}
			if p[j] < utf8.RuneSelf {
				return j // a control, DEL, ESC or CR
			}
			goto other
		}
		if c := p[j]; c < utf8.RuneSelf {
			if !plain[c] {
				return j
			}
			j++
			ascii++
			continue
		}
	other:
		ascii = 0 // after other characters, ASCII is read byte by byte until eight in a row
		r, size := utf8.DecodeRune(p[j:])
		if size == 1 || r < 0xa0 {
			return j // invalid, incomplete, or a C1 control: slow path
		}
		j += size
	}
	return j
}

// plainASCIIWords is plainASCII in Go: 32 bytes at a time while they are all plain (the words' masks are
// independent, so the processor works on them side by side), then eight at a time to find the one that
// is not, then one at a time.
func plainASCIIWords(p []byte) int {
	j := 0
	for j+32 <= len(p) {
		q := p[j : j+32 : j+32]
		if attention(binary.LittleEndian.Uint64(q))|attention(binary.LittleEndian.Uint64(q[8:]))|
			attention(binary.LittleEndian.Uint64(q[16:]))|attention(binary.LittleEndian.Uint64(q[24:])) != 0 {
			break
		}
		j += 32
	}
	for j+8 <= len(p) {
		if m := attention(binary.LittleEndian.Uint64(p[j:])); m != 0 {
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	for j < len(p) && p[j] < utf8.RuneSelf && plain[p[j]] {
		j++
	}
	return j
}

// attention returns a word with the top bit set in each lane (byte) of w that is not plain ASCII
// (printable, tab, newline: the plain table), SWAR style, in a dozen operations. With the top bit of
// every lane set first (x), subtracting k*lanes1 borrows from no other lane, and a lane keeps its top bit
// exactly when its low seven bits are >= k: so the lanes below 0x20, and those from 0x09 to 0x0a (tab and
// newline), are each one subtraction. Adding 1 to the low seven bits carries into the top bit exactly for
// 0x7f; ORed with w's own top bits, that marks every lane >= 0x7f. A lane >= 0x80 is marked whatever the
// other terms say of it, so the lowest marked lane is the first byte that needs a look.
func attention(w uint64) uint64 {
	x := w | lanes80
	high := ((w &^ lanes80) + lanes1) | w           // top bit: b >= 0x7f
	tabNL := (x - 0x09*lanes1) &^ (x - 0x0b*lanes1) // top bit: 0x09 <= b&0x7f < 0x0b
	return (high | ^(x-0x20*lanes1)&^tabNL) & lanes80
}

// attentionNL is attention, and the lanes of w that are '\n' (top bit set in each, as byteIs). It is
// attention written out again (not a call to it) so that both stay small enough to be inlined.
func attentionNL(w uint64) (m, nl uint64) {
	x := w | lanes80
	high := ((w &^ lanes80) + lanes1) | w
	tabNL := (x - 0x09*lanes1) &^ (x - 0x0b*lanes1)
	return (high | ^(x-0x20*lanes1)&^tabNL) & lanes80, byteIs(w, '\n')
}

// blockBytes is the size of ground's blocks: one bit of a uint64 per byte.
const blockBytes = 64

// events returns a byte with bit j set when byte j of w (little-endian) is an event for ground's
// blocks: not printable ASCII and not a tab (so a newline is one). The lanes are marked as in
// attention, then gathered into one byte by a multiplication (lane j's top bit lands in bit 56+j, with
// no carries between the partial products).
func events(w uint64) uint64 {
	x := w | lanes80
	high := ((w &^ lanes80) + lanes1) | w         // top bit: b >= 0x7f
	tab := (x - 0x09*lanes1) &^ (x - 0x0a*lanes1) // top bit: b&0x7f == 0x09
	m := (high | ^(x-0x20*lanes1)&^tab) & lanes80
	return (m >> 7) * 0x0102040810204080 >> 56
}

// eventWords returns the mask of the events among the first 64 bytes of q, bit j for q[j] (events).
func eventWords(q []byte) uint64 {
	q = q[:blockBytes:blockBytes]
	return events(binary.LittleEndian.Uint64(q)) | events(binary.LittleEndian.Uint64(q[8:]))<<8 |
		events(binary.LittleEndian.Uint64(q[16:]))<<16 | events(binary.LittleEndian.Uint64(q[24:]))<<24 |
		events(binary.LittleEndian.Uint64(q[32:]))<<32 | events(binary.LittleEndian.Uint64(q[40:]))<<40 |
		events(binary.LittleEndian.Uint64(q[48:]))<<48 | events(binary.LittleEndian.Uint64(q[56:]))<<56
}

// byteIs has the top bit set in each lane of w whose low seven bits are c (< 0x80).
func byteIs(w uint64, c byte) uint64 {
	return ^(((w ^ uint64(c)*lanes1) | lanes80) - lanes1) & lanes80
}

// csi returns the length of a complete CSI sequence after an ESC at the start of p ('[', parameter and
// intermediate bytes 0x20–0x3F, a final byte 0x40–0x7E) that is within the escape bound, or 0 when p
// does not hold one: the state machine then takes the sequence byte by byte, with the same result.
func (z *State) csi(p []byte) int {
	if len(p) < 2 || p[0] != '[' {
		return 0
	}
	for k := 1; k < len(p) && k+1 < z.escMax; k++ { // ESC + p[:k+1] is k+2 bytes long
		switch c := p[k]; {
		case c >= 0x20 && c <= 0x3f:
		case c >= 0x40 && c <= 0x7e:
			return k + 1
		default:
			return 0
		}
	}
	return 0
}

// lead starts a multi-byte character at c (not ASCII).
func (z *State) lead(c byte) {
	z.lower, z.upper = 0x80, 0xbf
	switch {
	case c >= 0xc2 && c <= 0xdf:
		z.need = 1
	case c == 0xe0:
		z.need, z.lower = 2, 0xa0
	case c == 0xed:
		z.need, z.upper = 2, 0x9f // no surrogates
	case c >= 0xe1 && c <= 0xef:
		z.need = 2
	case c == 0xf0:
		z.need, z.lower = 3, 0x90
	case c == 0xf4:
		z.need, z.upper = 3, 0x8f // nothing above U+10FFFF
	case c >= 0xf1 && c <= 0xf3:
		z.need = 3
	default:
		z.emit(replacementChar) // 0x80–0xc1, 0xf5–0xff
		return
	}
	z.pend[0] = c
	z.npend = 1
}

// invalid ends a character that cannot be completed: one U+FFFD for the bytes held.
func (z *State) invalid() {
	z.need, z.npend = 0, 0
	z.emit(replacementChar)
}

// hold keeps byte c of an escape sequence in case the sequence turns back into text.
func (z *State) hold(c byte) {
	z.seq[z.seqLen] = c
	z.seqLen++
	z.seqN++
}

// escape consumes bytes of an escape sequence from p and returns how many it took. It stops after
// the sequence ends (state ground) or before a byte that aborts it.
func (z *State) escape(p []byte) int {
	for i, c := range p {
		if z.seqN >= z.escMax {
			z.abort() // c would make the sequence too long
			return i
		}
		switch z.state {
		case stEsc:
			switch {
			case c == '[':
				z.state = stCSI
			case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
				z.state = stStr
			case c >= 0x20 && c <= 0x2f:
				z.state = stEscInter
			case c >= 0x30 && c <= 0x7e:
				z.state = stGround // two-byte sequence: ESC 7, ESC =, ESC M, ESC \ …
				return i + 1
			default:
				z.abort()
				return i
			}
			z.hold(c)
		case stEscInter:
			switch {
			case c >= 0x20 && c <= 0x2f:
				z.hold(c)
			case c >= 0x30 && c <= 0x7e:
				z.state = stGround // e.g. ESC ( B
				return i + 1
			default:
				z.abort()
				return i
			}
		case stCSI:
			switch {
			case c >= 0x20 && c <= 0x3f: // parameter and intermediate bytes
				z.hold(c)
			case c >= 0x40 && c <= 0x7e: // final byte
				z.state = stGround
				return i + 1
			default:
				z.abort()
				return i
			}
		case stStr:
			switch {
			case c == 0x07: // BEL ends an OSC (accepted for all control strings)
				z.state = stGround
				return i + 1
			case c == 0x1b:
				z.state = stStrEsc
				z.seqN++
			case c < 0x20:
				z.abort()
				return i
			default:
				z.hold(c)
			}
		case stStrEsc:
			if c == '\\' { // ST
				z.state = stGround
				return i + 1
			}
			z.abort() // the inner ESC starts a new sequence; c is looked at again
			return i
		}
	}
	return len(p)
}

// abort gives up the current escape sequence: its ESC is dropped and the bytes after it are text.
// An ESC inside a control string that did not start ST starts a new sequence.
func (z *State) abort() {
	inner := z.state == stStrEsc
	n := z.seqLen
	z.state, z.seqN, z.seqLen = stGround, 0, 0
	// The held bytes contain no ESC and no C0 control, so this never re-enters an escape state
	// and never touches z.seq while reading it.
	z.Write(z.seq[:n])
	if inner {
		if z.need > 0 {
			z.invalid() // the ESC ends a character the held bytes left incomplete
		}
		z.state, z.seqN, z.seqLen = stEsc, 1, 0
	}
}

// Flush ends the stream: an unterminated sequence becomes text, an incomplete character becomes
// U+FFFD, and a pending CR is dropped.
func (z *State) Flush() {
	for z.state != stGround {
		z.abort()
	}
	if z.need > 0 {
		z.invalid()
	}
	z.crPending, z.back = false, 0
	z.flush()
}

// emit passes sanitized text on, first resolving a pending CR: followed by '\n' it is dropped
// (CRLF → LF); followed by other text it discards the current run. Small pieces go to the batch; a run
// that the CR discards is cut from the batch when the batch holds all of it, else the Emitter is told.
func (z *State) emit(b []byte) {
	if z.back > 0 {
		z.overwriteText(b)
		return
	}
	if z.crPending {
		z.crText(b[0])
	}
	k := bytes.LastIndexByte(b, '\n')
	if k >= 0 {
		z.run = len(b) - k - 1
	} else {
		z.run += len(b)
	}
	if len(b) >= directBytes {
		z.flush()
		z.track(b, k)
		z.out.Text(b, k)
		return
	}
	if z.nbatch+len(b) > batchBytes {
		z.flush()
	}
	if k >= 0 {
		z.batchNL = z.nbatch + k
	}
	z.nbatch += copy(z.batch[z.nbatch:], b)
}

// crText resolves a pending CR before text that starts with byte c: before '\n' the CR is dropped
// (CRLF → LF); before other text it discards the current run, by cutting it from the batch when the
// batch holds all of it, else by telling the Emitter.
func (z *State) crText(c byte) {
	z.crPending = false
	if c == '\n' {
		return
	}
	switch {
	case z.run > z.owMax:
		z.flush()
		z.out.CR(-1)
		z.kept = true
	case z.run <= z.nbatch: // the run has no newline, so it lies after batchNL
		z.nbatch -= z.run
	default:
		z.flush()
		z.out.CR(z.run)
	}
	z.run, z.nline = 0, 0
}

// flush passes the batch on.
func (z *State) flush() {
	if z.nbatch == 0 {
		return
	}
	n, nl := z.nbatch, z.batchNL
	z.nbatch, z.batchNL = 0, -1
	z.track(z.batch[:n], nl)
	z.out.Text(z.batch[:n], nl)
}

// track keeps the run's text that is passed to the Emitter (b, its last '\n' at nl or -1) in z.line while
// it is at most bsMax bytes long: a backspace overwrites within it.
func (z *State) track(b []byte, nl int) {
	if nl >= 0 {
		z.nline, z.kept = 0, false
		b = b[nl+1:]
	}
	if z.nline+len(b) <= z.bsMax {
		z.nline += copy(z.line[z.nline:], b)
	} else {
		z.nline = z.bsMax + 1 // not held
	}
}

// backspace takes a BS: the cursor moves back one character, unless it is at the line start (a pending CR
// is one) or the run is not held (longer than bsMax, or not the whole line).
func (z *State) backspace() {
	if z.crPending {
		return
	}
	z.flush()
	if z.kept || z.nline > z.bsMax || z.nline != z.run {
		return
	}
	if z.back < utf8.RuneCount(z.line[:z.nline]) {
		z.back++
	}
}

// overwrite takes the bytes of p while the cursor is back (z.back > 0): printable ASCII and tabs overwrite,
// a BS moves back again, other C0 controls and DEL are removed; a CR or a newline puts the cursor back at
// the run's end and is left to Write, as are an ESC and bytes >= 0x80 (their text comes back through
// emit). It returns how many bytes it took.
func (z *State) overwrite(p []byte) int {
	for i, c := range p {
		switch {
		case z.back == 0:
			return i
		case c == '\n' || c == '\r':
			z.back = 0
			return i
		case c == '\b':
			z.backspace()
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			z.overstrike(p[i : i+1])
		case c == 0x1b || c >= utf8.RuneSelf:
			return i
		}
	}
	return len(p)
}

// overwriteText is emit while the cursor is back: each character of the sanitized text b overwrites one,
// until a newline or the cursor's return to the run's end; the rest is emitted.
func (z *State) overwriteText(b []byte) {
	for len(b) > 0 && z.back > 0 {
		if b[0] == '\n' {
			z.back = 0
			break
		}
		_, size := utf8.DecodeRune(b)
		z.overstrike(b[:size])
		b = b[size:]
	}
	if len(b) > 0 {
		z.emit(b)
	}
}

// overstrike writes the character ch over the one the cursor is on, and moves the cursor on. The run's
// text is passed on again: a CR discard of the run, then its new text.
func (z *State) overstrike(ch []byte) {
	z.flush() // empty while the cursor is back; kept for the invariant nline == run
	n := z.nline
	pos := n
	for range z.back {
		_, size := utf8.DecodeLastRune(z.line[:pos])
		pos -= size
	}
	_, old := utf8.DecodeRune(z.line[pos:n])
	copy(z.line[pos+len(ch):], z.line[pos+old:n])
	copy(z.line[pos:], ch)
	z.nline = n - old + len(ch)
	z.back--
	z.out.CR(n)
	z.out.Text(z.line[:z.nline], -1)
	z.run = z.nline
	if z.nline > z.bsMax {
		z.back = 0 // the run is no longer held: a BS does nothing in it
	}
}

// NewWriter returns a writer that sanitizes the raw bytes written to it (reference §3.8) and writes
// the text to w: the same text the sink shows and counts. It holds at most one run of a line
// ([MaxOverwriteBytes]) plus a small buffer, and writes to w at the end of each Write. Close
// flushes what is pending (an unterminated escape sequence becomes text, an incomplete character
// U+FFFD) but does not close w. A NUL byte is removed like any other control character; binary
// detection is the sink's job. Write and Close return the first error of w.
func NewWriter(w io.Writer) io.WriteCloser {
	return newWriter(w, MaxEscapeBytes, MaxOverwriteBytes)
}

func newWriter(w io.Writer, escMax, owMax int) *writer {
	sw := &writer{out: bufio.NewWriterSize(w, 32<<10)}
	sw.z.Init(sw, escMax, owMax)
	return sw
}

// writer implements NewWriter. run holds the current run of the line (since the line
// start or the last CR) while it is at most MaxOverwriteBytes, since a CR may still discard it;
// past that the run is written through.
type writer struct {
	z       State
	out     *bufio.Writer // committed text; its error is sticky
	run     []byte
	through bool // the current run is longer than MaxOverwriteBytes: pass it through
	err     error
	closed  bool
}

func (sw *writer) Write(p []byte) (int, error) {
	if sw.err != nil {
		return 0, sw.err
	}
	if sw.closed {
		return 0, ErrClosed
	}
	sw.z.Write(p)
	sw.drain()
	if sw.err != nil {
		return 0, sw.err
	}
	return len(p), nil
}

func (sw *writer) Close() error {
	if sw.closed {
		return sw.err
	}
	sw.closed = true
	sw.z.Flush()
	sw.put(sw.run)
	sw.run = sw.run[:0]
	sw.drain()
	return sw.err
}

// Text takes sanitized text (Emitter).
func (sw *writer) Text(b []byte, lastNL int) {
	if lastNL >= 0 {
		sw.put(sw.run)
		sw.run = sw.run[:0]
		sw.put(b[:lastNL+1])
		sw.through = false
		b = b[lastNL+1:]
	}
	switch {
	case len(b) == 0:
	case sw.through:
		sw.put(b)
	case len(sw.run)+len(b) > sw.z.owMax:
		sw.put(sw.run)
		sw.run = sw.run[:0]
		sw.put(b)
		sw.through = true
	default:
		sw.run = append(sw.run, b...)
	}
}

// CR takes a bare CR's discard (Emitter).
func (sw *writer) CR(n int) {
	if n >= 0 {
		sw.run = sw.run[:len(sw.run)-n] // n == len(sw.run): the sanitizer counts the same run
	}
	sw.through = false
}

func (sw *writer) put(b []byte) {
	if sw.err == nil {
		_, sw.err = sw.out.Write(b)
	}
}

func (sw *writer) drain() {
	if sw.err == nil {
		sw.err = sw.out.Flush()
	}
}
