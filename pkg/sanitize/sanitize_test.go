package sanitize_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// Every case, through the reference and through NewWriter with the given writes (the sink's tests check
// that it shows the same text).
func TestSanitize(t *testing.T) {
	for _, tc := range sanitizetest.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			raw := strings.Join(tc.In, "")
			if got := string(sanitizetest.Reference([]byte(raw), sanitize.MaxEscapeBytes, sanitize.MaxOverwriteBytes)); got != tc.Want {
				t.Fatalf("reference: got %q, want %q", got, tc.Want)
			}
			// NewWriter, with the given writes.
			var out bytes.Buffer
			w := sanitize.NewWriter(&out)
			for _, p := range tc.In {
				if _, err := w.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.Want {
				t.Fatalf("NewWriter: got %q, want %q", got, tc.Want)
			}
		})
	}
}

// A 4-byte character split across every possible write boundary.
func TestSanitizeEmojiSplits(t *testing.T) {
	in := []byte("a😀b\n")
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out bytes.Buffer
			w := sanitize.NewWriter(&out)
			w.Write(in[:i])
			w.Write(in[i:j])
			w.Write(in[j:])
			w.Close()
			if out.String() != "a😀b\n" {
				t.Fatalf("split %d,%d: %q", i, j, out.String())
			}
		}
	}
}

func TestWriterWriteError(t *testing.T) {
	boom := errors.New("boom")
	w := sanitize.NewWriter(errWriter{boom})
	w.Write([]byte("line\n"))
	if _, err := w.Write([]byte("x\n")); !errors.Is(err, boom) {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
}

func TestWriterWriteAfterClose(t *testing.T) {
	w := sanitize.NewWriter(&bytes.Buffer{})
	w.Close()
	if _, err := w.Write([]byte("x")); !errors.Is(err, sanitize.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }

// NewWriter holds at most one run of a line (MaxOverwriteBytes) plus its buffer: a long line
// without CR is written through.
func TestWriterBounded(t *testing.T) {
	var out countWriter
	w := sanitize.NewWriter(&out)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	for range 64 { // 2 MiB in one line
		w.Write(chunk)
		if n, c := sanitize.Held(w); n > sanitize.MaxOverwriteBytes || c > 2*sanitize.MaxOverwriteBytes {
			t.Fatalf("holds %d bytes (cap %d)", n, c)
		}
	}
	w.Close()
	if out.n != 64*int64(len(chunk)) {
		t.Fatalf("wrote %d", out.n)
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// The sanitizer takes long writes in blocks of 64 bytes: every kind of sequence and event, at every
// offset from a block's start, in one write and cut into two at every byte near it, with the default
// bounds and with escape bounds around a word's size, gives the reference's text.
func TestBlockOffsets(t *testing.T) {
	events := []string{
		"\x1b[1;32m", "\x1b[0m", "\x1b[38;2;255;128;0m", "\x1b[1 q", "\x1b[?25l", "\x1b[12\n", "\x1b[1é",
		"\x1b[1\x7fm", "\x1b[1\x1b[2m", "\x1b7", "\x1b]0;t\x07", "\r", "\r\n", "\x1b[0m\r", "\r\x1b[1m", "\t\x01\x7f",
		"✓", "\xff", "\xc2\x9b", "\xe2\x9c", "\n", "\x1b",
	}
	for _, ev := range events {
		for off := range 100 {
			in := []byte(strings.Repeat("x", off) + "a" + ev + "bc\x1b[1mdefghijklmnopqrstuvwxyz" + strings.Repeat("y", 100) +
				"\npq\rZ\n")
			for _, escMax := range []int{sanitize.MaxEscapeBytes, 4, 5, 7, 8, 9, 10} {
				want := sanitizetest.Reference(in, escMax, sanitize.MaxOverwriteBytes)
				cuts := []int{0, len(in)}
				for cut := max(off-2, 1); cut <= off+len(ev)+3; cut++ {
					cuts = append(cuts, cut)
				}
				for _, cut := range cuts {
					var out bytes.Buffer
					w := sanitize.NewWriterBounds(&out, escMax, sanitize.MaxOverwriteBytes)
					w.Write(in[:cut])
					w.Write(in[cut:])
					w.Close()
					if !bytes.Equal(out.Bytes(), want) {
						t.Fatalf("%q at offset %d, escape bound %d, cut at %d: got %q, want %q", ev, off, escMax, cut, out.Bytes(), want)
					}
				}
			}
		}
	}
}
