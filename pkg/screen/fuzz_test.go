package screen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// hostile is input built to hurt an emulator; FuzzTerminal starts from a small version of each, and
// TestHostileInput feeds each at full size.
func hostile(scale int) []string {
	return []string{
		"a\xffb\xc3\x28\xe2\x82\xf0\x9f\x98",                     // invalid UTF-8
		"\x00\x01\x02\x7f\x80\x9b\x9d\x90\xfe\xff\x1b\x1b[\x1b]", // binary garbage, C1 bytes
		"\x1b[" + strings.Repeat("1;", 20*scale) + "m",           // a huge parameter list
		"\x1b[" + strings.Repeat("9", 5*scale) + "A",             // a huge parameter
		"\x1b[99999;99999H@\x1b[99999L\x1b[99999M\x1b[99999@\x1b[99999P\x1b[99999X\x1b[99999b\x1b[99999I\x1b[99999Z",
		"\x1b]0;" + strings.Repeat("title", 50*scale),    // an OSC without its terminator
		"\x1bP" + strings.Repeat("q", 100*scale),         // a DCS without its terminator
		"\x1b_" + strings.Repeat("apc", 30*scale) + "\a", // APC
		strings.Repeat("x", 1000*scale),                  // a line of 1 MB
		"e" + strings.Repeat("\u0301", 100*scale),        // one endless grapheme cluster
		strings.Repeat("日👍🏽🇫🇷", scale),
		strings.Repeat("\n", 10*scale), // a scroll per byte
	}
}

// FuzzTerminal feeds any bytes, in pieces, at any size: the Terminal must not panic, and the screen must
// keep its shape: at most Rows rows, none wider than Cols, no trailing spaces or blank rows, valid UTF-8
// without control characters, the cursor on the screen.
func FuzzTerminal(f *testing.F) {
	for _, seed := range append(hostile(1),
		"",
		"hello\r\nworld",
		"10%\r50%\r100%\n",
		"\x1b[2J\x1b[3;5HX\x1b[?1049hfull\x1b[?1049l",
		"\x1b[?1h\x1b=\x1b[6n\x1b[c\x1b[>c\x1b]11;?\a\x1b[?2004h",
		"\x1b[5;10r\x1b[?6h\x1b[10;1H"+strings.Repeat("scroll\n", 50),
		"\x1b[?69h\x1b[5;10s\x1b[1;1H"+strings.Repeat("margin ", 50),
		"\x1b#8\x1b(0lqqk\x1b(B\x1bc",
		"\x1b[?3h\x1b[?5h\x1b[?25l\x1b[?1049h\x1bc",
		"\x1b[8;5;5t\x1b[18t\x1b[21t",
	) {
		f.Add([]byte(seed), uint8(80), uint8(24), uint16(4096))
	}
	f.Add([]byte("wide 日本"), uint8(0), uint8(0), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, cols, rows uint8, piece uint16) {
		term := New(int(cols)%120, int(rows)%50, func([]byte) {})
		defer term.Close()
		n := max(int(piece), len(data)/64, 1) // at most 64 writes
		for i := 0; len(data) > 0; i++ {
			k := min(n, len(data))
			term.Write(data[:k])
			data = data[k:]
			if i%8 == 7 {
				check(t, term.Snapshot())
			}
		}
		check(t, term.Snapshot())
		term.Resize(int(rows)%50, int(cols)%120)
		check(t, term.Snapshot())
	})
}

func check(t *testing.T, s Screen) {
	t.Helper()
	if s.Cols < MinSize || s.Rows < MinSize || s.Cols > MaxSize || s.Rows > MaxSize {
		t.Fatalf("size %d×%d", s.Cols, s.Rows)
	}
	if s.Cursor.Row < 1 || s.Cursor.Row > s.Rows || s.Cursor.Col < 1 || s.Cursor.Col > s.Cols {
		t.Fatalf("cursor %+v outside %d×%d", s.Cursor, s.Cols, s.Rows)
	}
	if !utf8.ValidString(s.Text) {
		t.Fatalf("invalid UTF-8: %q", s.Text)
	}
	if s.Text == "" {
		return
	}
	lines := strings.Split(s.Text, "\n")
	if len(lines) > s.Rows {
		t.Fatalf("%d rows on a screen of %d", len(lines), s.Rows)
	}
	if lines[len(lines)-1] == "" {
		t.Fatalf("a trailing blank row: %q", s.Text)
	}
	for _, line := range lines {
		if w := ansi.StringWidth(line); w > s.Cols {
			t.Fatalf("a row of width %d on a screen of %d: %q", w, s.Cols, line)
		}
		if strings.HasSuffix(line, " ") {
			t.Fatalf("trailing space: %q", line)
		}
		if i := bytes.IndexFunc([]byte(line), isControl); i >= 0 {
			t.Fatalf("a control character at %d: %q", i, line)
		}
	}
}

func TestHostileInput(t *testing.T) {
	for i, in := range hostile(1000) {
		for _, piece := range []int{4096, 65536, len(in)} {
			t.Run(fmt.Sprintf("%d/%d", i, piece), func(t *testing.T) {
				term := New(80, 24, nil)
				defer term.Close()
				for data := []byte(in); len(data) > 0; {
					k := min(piece, len(data))
					term.Write(data[:k])
					data = data[k:]
				}
				check(t, term.Snapshot())
			})
		}
	}
}
