package screen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// answers collects a Terminal's replies.
type answers struct{ ch chan []byte }

func (a answers) reply(p []byte) { a.ch <- bytes.Clone(p) }

// next returns the next reply; the bound only keeps a broken build from hanging the run.
func (a answers) next(t *testing.T) string {
	t.Helper()
	select {
	case p := <-a.ch:
		return string(p)
	case <-time.After(30 * time.Second):
		t.Fatal("no reply")
		return ""
	}
}

func newTerminal(t *testing.T, cols, rows int) (*Terminal, answers) {
	a := answers{ch: make(chan []byte, 64)}
	term := New(cols, rows, a.reply)
	t.Cleanup(term.Close)
	return term, a
}

func TestScreenText(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		cols, rows int
		text       string
		cursor     Cursor
		alt        bool
	}{
		{name: "empty", in: "", text: "", cursor: Cursor{1, 1}},
		{name: "CR progress bar", in: "10%\r50%\r100%\n", text: "100%", cursor: Cursor{2, 5}}, // a bare LF keeps the column
		{name: "CR progress bar through ONLCR", in: "10%\r50%\r100%\r\n", text: "100%", cursor: Cursor{2, 1}},
		{name: "progress bar redrawn shorter", in: "[#####     ] 50%\r[##########] 100%", text: "[##########] 100%", cursor: Cursor{1, 18}},
		{name: "CRLF lines", in: "one\r\ntwo\r\n", text: "one\ntwo", cursor: Cursor{3, 1}},
		{name: "bare LF keeps the column", in: "ab\ncd", text: "ab\n  cd", cursor: Cursor{2, 5}},
		{name: "clear screen and cursor moves", in: "hello\r\nworld\x1b[2J\x1b[3;5HX\x1b[1;1HY", text: "Y\n\n    X", cursor: Cursor{1, 2}},
		{name: "overwrite in place", in: "abc\x1b[1;1Hz", text: "zbc", cursor: Cursor{1, 2}},
		{name: "erase to end of line", in: "abcdef\x1b[1;3H\x1b[K", text: "ab", cursor: Cursor{1, 3}},
		{name: "backspace", in: "abc\bd", text: "abd", cursor: Cursor{1, 4}},
		{name: "tab", in: "a\tb", text: "a       b", cursor: Cursor{1, 10}},
		{name: "colours are not text", in: "\x1b[1;31mred\x1b[0m plain \x1b[38;5;200mx\x1b[m", text: "red plain x", cursor: Cursor{1, 12}},
		{name: "trailing spaces and blank rows dropped", in: "a   \r\n\r\n   \r\n", text: "a", cursor: Cursor{4, 1}},
		{name: "blank rows inside kept", in: "a\r\n\r\nb", text: "a\n\nb", cursor: Cursor{3, 2}},
		{name: "wide characters once", in: "日本語 ok\r\n👍x", text: "日本語 ok\n👍x", cursor: Cursor{2, 4}},
		{name: "combining mark", in: "e\u0301!", text: "e\u0301!", cursor: Cursor{1, 3}},
		{name: "invalid UTF-8 is U+FFFD, and what follows stays", in: "a\xffb\xe9\r\nc\xc3", text: "a\uFFFDb\uFFFD\nc", cursor: Cursor{2, 2}},
		{name: "wraps at the width", cols: 10, rows: 5, in: "0123456789abc", text: "0123456789\nabc", cursor: Cursor{2, 4}},
		{name: "scrolls", cols: 10, rows: 3, in: "1\r\n2\r\n3\r\n4\r\n5", text: "3\n4\n5", cursor: Cursor{3, 2}},
		{name: "OSC title is not text", in: "\x1b]0;my title\x07shown", text: "shown", cursor: Cursor{1, 6}},
		{name: "alt screen", in: "main\x1b[?1049hfull", text: "full", cursor: Cursor{1, 5}, alt: true},
		{name: "alt screen left", in: "main\x1b[?1049hfull\x1b[?1049l", text: "main", cursor: Cursor{1, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, rows := tc.cols, tc.rows
			if cols == 0 {
				cols, rows = 80, 24
			}
			term, _ := newTerminal(t, cols, rows)
			if _, err := term.Write([]byte(tc.in)); err != nil {
				t.Fatal(err)
			}
			s := term.Snapshot()
			want := Screen{Text: tc.text, Rows: rows, Cols: cols, Cursor: tc.cursor, AltScreen: tc.alt}
			if s != want {
				t.Errorf("in %q:\n got %+v\nwant %+v", tc.in, s, want)
			}
		})
	}
}

