// Package screen is the headless terminal of terminal mode (reference §14): it turns the raw output of a
// command on a pseudo-terminal into the screen a person would see, answers the terminal queries a program
// sends (cursor position, device attributes), and encodes named keys as the terminal's modes want them.
//
// It only makes the screen: the artifact and the sink take the stream as in pipe mode and never wait for
// it. The emulator is slow (1–2 MiB/s), so a Terminal is bounded: it feeds the emulator from a queue of at
// most 1 MiB in writes of at most 4 KiB, and when it falls behind it starts again from the newest output
// and says so (Screen.Approximate).
package screen

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// The sizes of reference §14: a terminal is 120×40 unless asked otherwise, and each side is 2–1000.
const (
	DefaultCols = 120
	DefaultRows = 40
	MinSize     = 2
	MaxSize     = 1000
)

// The bounds of a Terminal, in bytes.
const (
	feedChunk = 1 << 10 // the most the emulator is given at once: a grapheme run and a scroll burst stay small
	// maxPending is how far the emulator may fall behind: past it the queue keeps only its newest keepBytes
	// and the emulator starts again from them (Screen.Approximate).
	maxPending = 1 << 20
	keepBytes  = 64 << 10
	// snapshotPending is the most a Snapshot (or Resize, KeyMode) feeds before it reads: with more waiting
	// it cuts the queue as above first, so it waits at most ~0.3 s at the emulator's speed on text.
	snapshotPending = 256 << 10
	// catchUpBudget bounds that wait whatever the bytes cost (a screenful scrolled by each line feed, at a
	// large size): past it, what still waits is cut to its newest tailBytes and the emulator starts again
	// from them.
	catchUpBudget = 200 * time.Millisecond
	tailBytes     = 4 << 10
	// queueCap is the queue buffer's size once it has grown: room past maxPending, so the buffer is moved
	// down at most once per 128 KiB written.
	queueCap = maxPending + 128<<10
	// idleCap: a queue buffer larger than this is let go when the queue runs empty.
	idleCap = 256 << 10
	// maxReplies is how many bytes of answers wait for reply; past it new answers are dropped (a program
	// that floods queries and never reads its input).
	maxReplies = 64 << 10
)

// Screen is what the terminal shows: details.screen of a tty command's results (reference §14).
type Screen struct {
	// Text is the visible rows, each without its trailing spaces, the blank rows at the end left out, joined
	// by "\n": a wide character (CJK, emoji) appears once, and there are no escape sequences.
	Text      string `json:"text"`
	Rows      int    `json:"rows"`
	Cols      int    `json:"cols"`
	Cursor    Cursor `json:"cursor"`
	AltScreen bool   `json:"altScreen"` // a full-screen program's alternate screen is showing
	// Approximate: the emulator fell behind by more than 1 MiB at some point and was started again from the
	// newest 64 KiB of output (or it failed on some input and started again empty), so the screen may lack
	// what was drawn before that. It stays set for the terminal's life.
	Approximate bool `json:"approximate,omitempty"`
}

// Cursor is a position on the screen, 1-based as a terminal reports it (the answer to ESC[6n).
type Cursor struct {
	Row int `json:"row"`
	Col int `json:"col"`
}

// Showing reports whether the screen belongs in the model-visible text (reference §14): a full-screen
// program is showing (AltScreen), or the cursor's row is a prompt: it has text before the cursor and none
// at or after it (python's ">>> ", `read -p "Name: "`).
func (s Screen) Showing() bool {
	if s.AltScreen {
		return true
	}
	row := s.Cursor.Row - 1
	lines := strings.Split(s.Text, "\n")
	if row < 0 || row >= len(lines) || lines[row] == "" {
		return false
	}
	return ansi.StringWidth(lines[row]) < s.Cursor.Col
}

