package screen

import (
	"fmt"
	"strings"
	"testing"
)

// TestUTF8Fix: bytes that are not UTF-8 become U+FFFD, whatever follows them; a sequence cut between writes
// is whole again; valid text passes as it is.
func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		writes []string
		want   string
	}{
		{[]string{"plain ascii\r\n"}, "plain ascii\r\n"},
		{[]string{"caf\xc3\xa9"}, "café"},
		{[]string{"caf\xe9\r\nnext"}, "caf\uFFFD\r\nnext"},
		{[]string{"\xe9A"}, "\uFFFDA"},
		{[]string{"\xc3\r\n2nd"}, "\uFFFD\r\n2nd"},
		{[]string{"\x80\xbf"}, "\uFFFD\uFFFD"},
		{[]string{"a\xe2\x82", "\xacb"}, "a€b"},                            // € cut after two of its three bytes
		{[]string{"a\xf0", "\x9f\x98", "\x80!"}, "a😀!"},                    // cut twice
		{[]string{"a\xe2\x82", "Z"}, "a\uFFFD\uFFFDZ"},                     // a cut start that never completes
		{[]string{"\xed\xa0\x80"}, "\uFFFD\uFFFD\uFFFD"},                   // a surrogate is no UTF-8
		{[]string{"a\x1b[1mb\x1b[0m"}, "a\x1b[1mb\x1b[0m"},                 // CSI passes
		{[]string{"\x1b]0;title\x07x"}, "\x1b]0;title\x07x"},               // a short OSC passes whole
		{[]string{"\x1b]11;?\x1b\\x"}, "\x1b]11;?\x1b\\x"},                 // with ST
		{[]string{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"}, "link"},     // hyperlinks go
		{[]string{"\x1b]0;" + strings.Repeat(";", 5000) + "\x07ok"}, "ok"}, // a long OSC goes
		{[]string{"\x1b]0;ab", "cd\x07ok"}, "\x1b]0;abcd\x07ok"},           // cut between writes
		{[]string{"\x1bP$qm\x1b\\"}, "\x1bP$qm\x1b\\"},                     // a short DCS passes
		{[]string{"\x1b]0;ab\x18after"}, "after"},                          // CAN abandons it
		{[]string{"\x1b]0;ab\x1b[1mX"}, "\x1b]0;ab\x1b\\\x1b[1mX"},         // an ESC ends it
		{[]string{"a" + strings.Repeat("\u0301", 20) + "b"}, "a" + strings.Repeat("\u0301", 8) + "b"},
		{[]string{"\x1b", "[2J"}, "\x1b[2J"}, // ESC cut from its sequence
	} {
		var f filter
		var got strings.Builder
		for _, w := range tc.writes {
			got.Write(f.fix([]byte(w)))
		}
		if got.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.writes, got.String(), tc.want)
		}
	}
}

// TestResizeKeepsTheScreen: a resize starts a new emulator of the new size with the old screen's text,
// cursor and modes; a smaller one keeps the rows up to the cursor's, cut to the new width.
func TestResizeKeepsTheScreen(t *testing.T) {
	term := New(20, 6, nil)
	defer term.Close()
	term.Write([]byte("one\r\ntwo\r\nthree is long\r\n\x1b[?1h>>> x"))
	term.Resize(8, 3)
	s := term.Snapshot()
	if s.Text != "two\nthree is\n>>> x" || s.Cursor != (Cursor{3, 6}) || s.Cols != 8 || s.Rows != 3 {
		t.Errorf("after the resize: %+v", s)
	}
	if !term.KeyMode().ApplicationCursor {
		t.Error("application cursor keys lost in the resize")
	}
	term.Resize(30, 10)
	if s := term.Snapshot(); s.Text != "two\nthree is\n>>> x" || s.Cursor != (Cursor{3, 6}) {
		t.Errorf("after growing: %+v", s)
	}
}

// TestCutRedraw: a full-screen redraw without line ends, cut when the emulator falls behind, restarts at an
// escape sequence: no parameter of a sequence cut in half shows as text.
func TestCutRedraw(t *testing.T) {
	term := New(40, 10, nil)
	defer term.Close()
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "\x1b[%d;%dH\x1b[38;5;%dm X \x1b[0m", i%5+6, i%37+1, i%256) // rows 6-10: a fragment at the top would stay
	}
	term.Write([]byte(b.String()))
	s := term.Snapshot()
	if strings.Trim(s.Text, " X\n") != "" || !s.Approximate {
		t.Errorf("screen %q (approximate %v): fragments of cut sequences", s.Text, s.Approximate)
	}
}
