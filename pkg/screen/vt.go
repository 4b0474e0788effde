package screen

import (
	"bytes"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// This file is the only one that imports the emulation library (github.com/charmbracelet/x/vt): replacing it
// means writing another emulator here.

// emulator is the terminal emulation a Terminal drives from one goroutine at a time (the Terminal's lock).
//
// Write and Resize never panic: when the library does, the emulator starts again empty (as Reset) and they
// report false, so a bug in it costs the screen, never the supervisor.
type emulator interface {
	Write(p []byte) bool // the command's output, any bytes; the Terminal gives at most feedChunk at a time
	Resize(cols, rows int) bool
	// Reset forgets everything: the emulator is as new, of the same size (screens, cursor, modes, parser
	// state).
	Reset()
	// Row appends the text of row y (0-based) to b: one cell's character once (a wide character's
	// continuation cells give nothing), a blank cell a space, no escape sequences; trailing spaces kept.
	Row(b []byte, y int) []byte
	Cursor() (col, row int) // 0-based, within the screen
	AltScreen() bool
	Modes() (applicationCursor, applicationKeypad bool)
	// Close stops the emulator's answers: those it gives later are dropped.
	Close()
}

// replyPipe is what the emulator's answers go to: it must not block (the Terminal's bounded reply queue).
type replyPipe func([]byte)

// vtEmulator is x/vt behind the emulator interface. x/vt writes its answers to terminal queries (DSR, DA,
// DECRQM, OSC colour queries) into an io.Pipe whose writes block until read, so every vt.Emulator it makes
// has a goroutine draining that pipe into answer, for as long as the emulator is in use.
type vtEmulator struct {
	e          *vt.Emulator
	answer     replyPipe
	cols, rows int
	appCursor  bool // DECCKM (CSI ?1h), seen through x/vt's mode callbacks
	appKeypad  bool // DECKPAM (ESC =)
	closed     bool // Close was called: an emulator made later answers nothing
	filter     filter
	drained    chan struct{} // closed when the drain of the current emulator's answers ended
	repeats    int           // the cells REP may still paint in this write
}

// repeatLines bounds the cells the repeats (REP) of one write paint: this many lines' worth.
const repeatLines = 4

func newVT(cols, rows int, answer replyPipe) *vtEmulator {
	v := &vtEmulator{answer: answer, cols: cols, rows: rows}
	v.start()
	return v
}

// scrollbackLines is the smallest scrollback x/vt accepts (0 means its default of 10 000 lines). The
// screen is all a Terminal shows (the sink keeps the stream), and a full scrollback costs a move of every
// line it holds for each line that scrolls off.
const scrollbackLines = 1

// x/vt's parser keeps an OSC, DCS or APC string in a buffer of a fixed 4 MiB, allocated with each emulator
// (a longer string is cut, the buffer never grows); v0.1.0 does not let it be set smaller. A grapheme
// cluster being composed is flushed at the end of every Write, so a run of combining marks holds at most
// one Write's bytes (the Terminal's chunks are feedChunk).

func (v *vtEmulator) start() {
	e := vt.NewEmulator(v.cols, v.rows)
	e.SetScrollbackSize(scrollbackLines)
	v.appCursor, v.appKeypad = false, false
	e.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { v.mode(m, true) },
		DisableMode: func(m ansi.Mode) { v.mode(m, false) },
	})
	// x/vt answers DSR 5 (operating status) with the DEC form ESC[?0n; a terminal's answer is ESC[0n.
	// Its answers to ESC[6n, ESC[c and ESC[>c are a terminal's.
	e.RegisterCsiHandler('n', func(params ansi.Params) bool {
		if n, _, _ := params.Param(0, 0); n != 5 || len(params) != 1 {
			return false
		}
		_, _ = io.WriteString(e.InputPipe(), "\x1b[0n")
		return true
	})
	// Window reports (XTWINOPS): x/vt answers none; 18 (the text area) and 19 (the screen) in characters are
	// how a program without TIOCGWINSZ learns the size (`resize`, some editors over serial lines).
	e.RegisterCsiHandler('t', func(params ansi.Params) bool {
		n, _, _ := params.Param(0, 0)
		if (n != 18 && n != 19) || len(params) != 1 {
			return false
		}
		_, _ = fmt.Fprintf(e.InputPipe(), "\x1b[%d;%d;%dt", n-10, v.rows, v.cols)
		return true
	})
	// x/vt repeats some operations n times, and its parser does not bound a parameter (n up to 2^31 from
	// enough digits): ESC[65535b (REP) took 25 ms at 120×40, a CHT of 30 nines 6 s, so a stream of them
	// would hold the emulator for hours. An n past what the screen can show changes nothing but the time,
	// so it is cut to that before x/vt's own handler runs (handlers run newest first; this one changes the
	// parameters in place, sub-parameter flag and all, and passes the sequence on). Margins past the
	// screen's edge (DECSTBM ESC[7;10r on 8 rows, DECSLRM) made x/vt index past its buffer: they are cut
	// to the edge too (FuzzTerminal found both).
	clamp := func(cmd byte, limit func(n int) int, params ...int) {
		e.RegisterCsiHandler(int(cmd), func(p ansi.Params) bool {
			for _, i := range params {
				if i < len(p) {
					if n := p[i].Param(1); limit(n) < n {
						p[i] = ansi.Param(limit(n))
					}
				}
			}
			return false
		})
	}
	toCols := func(n int) int { return min(n, v.cols) }
	toRows := func(n int) int { return min(n, v.rows) }
	for _, cmd := range []byte("IZ@PX") { // tabs forward and back, insert, delete, erase characters
		clamp(cmd, toCols, 0)
	}
	for _, cmd := range []byte("LMST") { // insert, delete lines; scroll up, down
		clamp(cmd, toRows, 0)
	}
	// Repeat the last character: at most a line, and at most repeatLines lines' worth in one write. x/vt
	// paints each repeat as a printed character (a screenful per ESC[99999b at 200×200: a 4 KiB chunk of
	// them took 24 s; a line each at 750 columns still held a resize for 4 s); a program repeats within a
	// line, a few times a write.
	clamp('b', func(n int) int {
		n = min(n, v.cols, v.repeats)
		v.repeats -= n
		return n
	}, 0)
	clamp('r', toRows, 0, 1) // top and bottom margins
	clamp('s', toCols, 0, 1) // left and right margins (with ESC[?69h; else it saves the cursor)
	v.e = e
	v.drained = make(chan struct{})
	go func(done chan struct{}) { drain(e, v.answer); close(done) }(v.drained)
	if v.closed {
		v.stop()
	}
}