// Terminal is a bounded headless terminal emulator of cols×rows, fed with a command's output by Write.
//
// One goroutine of its own feeds the emulator from the queue while the output comes no faster than the
// emulator takes it, on a thread of the lowest priority (Linux); during a flood it waits (feedLoop), so the
// emulator takes no CPU from the command. Snapshot, Resize and KeyMode feed what was written before them on
// the caller's goroutine (at most 256 KiB, for at most 0.2 s), so they wait for that thread at most for the
// 4 KiB it is feeding. Memory: the queue (at most 1.125 MiB, let go when it runs empty), the emulator (two
// screens of cols×rows cells of 112 bytes: 1 MiB at 120×40, 224 MB at 1000×1000; x/vt's fixed 4 MiB parser
// buffer), 64 KiB of answers.
type Terminal struct {
	// emuMu is held by whoever feeds or reads the emulator: the feeding goroutine, Snapshot, Resize,
	// KeyMode. It is taken before mu, and the chunk taken from the queue is fed before it is let go, so
	// the emulator gets the bytes in order whoever feeds it.
	emuMu      sync.Mutex
	emu        emulator
	cols, rows int
	chunk      []byte // feedChunk bytes of scratch

	mu          sync.Mutex
	wake        *sync.Cond // the feeding goroutine: bytes wait, or closed
	q           []byte     // q[head:] waits to be fed
	head        int
	queued      int64 // bytes ever written
	taken       int64 // bytes ever taken from the queue: fed, or dropped by a cut
	reset       bool  // the queue was cut: the emulator starts again before the next chunk
	approximate bool
	closed      bool
	done        chan struct{} // the feeding goroutine ended
	budget      time.Duration // catchUpBudget; tests set 0

	replies   []byte // answers waiting for reply
	replyWake *sync.Cond
}

// New starts a Terminal of cols×rows (each clamped to MinSize–MaxSize). reply receives the emulator's
// answers to terminal queries (cursor position ESC[6n, device attributes ESC[c and ESC[>c, mode and colour
// queries), to be written back into the pseudo-terminal; it is called from a goroutine of the Terminal's,
// one call at a time, and may block without holding the Terminal up (at most 64 KiB of answers wait, more
// are dropped). A nil reply drops the answers.
func New(cols, rows int, reply func([]byte)) *Terminal {
	cols, rows = clampSize(cols), clampSize(rows)
	t := &Terminal{cols: cols, rows: rows, chunk: make([]byte, feedChunk), done: make(chan struct{}), budget: catchUpBudget}
	t.wake = sync.NewCond(&t.mu)
	t.replyWake = sync.NewCond(&t.mu)
	answer := func([]byte) {}
	if reply != nil {
		answer = t.answer
		go t.replyLoop(reply)
	}
	t.emu = newVT(cols, rows, answer)
	go t.feedLoop()
	return t
}

func clampSize(n int) int { return min(max(n, MinSize), MaxSize) }

// Write queues a copy of p for the emulator and returns len(p), nil: it never blocks on the emulator and
// never fails. When more than 1 MiB would wait, the queue keeps only the newest 64 KiB (from a line's start
// when there is one) and the emulator starts again from them (Screen.Approximate). After Close the bytes
// still queue, for Snapshot.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.queued += int64(len(p))
	if len(t.q)-t.head+len(p) > maxPending {
		t.cut(p, keepBytes)
	} else {
		t.push(p)
	}
	t.wake.Signal()
	t.mu.Unlock()
	return len(p), nil
}

// push appends p to the queue (mu held; the queue stays within maxPending).
func (t *Terminal) push(p []byte) {
	if len(p) == 0 {
		return
	}
	if cap(t.q)-len(t.q) < len(p) && t.head > 0 {
		n := copy(t.q, t.q[t.head:])
		t.q, t.head = t.q[:n], 0
	}
	if cap(t.q)-len(t.q) < len(p) {
		grown := make([]byte, len(t.q), min(max(2*cap(t.q), len(t.q)+len(p), 64<<10), queueCap))
		copy(grown, t.q)
		t.q = grown
	}
	t.q = append(t.q, p...)
}

// cut leaves in the queue only the newest keep bytes of what waits followed by p, from the first line start
// in them (or else a character's start), and has the emulator start again from there (mu held; the queue
// holds more than keep bytes with p).
func (t *Terminal) cut(p []byte, keep int) {
	pending := t.q[t.head:]
	if len(p) >= keep {
		if cap(t.q) < keep {
			t.q = make([]byte, 0, keep)
		}
		t.q, t.head = append(t.q[:0], p[len(p)-keep:]...), 0
	} else {
		fromQueue := min(keep-len(p), len(pending))
		n := copy(t.q, pending[len(pending)-fromQueue:])
		t.q, t.head = t.q[:n], 0
		t.push(p) // fits: the buffer held more than keepBytes
	}
	// Start where nothing is cut in half: after a line end, else at an escape sequence (a full-screen
	// redraw has no line ends, and its parameters cut from their CSI showed as text), else at a character.
	start := 0
	if i := bytes.IndexByte(t.q, '\n'); i >= 0 && i < len(t.q)-1 {
		start = i + 1
	} else if i := bytes.IndexByte(t.q, 0x1b); i >= 0 {
		start = i
	} else {
		for start < len(t.q) && !utf8.RuneStart(t.q[start]) {
			start++
		}
	}
	t.head = start
	t.taken = t.queued - int64(len(t.q)-t.head)
	t.reset, t.approximate = true, true
}

