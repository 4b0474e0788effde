package sanitize_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

// Every byte value at every offset of runs long enough for several 32-byte blocks (so every lane of every
// word of a block, the block after a clean one, and the 8-byte and byte tails after the last block), each
// after prefixes that leave the run at every alignment, and UTF-8 characters split across where a block
// ends.
func TestPlainRunLong(t *testing.T) {
	ascii := bytes.Repeat([]byte("0123456789abcdefghij\tklmnopqrst\nuvwxyz ~!"), 4)
	for pre := 0; pre < 9; pre++ {
		for _, n := range []int{31, 32, 33, 63, 64, 65, 71, 96, 100, 127, 128, 129, 130} {
			for k := 0; k <= n; k++ {
				for b := 0; b < 256; b++ {
					in := append(bytes.Repeat([]byte("é"), pre), ascii[:n]...)
					in = append(in[:2*pre+k], append([]byte{byte(b)}, in[2*pre+k:]...)...)
					if got, want := sanitize.PlainRun(in), plainRunBytewise(in); got != want {
						t.Fatalf("PlainRun(%q) = %d, want %d", in, got, want)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := [][]byte{[]byte("é"), []byte("😀"), []byte("\u00a0"), []byte("\u009f"), {0xc2}, {0xe2, 0x82}, {0x7f}, {0x1b}, {'\r'}, {0x80}, {0xff}}
	for range 20000 {
		var in []byte
		for len(in) < 200 {
			if rng.IntN(4) == 0 {
				in = append(in, pieces[rng.IntN(len(pieces))]...)
			} else {
				in = append(in, ascii[:rng.IntN(len(ascii))]...)
			}
		}
		for s := 0; s < len(in); s += 1 + rng.IntN(7) {
			if got, want := sanitize.PlainRun(in[s:]), plainRunBytewise(in[s:]); got != want {
				t.Fatalf("PlainRun(%q) = %d, want %d", in[s:], got, want)
			}
		}
	}
}
