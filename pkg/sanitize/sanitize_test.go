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