// feedLoop is the goroutine that feeds the emulator while bytes wait, until Close. When it is more than
// snapshotPending behind (a flood: output comes faster than the emulator's ~1 MiB/s), what it would feed
// is bound to be cut before anyone reads the screen, so it stops feeding until the output pauses for
// floodQuiet, and then feeds only the newest keepBytes: under a flood the emulator costs no CPU, and
// Snapshot, which does its own catching up, is the same. (Measured: fed throughout, the emulator took a
// core and a `cat` of 80-column lines through a pseudo-terminal ran 1.6× as long as beside a bare reader;
// the thread's nice 19 did not change that, the command being in a session, so a scheduling group, of its
// own.)
func (t *Terminal) feedLoop() {
	// The thread is never unlocked: it ends with the goroutine, and its lowered priority with it.
	runtime.LockOSThread()
	lowerPriority()
	defer close(t.done)
	for {
		t.mu.Lock()
		for len(t.q) == t.head && !t.closed {
			t.wake.Wait()
		}
		for len(t.q)-t.head > snapshotPending && !t.closed {
			t.waitQuiet()
			if len(t.q)-t.head > snapshotPending {
				t.cut(nil, keepBytes)
			}
		}
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		t.emuMu.Lock()
		t.step(-1)
		t.emuMu.Unlock()
	}
}

// floodQuiet is how long the output must pause before the feeding goroutine feeds again after a flood.
const floodQuiet = 20 * time.Millisecond

// waitQuiet returns once nothing was written for floodQuiet, or on Close (mu held; let go while it
// sleeps).
func (t *Terminal) waitQuiet() {
	for !t.closed {
		before := t.queued
		t.mu.Unlock()
		time.Sleep(floodQuiet)
		t.mu.Lock()
		if t.queued == before {
			return
		}
	}
}

// step feeds the emulator the next chunk of the queue, starting it again first when the queue was cut, and
// reports whether it fed anything. With until ≥ 0 it takes nothing past that many bytes ever taken (a
// catch-up's end). A cut's restart waits for bytes to feed after it: a screen is never emptied for nothing
// (a cut that overtook a catch-up leaves the screen as it was, approximate). emuMu held.
func (t *Terminal) step(until int64) bool {
	t.mu.Lock()
	n := min(len(t.q)-t.head, feedChunk)
	if until >= 0 {
		n = int(min(int64(n), max(until-t.taken, 0)))
	}
	if n == 0 {
		t.mu.Unlock()
		return false
	}
	reset := t.reset
	t.reset = false
	copy(t.chunk, t.q[t.head:t.head+n])
	t.head += n
	t.taken += int64(n)
	if t.head == len(t.q) {
		t.q, t.head = t.q[:0], 0
		if cap(t.q) > idleCap {
			t.q = nil
		}
	}
	t.mu.Unlock()
	if reset {
		t.emu.Reset()
	}
	if !t.emu.Write(t.chunk[:n]) {
		t.failed()
	}
	return true
}

// catchUp feeds the emulator what was written before it, on the caller's goroutine: at most
// snapshotPending bytes, after cutting the queue when more wait, and for at most t.budget, after which
// what still waits is cut to its newest tailBytes, which are fed. A cut made meanwhile (by Write or the
// feeding goroutine: a flood) takes away what it was to feed and starts the emulator again: it then feeds
// the newest tailBytes instead, at most maxReaims times, so the screen shows the flood rather than
// nothing. emuMu held.
func (t *Terminal) catchUp() {
	t.mu.Lock()
	if len(t.q)-t.head > snapshotPending {
		t.cut(nil, keepBytes)
	}
	until := t.queued
	t.mu.Unlock()
	deadline := time.Now().Add(t.budget)
	late, reaims := false, 0
	for {
		t.mu.Lock()
		overtaken := t.reset && t.taken > until && reaims < maxReaims
		if overtaken || !late && !time.Now().Before(deadline) {
			if len(t.q)-t.head > tailBytes {
				t.cut(nil, tailBytes)
			}
			until = t.queued
			if overtaken {
				reaims++
			} else {
				late = true // tailBytes at most from here, whatever they cost
			}
		}
		t.mu.Unlock()
		if !t.step(until) {
			return
		}
	}
}