func TestWritesInPieces(t *testing.T) {
	// A sequence or a character split over writes is the same as written whole.
	in := "\x1b[31m日本\x1b[0m\r\n\x1b]0;title\x07ok\x1b[?1049hfull\x1b[?1049l"
	whole, _ := newTerminal(t, 40, 5)
	whole.Write([]byte(in))
	want := whole.Snapshot()
	for i := range len(in) {
		term, _ := newTerminal(t, 40, 5)
		term.Write([]byte(in[:i]))
		term.Snapshot() // fed up to the cut
		term.Write([]byte(in[i:]))
		if got := term.Snapshot(); got != want {
			t.Errorf("split at %d: got %+v, want %+v", i, got, want)
		}
	}
}

func TestScreenJSON(t *testing.T) {
	b, err := json.Marshal(Screen{Text: "a", Rows: 40, Cols: 120, Cursor: Cursor{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"text":"a","rows":40,"cols":120,"cursor":{"row":1,"col":2},"altScreen":false}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = json.Marshal(Screen{Approximate: true})
	if !strings.Contains(string(b), `"approximate":true`) {
		t.Errorf("approximate missing: %s", b)
	}
}

func TestShowing(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"python prompt", "Python\r\n>>> ", true},
		{"read -p prompt", "Name: ", true},
		{"prompt with a wide character", "名前: ", true},
		{"a line ending in a newline", "done\r\n", false},
		{"nothing", "", false},
		{"cursor on the text", "abc\x1b[1;2H", false},
		{"text after the cursor", "Name:  [default]\x1b[1;7H", false},
		{"alternate screen", "\x1b[?1049h", true},
		{"alternate screen with text", "\x1b[?1049h\x1b[Hmenu\r\n", true},
		{"partial line of a progress bar reads as a prompt", "50%", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, _ := newTerminal(t, 80, 24)
			term.Write([]byte(tc.in))
			s := term.Snapshot()
			if got := s.Showing(); got != tc.want {
				t.Errorf("%+v: Showing() = %v, want %v", s, got, tc.want)
			}
		})
	}
	// From the exported fields alone, as a client gets them in JSON.
	if !(Screen{Text: ">>>", Rows: 24, Cols: 80, Cursor: Cursor{1, 5}}).Showing() {
		t.Error("a prompt row read from JSON")
	}
	if (Screen{Text: ">>>", Rows: 24, Cols: 80, Cursor: Cursor{3, 1}}).Showing() {
		t.Error("a cursor past the text's rows")
	}
}

func TestQueryReplies(t *testing.T) {
	for _, tc := range []struct {
		name, in, prefix string
	}{
		{"cursor position", "ab\r\n\x1b[6n", "\x1b[2;1R"},
		{"cursor position after text", "abc\x1b[6n", "\x1b[1;4R"},
		{"primary device attributes", "\x1b[c", "\x1b[?"},
		{"primary device attributes with 0", "\x1b[0c", "\x1b[?"},
		{"secondary device attributes", "\x1b[>c", "\x1b[>"},
		{"operating status", "\x1b[5n", "\x1b[0n"},
		{"mode query", "\x1b[?1$p", "\x1b[?1;2$y"},
		{"text area size", "\x1b[18t", "\x1b[8;24;80t"},
		{"screen size", "\x1b[19t", "\x1b[9;24;80t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, a := newTerminal(t, 80, 24)
			term.Write([]byte(tc.in))
			term.Snapshot()
			if got := a.next(t); !strings.HasPrefix(got, tc.prefix) || (tc.prefix[len(tc.prefix)-1] == 'R' && got != tc.prefix) {
				t.Errorf("reply to %q: %q, want %q…", tc.in, got, tc.prefix)
			}
		})
	}
}