func (v *vtEmulator) mode(m ansi.Mode, on bool) {
	switch m {
	case ansi.ModeCursorKeys:
		v.appCursor = on
	case ansi.ModeNumericKeypad:
		v.appKeypad = on
	}
}

// drain copies e's answers to answer until e's pipe is closed (stop).
func drain(e *vt.Emulator, answer replyPipe) {
	buf := make([]byte, 512)
	for {
		n, err := e.Read(buf)
		if n > 0 {
			answer(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// stop closes the answer pipe's writing end: the drain ends once it read what is in it, and x/vt's later
// writes to it fail at once (they are ignored) instead of blocking. vt.Emulator.Close would do the same but
// sets a flag its Read reads without a lock, from the drain's goroutine.
func (v *vtEmulator) stop() {
	if pw, ok := v.e.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
		return
	}
	_ = v.e.Close()
}

func (v *vtEmulator) Write(p []byte) bool {
	p = v.filter.fix(p)
	v.repeats = repeatLines * v.cols
	return v.guard(func() { _, _ = v.e.Write(p) })
}

// Resize makes a new emulator of the new size and gives it the old one's screen: its rows' text (from the
// cursor's row up, as many as fit), cursor, alternate screen and key modes. x/vt's own Resize keeps buffers
// of the largest size it was ever given (1000×2, then 2×1000, held 240 MB).
func (v *vtEmulator) Resize(cols, rows int) bool {
	text := make([][]byte, v.rows)
	for y := range text {
		text[y] = bytes.TrimRight(v.Row(nil, y), " ")
	}
	cx, cy := v.Cursor()
	alt, appCursor, appKeypad := v.AltScreen(), v.appCursor, v.appKeypad
	v.stop()
	// The old screens go before the new ones are made (a resize is rare; at 30,000 cells both at once would
	// take the supervisor past its budget).
	<-v.drained // the drain holds the old emulator until its pipe's end
	v.e = nil
	debug.FreeOSMemory() // and their pages go back to the system: the new ones are of other sizes
	v.cols, v.rows = cols, rows
	v.start()
	var b bytes.Buffer
	if alt {
		b.WriteString("\x1b[?1049h")
	}
	b.WriteString("\x1b[?7l") // no wrap: a row longer than the new width is cut, nothing scrolls
	first := max(0, cy-(rows-1))
	for i := 0; i < rows && first+i < len(text); i++ {
		fmt.Fprintf(&b, "\x1b[%d;1H%s", i+1, cutRunes(text[first+i], cols))
	}
	b.WriteString("\x1b[?7h")
	fmt.Fprintf(&b, "\x1b[%d;%dH", cy-first+1, min(cx, cols-1)+1)
	if appCursor {
		b.WriteString("\x1b[?1h")
	}
	if appKeypad {
		b.WriteString("\x1b=")
	}
	return v.guard(func() { _, _ = v.e.Write(b.Bytes()) }) // not through the filter: it may be inside a string
}

// guard runs f, and on a panic in it starts a fresh emulator and reports false. x/vt v0.1.0 panics on some
// input (FuzzTerminal found left/right margins past the screen's edge, ESC[?69h ESC[;10s on a screen of 9
// columns); its state after a panic is not to be trusted.
func (v *vtEmulator) guard(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			v.renew()
			ok = false
		}
	}()
	f()
	return true
}

// resetBytes bring x/vt back to its state when new, without a new emulator (a fresh one allocates ~5 MB,
// which under a flood, with a restart at every chunk, left 55 MiB of heap in use): four CANs end whatever
// the parser is in (a UTF-8 character takes up to three more bytes, then CAN cancels any sequence or
// string), and RIS (ESC c) clears both screens, the cursor, margins, tab stops, character sets and modes.
// What RIS keeps (the title, colours set by OSC) is not on the screen's text.
const resetBytes = "\x18\x18\x18\x18\x1bc"

func (v *vtEmulator) Reset() {
	v.filter.reset()
	v.guard(func() { _, _ = v.e.Write([]byte(resetBytes)) }) // on a panic, guard makes a new one
}

// renew replaces the emulator with a new one, after a panic in it.
func (v *vtEmulator) renew() {
	v.stop()
	v.start()
}

func (v *vtEmulator) Close() {
	v.closed = true
	v.stop()
}

func (v *vtEmulator) Row(b []byte, y int) []byte {
	for x := 0; x < v.cols; x++ {
		c := v.e.CellAt(x, y)
		switch {
		case c == nil:
			b = append(b, ' ')
		case c.Content == "":
			if c.Width != 0 {
				b = append(b, ' ') // an empty cell that takes a column
			} // else: a wide character's continuation
		case x+c.Width > v.cols:
			b = append(b, ' ') // a wide character cut by the edge (the screen was made narrower)
		default:
			b = appendPrintable(b, c.Content)
		}
	}
	return b
}

// appendPrintable appends a cell's content without control characters (x/vt prints none, but the text
// must never carry an escape sequence whatever the library does).
func appendPrintable(b []byte, s string) []byte {
	if strings.IndexFunc(s, isControl) < 0 {
		return append(b, s...)
	}
	for _, r := range s {
		if isControl(r) {
			r = ' '
		}
		b = append(b, string(r)...)
	}
	return b
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

func (v *vtEmulator) Cursor() (col, row int) {
	p := v.e.CursorPosition()
	return p.X, p.Y
}

func (v *vtEmulator) AltScreen() bool { return v.e.IsAltScreen() }

func (v *vtEmulator) Modes() (applicationCursor, applicationKeypad bool) {
	return v.appCursor, v.appKeypad
}

// cutRunes is b cut to its first n characters (a wide one counted as one: past the width it overwrites the
// last cell, as the replay writes without wrapping).
func cutRunes(b []byte, n int) []byte {
	for i := range string(b) {
		if n == 0 {
			return b[:i]
		}
		n--
	}
	return b
}
