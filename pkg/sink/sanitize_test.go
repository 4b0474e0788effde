package sink

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// sanitizeCases: raw input split into writes → sanitized text.
var sanitizeCases = []struct {
	name string
	in   []string
	want string
}{
	{"plain", []string{"hello\n"}, "hello\n"},
	{"empty", nil, ""},
	{"CSI colours", []string{"\x1b[31mred\x1b[0m \x1b[1;32mgreen\x1b[m\n"}, "red green\n"},
	{"CSI private and erase", []string{"\x1b[?25l\x1b[2K\x1b[1Gok\x1b[?25h"}, "ok"},
	{"CSI split across writes", []string{"a\x1b", "[3", "1", "mb"}, "ab"},
	{"OSC 8 hyperlink BEL", []string{"\x1b]8;;https://example.com/é\x07link\x1b]8;;\x07\n"}, "link\n"},
	{"OSC 8 hyperlink ST", []string{"\x1b]8;id=1;https://example.com\x1b\\link\x1b]8;;\x1b\\\n"}, "link\n"},
	{"OSC ST split", []string{"a\x1b]0;title\x1b", "\\b"}, "ab"},
	{"OSC title", []string{"\x1b]0;my title\x07text"}, "text"},
	{"DCS", []string{"\x1bPq#0;2;0;0;0#1!6~-\x1b\\after"}, "after"},
	{"SOS PM APC", []string{"\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\x"}, "x"},
	{"two-byte", []string{"\x1b7save\x1b8\x1b=\x1b>\x1bM\x1bc"}, "save"},
	{"charset", []string{"a\x1b(Bb\x1b)0c"}, "abc"},
	{"lone ST", []string{"a\x1b\\b"}, "ab"},
	{"unterminated at end", []string{"abc\x1b[31"}, "abc[31"},
	{"unterminated OSC at end", []string{"abc\x1b]0;ti"}, "abc]0;ti"},
	{"lone ESC at end", []string{"abc\x1b"}, "abc"},
	{"ESC ESC", []string{"a\x1b\x1b[1mb"}, "ab"},
	{"CSI cut by newline", []string{"\x1b[12\nx"}, "[12\nx"},
	{"CSI cut by ESC", []string{"\x1b[12\x1b[0mx"}, "[12x"},
	{"OSC cut by newline", []string{"\x1b]0;title\nnext line\n"}, "]0;title\nnext line\n"},
	{"OSC cut by ESC inside a character", []string{"\x1b]\xc3\x1b\x9fx"}, "]\uFFFD\uFFFDx"},
	{"OSC cut by other ESC", []string{"\x1b]0;t\x1b[1mx"}, "]0;tx"},
	{"ESC with bad byte", []string{"a\x1b\x01b"}, "ab"},
	{"escape bound: too long is text", []string{"\x1b]" + strings.Repeat("x", 5000) + "\x07\n"}, "]" + strings.Repeat("x", 5000) + "\n"},
	{"escape bound: longest removed", []string{"\x1b]" + strings.Repeat("x", MaxEscapeBytes-3) + "\x07ok"}, "ok"},
	{"escape bound: one over", []string{"\x1b]" + strings.Repeat("x", MaxEscapeBytes-2) + "\x07ok"}, "]" + strings.Repeat("x", MaxEscapeBytes-2) + "ok"},
	{"escape bound: ST at the edge", []string{"\x1b]" + strings.Repeat("y", MaxEscapeBytes-4) + "\x1b\\ok"}, "ok"},
	{"escape bound: ST one over", []string{"\x1b]" + strings.Repeat("y", MaxEscapeBytes-3) + "\x1b\\ok"}, "]" + strings.Repeat("y", MaxEscapeBytes-3) + "ok"},
	{"CRLF", []string{"a\r\nb\r\n"}, "a\nb\n"},
	{"CRLF split", []string{"a\r", "\nb\r", "\n"}, "a\nb\n"},
	{"CR overwrite", []string{"p 10%\rp 100%\x1b[K\n"}, "p 100%\n"},
	{"CR overwrite split", []string{"p 10%", "\r", "p 100%\n"}, "p 100%\n"},
	{"CR progress", []string{"\r 1%\r 50%\r100%\ndone\n"}, "100%\ndone\n"},
	{"CR at end kept", []string{"done\r"}, "done"},
	{"CR then erase then newline", []string{"p 100%\r\x1b[K\n"}, "p 100%\n"},
	{"CR CR LF", []string{"a\r\r\nb"}, "a\nb"},
	{"CR only touches its line", []string{"one\ntwo\rTWO\n"}, "one\nTWO\n"},
	{"CR then tab", []string{"abc\r\tx"}, "\tx"},
	{"tab kept", []string{"a\tb\n"}, "a\tb\n"},
	{"BEL removed", []string{"a\x07b"}, "ab"},
	{"C0 and DEL removed", []string{"a\x01\x02\x08\x0b\x0c\x7fb"}, "ab"},
	{"C1 removed", []string{"a\xc2\x9b1m\xc2\x85b"}, "a1mb"},
	{"NBSP kept", []string{"a\xc2\xa0b"}, "a\u00a0b"},
	{"invalid byte", []string{"a\xffb"}, "a\uFFFDb"},
	{"lone continuation", []string{"a\x80\x80b"}, "a\uFFFD\uFFFDb"},
	{"truncated char then ASCII", []string{"\xe2\x82a"}, "\uFFFDa"},
	{"truncated char at end", []string{"a\xe2\x82"}, "a\uFFFD"},
	{"surrogate", []string{"\xed\xa0\x80"}, "\uFFFD\uFFFD\uFFFD"},
	{"overlong", []string{"\xc0\xaf\xe0\x80\xaf"}, "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"above U+10FFFF", []string{"\xf4\x90\x80\x80"}, "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"truncated 4-byte then ESC", []string{"\xf0\x9f\x98\x1b[1mx"}, "\uFFFDx"},
	{"é split", []string{"caf\xc3", "\xa9\n"}, "café\n"},
	{"U+FFFD itself", []string{"\uFFFD"}, "\uFFFD"},
	{"CR discard bound", []string{strings.Repeat("x", MaxOverwriteBytes+1) + "\ry\n"}, strings.Repeat("x", MaxOverwriteBytes+1) + "y\n"},
	{"CR discard at bound", []string{strings.Repeat("x", MaxOverwriteBytes) + "\ry\n"}, "y\n"},
	{"CR discard after long run", []string{strings.Repeat("x", MaxOverwriteBytes+1) + "\ra\rb\n"}, strings.Repeat("x", MaxOverwriteBytes+1) + "b\n"},
}

