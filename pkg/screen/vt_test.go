package screen

import (
	"strings"
	"testing"
)

func TestEmulatorReset(t *testing.T) {
	// Reset leaves the emulator as new whatever it was in the middle of.
	for _, before := range []string{
		"plain text\r\nmore",
		"\x1b[?1h\x1b=\x1b[?1049hfull screen\x1b[5;10r\x1b[?6h",
		"\x1b[?69h\x1b[3;6s\x1b(0lqk",
		"\x1b]0;an unterminated title",
		"\x1bPq an unterminated DCS",
		"\x1b[1;2;3",
		"\x1b",
		"\xe2",
		"\xf0\x9f",
		"e\u0301",
	} {
		v := newVT(20, 5, func([]byte) {})
		v.Write([]byte("text\x1b[3;3H"))
		v.Write([]byte(before))
		v.Reset()
		v.Write([]byte("ok"))
		if row := strings.TrimRight(string(v.Row(nil, 0)), " "); row != "ok" {
			t.Errorf("after %q: row 0 is %q", before, row)
		}
		for y := 1; y < 5; y++ {
			if row := strings.TrimSpace(string(v.Row(nil, y))); row != "" {
				t.Errorf("after %q: row %d is %q", before, y, row)
			}
		}
		col, row := v.Cursor()
		cursor, keypad := v.Modes()
		if col != 2 || row != 0 || v.AltScreen() || cursor || keypad {
			t.Errorf("after %q: cursor %d,%d alt %v modes %v %v", before, col, row, v.AltScreen(), cursor, keypad)
		}
		v.Write([]byte("\r\n\r\n\r\n\r\n\r\nlast")) // the scroll region is the whole screen again
		if row := strings.TrimRight(string(v.Row(nil, 4)), " "); row != "last" {
			t.Errorf("after %q: the bottom row is %q", before, row)
		}
		v.Close()
	}
}