func TestRepliesNeverBlockTheEmulator(t *testing.T) {
	// A reply that never returns (a program that does not read its input, a full pseudo-terminal) holds
	// neither the emulator nor Snapshot: 100 000 queries are answered into a bounded queue.
	block := make(chan struct{})
	defer close(block)
	term := New(80, 24, func([]byte) { <-block })
	defer term.Close()
	term.Write(bytes.Repeat([]byte("\x1b[6n"), 100_000))
	term.Write([]byte("\r\nstill here"))
	if s := term.Snapshot(); !strings.Contains(s.Text, "still here") {
		t.Errorf("screen %q", s.Text)
	}
}

func TestNilReply(t *testing.T) {
	term := New(80, 24, nil)
	defer term.Close()
	term.Write([]byte("\x1b[6n\x1b[c\x1b[>cok"))
	if s := term.Snapshot(); s.Text != "ok" {
		t.Errorf("screen %q", s.Text)
	}
}

func TestKeyMode(t *testing.T) {
	term, _ := newTerminal(t, 80, 24)
	for _, step := range []struct {
		in   string
		want KeyMode
	}{
		{"", KeyMode{}},
		{"\x1b[?1h", KeyMode{ApplicationCursor: true}},
		{"\x1b=", KeyMode{ApplicationCursor: true, ApplicationKeypad: true}},
		{"\x1b[?1l", KeyMode{ApplicationKeypad: true}},
		{"\x1b>", KeyMode{}},
		{"\x1b[?1h\x1b=\x1bc", KeyMode{}}, // a full reset (RIS)
		{"\x1b[?1049h\x1b[?1h", KeyMode{ApplicationCursor: true}},
	} {
		term.Write([]byte(step.in))
		if got := term.KeyMode(); got != step.want {
			t.Errorf("after %q: %+v, want %+v", step.in, got, step.want)
		}
	}
}

func TestResize(t *testing.T) {
	term, _ := newTerminal(t, 80, 24)
	term.Write([]byte("first\r\nsecond"))
	term.Resize(40, 10)
	s := term.Snapshot()
	if s.Rows != 10 || s.Cols != 40 || s.Text != "first\nsecond" || s.Cursor != (Cursor{2, 7}) {
		t.Errorf("after resize: %+v", s)
	}
	term.Write([]byte("\r\n" + strings.Repeat("x", 45)))
	if s := term.Snapshot(); s.Text != "first\nsecond\n"+strings.Repeat("x", 40)+"\n"+strings.Repeat("x", 5) {
		t.Errorf("wrapped at the new width: %q", s.Text)
	}
	term.Resize(0, 5000)
	if s := term.Snapshot(); s.Cols != MinSize || s.Rows != MaxSize {
		t.Errorf("clamped to %dx%d", s.Cols, s.Rows)
	}
	if s := New(-1, 1, nil).Snapshot(); s.Cols != MinSize || s.Rows != MinSize {
		t.Errorf("New clamps: %dx%d", s.Cols, s.Rows)
	}
}

func TestOverflow(t *testing.T) {
	// 3 MiB written at once: the queue never holds more than its bound, the emulator starts again from the
	// newest output, and the screen shows the newest line.
	term, _ := newTerminal(t, 80, 24)
	var chunk bytes.Buffer
	last := 0
	for written := 0; written < 3<<20; {
		chunk.Reset()
		for chunk.Len() < 32<<10 {
			last++
			fmt.Fprintf(&chunk, "line %07d\r\n", last)
		}
		term.Write(chunk.Bytes())
		written += chunk.Len()
		term.mu.Lock()
		pending, capacity := len(term.q)-term.head, cap(term.q)
		term.mu.Unlock()
		if pending > maxPending || capacity > queueCap {
			t.Fatalf("after %d bytes: %d bytes wait in a buffer of %d", written, pending, capacity)
		}
	}
	s := term.Snapshot()
	if !s.Approximate {
		t.Error("not approximate")
	}
	lines := strings.Split(s.Text, "\n")
	if want := fmt.Sprintf("line %07d", last); lines[len(lines)-1] != want || len(lines) != 23 {
		t.Errorf("screen ends %q (%d rows), want %q", lines[len(lines)-1], len(lines), want)
	}
	// Approximate stays.
	term.Write([]byte("more\r\n"))
	if !term.Snapshot().Approximate {
		t.Error("approximate did not stay")
	}
}

