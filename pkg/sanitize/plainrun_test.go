package sanitize_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

// plainRunBytewise is the fast path one byte at a time: the definition PlainRun must meet.
func plainRunBytewise(p []byte) int {
	j := 0
	for j < len(p) {
		if c := p[j]; c < utf8.RuneSelf {
			if c == '\t' || c == '\n' || (c >= 0x20 && c < 0x7f) {
				j++
				continue
			}
			return j
		}
		r, size := utf8.DecodeRune(p[j:])
		if size == 1 || r < 0xa0 {
			return j
		}
		j += size
	}
	return j
}

// Every byte value at every position of an ASCII run long enough to be read eight bytes at a time, after
// runs of every length (so every lane of a word and the tail after the last word), and characters around.
func TestPlainRun(t *testing.T) {
	prefixes := [][]byte{nil, []byte("é"), []byte("ab\tcd\nef"), bytes.Repeat([]byte("x"), 9)}
	for _, pre := range prefixes {
		for n := 0; n <= 26; n++ {
			for k := 0; k <= n; k++ {
				for b := 0; b < 256; b++ {
					in := append(append([]byte(nil), pre...), bytes.Repeat([]byte("0123456789abcdef\t\n"), 2)[:n]...)
					in = append(in[:len(pre)+k], append([]byte{byte(b)}, in[len(pre)+k:]...)...)
					if got, want := sanitize.PlainRun(in), plainRunBytewise(in); got != want {
						t.Fatalf("PlainRun(%q) = %d, want %d", in, got, want)
					}
				}
			}
		}
	}
	for _, in := range []string{"", "\x00", "héllo wörld, 😀 and more ASCII after it\x1b[0m", "12345678\xc2\x9f", "12345678\xc2\xa0ok\r", "abcdefgh\xe2\x82"} {
		if got, want := sanitize.PlainRun([]byte(in)), plainRunBytewise([]byte(in)); got != want {
			t.Fatalf("PlainRun(%q) = %d, want %d", in, got, want)
		}
	}
}