func TestSanitize(t *testing.T) {
	for _, tc := range sanitizeCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := strings.Join(tc.in, "")
			if got := string(refSanitize([]byte(raw), MaxEscapeBytes, MaxOverwriteBytes)); got != tc.want {
				t.Fatalf("reference: got %q, want %q", got, tc.want)
			}
			// NewSanitizer, with the given writes.
			var out bytes.Buffer
			w := NewSanitizer(&out)
			for _, p := range tc.in {
				if _, err := w.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Fatalf("NewSanitizer: got %q, want %q", got, tc.want)
			}
			// The sink, with the given writes, shows the same text.
			s := New(Options{MaxBytes: 1 << 20, Head: -1, Tail: -1})
			for _, p := range tc.in {
				if _, err := s.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if sum := s.Close(); sum.Text != tc.want || sum.TotalBytes != int64(len(tc.want)) {
				t.Fatalf("sink: got %q (%d bytes), want %q", sum.Text, sum.TotalBytes, tc.want)
			}
			// And any other split gives the same.
			checkSink(t, Options{MaxBytes: 1 << 20, Head: -1, Tail: -1}, []byte(raw), 1)
		})
	}
}

// A 4-byte character split across every possible write boundary.
func TestSanitizeEmojiSplits(t *testing.T) {
	in := []byte("a😀b\n")
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out bytes.Buffer
			w := NewSanitizer(&out)
			w.Write(in[:i])
			w.Write(in[i:j])
			w.Write(in[j:])
			w.Close()
			if out.String() != "a😀b\n" {
				t.Fatalf("split %d,%d: %q", i, j, out.String())
			}
			s := New(Options{Head: -1, Tail: -1})
			s.Write(in[:i])
			s.Write(in[i:j])
			s.Write(in[j:])
			if got := s.Close().Text; got != "a😀b\n" {
				t.Fatalf("sink split %d,%d: %q", i, j, got)
			}
		}
	}
}

func TestSanitizerWriteError(t *testing.T) {
	boom := errors.New("boom")
	w := NewSanitizer(errWriter{boom})
	w.Write([]byte("line\n"))
	if _, err := w.Write([]byte("x\n")); !errors.Is(err, boom) {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
}

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

// NewSanitizer holds at most one run of a line (MaxOverwriteBytes) plus its buffer: a long line
// without CR is written through.
func TestSanitizerBounded(t *testing.T) {
	var out countWriter
	w := NewSanitizer(&out).(*sanitizeWriter)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	for range 64 { // 2 MiB in one line
		w.Write(chunk)
		if len(w.run) > MaxOverwriteBytes || cap(w.run) > 2*MaxOverwriteBytes {
			t.Fatalf("holds %d bytes (cap %d)", len(w.run), cap(w.run))
		}
	}
	w.Close()
	if out.n != 64*int64(len(chunk)) {
		t.Fatalf("wrote %d", out.n)
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