func TestOneHugeWrite(t *testing.T) {
	// One write of 10 MB keeps only its newest 64 KiB; a line of 1 MB without a newline is cut at a
	// character's start.
	term, _ := newTerminal(t, 80, 24)
	line := bytes.Repeat([]byte("é"), 5<<20)
	term.Write(line)
	term.mu.Lock()
	pending := len(term.q) - term.head
	term.mu.Unlock()
	if pending > keepBytes {
		t.Errorf("%d bytes wait", pending)
	}
	s := term.Snapshot()
	if !s.Approximate || strings.Trim(s.Text, "é\n") != "" || !strings.HasSuffix(s.Text, "é") {
		t.Errorf("screen %+v", s)
	}
}

func TestSnapshotCutsALongQueue(t *testing.T) {
	// Under the Write bound but over Snapshot's: Snapshot feeds only the newest 64 KiB.
	term := New(80, 24, nil)
	term.Close() // no feeding goroutine: everything written waits
	var in bytes.Buffer
	for i := 0; in.Len() < 512<<10; i++ {
		fmt.Fprintf(&in, "row %d\r\n", i)
	}
	in.WriteString("the end")
	term.Write(in.Bytes())
	s := term.Snapshot()
	if !s.Approximate || !strings.HasSuffix(s.Text, "the end") {
		t.Errorf("screen %+v", s)
	}
	// A small queue is fed whole, and does not make the screen approximate.
	small := New(80, 24, nil)
	small.Close()
	small.Write([]byte("a\r\nb"))
	if s := small.Snapshot(); s.Approximate || s.Text != "a\nb" {
		t.Errorf("screen %+v", s)
	}
}

func TestClose(t *testing.T) {
	term, _ := newTerminal(t, 80, 24)
	term.Write([]byte("before"))
	term.Close()
	term.Close()
	if s := term.Snapshot(); s.Text != "before" {
		t.Errorf("after Close: %q", s.Text)
	}
	term.Write([]byte("\r\nafter\x1b[6n"))
	if s := term.Snapshot(); s.Text != "before\nafter" {
		t.Errorf("written after Close: %q", s.Text)
	}
	term.Resize(20, 5)
	if s := term.Snapshot(); s.Cols != 20 || s.Rows != 5 {
		t.Errorf("resized after Close: %+v", s)
	}
	if m := term.KeyMode(); m != (KeyMode{}) {
		t.Errorf("KeyMode after Close: %+v", m)
	}
}

func TestRepeatedOperationsAreCut(t *testing.T) {
	// x/vt repeats REP, CHT, CBT… n times; n is cut to what the screen can show, which changes nothing
	// on the screen: the same as a count x/vt does itself.
	for _, tc := range []struct{ name, huge, small string }{
		{"repeat", "x\x1b[65535b", "x\x1b[35b"},
		{"tab forward", "\x1b[999999999999999999999999999999I", "\x1b[20I"},
		{"tab back", "\x1b[1;9H\x1b[999999999999999999999999999999Z", "\x1b[1;9H\x1b[20Z"},
		{"delete lines", "a\r\nb\r\nc\x1b[1;1H\x1b[65535M", "a\r\nb\r\nc\x1b[1;1H\x1b[3M"},
		{"scroll up", "a\r\nb\r\nc\x1b[65535S", "a\r\nb\r\nc\x1b[3S"},
		{"erase characters", "abcdefghij\x1b[1;3H\x1b[65535X", "abcdefghij\x1b[1;3H\x1b[8X"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			huge, _ := newTerminal(t, 10, 3)
			huge.Write([]byte(tc.huge))
			small, _ := newTerminal(t, 10, 3)
			small.Write([]byte(tc.small))
			if h, s := huge.Snapshot(), small.Snapshot(); h != s || h.Approximate {
				t.Errorf("%q: %+v\n%q: %+v", tc.huge, h, tc.small, s)
			}
		})
	}
}