// maxReaims bounds how often one catch-up starts again from the newest bytes after a cut overtook it.
const maxReaims = 3

// Snapshot returns the screen after everything written so far: it first feeds the emulator what waits
// (when more than 256 KiB waits, the newest 64 KiB after a restart, as in Write), so it returns within
// about 0.3 s. It works after Close.
func (t *Terminal) Snapshot() Screen {
	t.emuMu.Lock()
	defer t.emuMu.Unlock()
	t.catchUp()
	var text []byte
	end := 0 // text's length up to its last row that is not blank
	for y := range t.rows {
		if y > 0 {
			text = append(text, '\n')
		}
		text = t.emu.Row(text, y)
		text = bytes.TrimRight(text, " ")
		if len(text) > 0 && text[len(text)-1] != '\n' {
			end = len(text)
		}
	}
	col, row := t.emu.Cursor()
	t.mu.Lock()
	approximate := t.approximate
	t.mu.Unlock()
	return Screen{
		Text:        string(text[:end]),
		Rows:        t.rows,
		Cols:        t.cols,
		Cursor:      Cursor{Row: min(max(row, 0), t.rows-1) + 1, Col: min(max(col, 0), t.cols-1) + 1},
		AltScreen:   t.emu.AltScreen(),
		Approximate: approximate,
	}
}

// Resize makes the terminal cols×rows (each clamped to MinSize–MaxSize) after feeding what was written
// before it (as Snapshot), so output drawn for the old size is drawn at the old size. The caller resizes
// the pseudo-terminal too (the program learns of it by SIGWINCH).
func (t *Terminal) Resize(cols, rows int) {
	cols, rows = clampSize(cols), clampSize(rows)
	t.emuMu.Lock()
	defer t.emuMu.Unlock()
	t.catchUp()
	t.cols, t.rows = cols, rows
	if !t.emu.Resize(cols, rows) {
		t.failed()
	}
}

// failed marks the screen approximate after the emulator failed and started again empty.
func (t *Terminal) failed() {
	t.mu.Lock()
	t.approximate = true
	t.mu.Unlock()
}

// KeyMode returns the modes that keys are encoded for now (for Keys), after feeding what was written
// before it (as Snapshot): application cursor keys (DECCKM, ESC[?1h) and application keypad (DECKPAM,
// ESC =).
func (t *Terminal) KeyMode() KeyMode {
	t.emuMu.Lock()
	defer t.emuMu.Unlock()
	t.catchUp()
	cursor, keypad := t.emu.Modes()
	return KeyMode{ApplicationCursor: cursor, ApplicationKeypad: keypad}
}

// Close stops the feeding goroutine (it finishes the chunk it feeds, at most 4 KiB) and the answers: reply
// is not called after Close returns, except for a call already under way. Snapshot, Resize and KeyMode
// still work after it, on the caller's goroutine. Close can be called more than once.
func (t *Terminal) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.wake.Broadcast()
	t.replyWake.Broadcast()
	t.mu.Unlock()
	<-t.done
	t.emuMu.Lock()
	t.emu.Close()
	t.emuMu.Unlock()
}

// answer queues the emulator's answer p for reply (called from the emulator's drain goroutine); past
// maxReplies, or after Close, it is dropped.
func (t *Terminal) answer(p []byte) {
	t.mu.Lock()
	if !t.closed && len(t.replies)+len(p) <= maxReplies {
		t.replies = append(t.replies, p...)
		t.replyWake.Signal()
	}
	t.mu.Unlock()
}

// replyLoop hands the queued answers to reply until Close.
func (t *Terminal) replyLoop(reply func([]byte)) {
	var spare []byte
	for {
		t.mu.Lock()
		for len(t.replies) == 0 && !t.closed {
			t.replyWake.Wait()
		}
		if t.closed {
			t.mu.Unlock()
			return
		}
		out := t.replies
		t.replies = spare[:0]
		t.mu.Unlock()
		reply(out)
		spare = out
	}
}
