package sink

import (
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// The sink shows the sanitized text of every case of pkg/sanitize (the reference and the streaming
// writer are checked there), with the given writes and with any other split.
func TestSanitize(t *testing.T) {
	for _, tc := range sanitizetest.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			raw := strings.Join(tc.In, "")
			s := New(Options{MaxBytes: 1 << 20, Head: -1, Tail: -1})
			for _, p := range tc.In {
				if _, err := s.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if sum := s.Close(); sum.Text != tc.Want || sum.TotalBytes != int64(len(tc.Want)) {
				t.Fatalf("sink: got %q (%d bytes), want %q", sum.Text, sum.TotalBytes, tc.Want)
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