func TestCatchUpBudget(t *testing.T) {
	// Past its time budget (0 here) a Snapshot cuts what still waits to the newest 4 KiB and feeds that.
	term := New(80, 24, nil)
	term.Close() // nothing feeds in the background
	term.budget = 0
	var in bytes.Buffer
	for i := 0; in.Len() < 200<<10; i++ {
		fmt.Fprintf(&in, "row %d\r\n", i)
	}
	in.WriteString("the newest")
	term.Write(in.Bytes())
	s := term.Snapshot()
	if !s.Approximate || !strings.HasSuffix(s.Text, "\nthe newest") {
		t.Errorf("screen %+v", s)
	}
	term.mu.Lock()
	pending := len(term.q) - term.head
	term.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d bytes still wait", pending)
	}
}

func TestMarginsPastTheEdge(t *testing.T) {
	// x/vt v0.1.0 indexed past its buffer for margins past the screen's edge (found by FuzzTerminal): they
	// are cut to the edge, as a terminal does.
	for _, tc := range []struct {
		name       string
		cols, rows int
		in         string
	}{
		{"left and right", 9, 2, "\x1b[?69h\x1b[;10s0000000000000000000"},
		{"top and bottom", 7, 8, "\x1b[7;10r\x1b[?6h\x1b[10H\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, _ := newTerminal(t, tc.cols, tc.rows)
			term.Write([]byte(tc.in))
			s := term.Snapshot()
			if s.Approximate {
				t.Errorf("the emulator failed: %+v", s)
			}
			check(t, s)
		})
	}
}

func TestLibraryPanicIsContained(t *testing.T) {
	// A panic in the library restarts the emulator empty; the Terminal says approximate and goes on.
	v := newVT(20, 5, func([]byte) {})
	v.Write([]byte("before"))
	before := v.e
	if v.guard(func() { panic("a bug in the library") }) {
		t.Error("guard reported success")
	}
	if v.e == before || strings.TrimSpace(string(v.Row(nil, 0))) != "" {
		t.Error("not a new emulator")
	}
	v.Close()

	term, _ := newTerminal(t, 20, 5)
	term.emuMu.Lock()
	term.emu = failing{term.emu}
	term.emuMu.Unlock()
	term.Write([]byte("x"))
	if s := term.Snapshot(); !s.Approximate {
		t.Errorf("screen %+v", s)
	}
}

// failing is an emulator whose every Write fails (as after a panic).
type failing struct{ emulator }

func (f failing) Write(p []byte) bool { f.emulator.Write(p); return false }

func TestQueryAfterAFlood(t *testing.T) {
	// A program that floods and then asks where the cursor is gets its answer without anyone reading the
	// screen: the feeding goroutine, which stopped during the flood, feeds the newest output once it pauses.
	term, a := newTerminal(t, 80, 24)
	line := []byte(strings.Repeat("flood ", 13) + "\r\n")
	for range (3 << 20) / len(line) {
		term.Write(line)
	}
	term.Write([]byte("prompt> \x1b[6n"))
	if got := a.next(t); got != "\x1b[24;9R" {
		t.Errorf("reply %q", got)
	}
	if s := term.Snapshot(); !s.Approximate || !strings.HasSuffix(s.Text, "\nprompt>") {
		t.Errorf("screen %+v", s)
	}
}

// TestSnapshotDuringAFlood: a Snapshot read while a flood goes on shows the flood, not a blank screen. A
// cut by Write (or by the feeding goroutine) during the Snapshot's catch-up used to drop what it was to
// feed and leave the emulator reset with nothing fed: most screens read during `yes` were blank (20 of
// 20 here).
func TestSnapshotDuringAFlood(t *testing.T) {
	term := New(80, 24, nil)
	defer term.Close()
	chunk := bytes.Repeat([]byte("y\r\n"), 16<<10/3)
	stop := make(chan struct{})
	flooding := make(chan struct{})
	term.Write(chunk) // the flood has begun before the first read
	go func() {
		defer close(flooding)
		for {
			select {
			case <-stop:
				return
			default:
				term.Write(chunk)
				time.Sleep(time.Millisecond) // about 16 MB/s: faster than a pseudo-terminal passes `yes`
			}
		}
	}()
	blank := 0
	for range 20 {
		if s := term.Snapshot(); !strings.HasPrefix(s.Text, "y\ny\n") {
			t.Logf("screen %q, approximate %v", s.Text[:min(len(s.Text), 20)], s.Approximate)
			blank++
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	<-flooding
	if blank > 0 {
		t.Errorf("%d of 20 screens read during a flood did not show it", blank)
	}
}
