package sanitize_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

// plainASCIIBytewise is the definition PlainASCII must meet: the length of the longest prefix of printable
// ASCII, tabs and newlines.
func plainASCIIBytewise(p []byte) int {
	for j, c := range p {
		if c != '\t' && c != '\n' && (c < 0x20 || c >= 0x7f) {
			return j
		}
	}
	return len(p)
}

// Every byte value at every offset of runs across the 64- and 16-byte blocks of the assembly and the
// 32- and 8-byte words of the Go version, from every alignment, and random inputs.
func TestPlainASCII(t *testing.T) {
	ascii := bytes.Repeat([]byte("0123456789abcdefghij\tklmnopqrst\nuvwxyz ~!"), 8)
	for _, f := range []struct {
		name string
		scan func([]byte) int
	}{{"PlainASCII", sanitize.PlainASCII}, {"PlainASCIIWords", sanitize.PlainASCIIWords}} {
		for off := 0; off < 16; off++ {
			for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 79, 80, 127, 128, 129, 200, 300} {
				run := ascii[off : off+n]
				if got := f.scan(run); got != n {
					t.Fatalf("%s of %d plain bytes = %d", f.name, n, got)
				}
				for k := 0; k < n; k++ {
					in := append([]byte(nil), run...)
					for b := 0; b < 256; b++ {
						in[k] = byte(b)
						if got, want := f.scan(in), plainASCIIBytewise(in); got != want {
							t.Fatalf("%s(%q) = %d, want %d", f.name, in, got, want)
						}
					}
				}
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 20000 {
			in := append([]byte(nil), ascii[:rng.IntN(len(ascii))]...)
			for range rng.IntN(3) {
				if len(in) > 0 {
					in[rng.IntN(len(in))] = byte(rng.Uint32())
				}
			}
			if got, want := f.scan(in), plainASCIIBytewise(in); got != want {
				t.Fatalf("%s(%q) = %d, want %d", f.name, in, got, want)
			}
		}
	}
}

// eventsBytewise is the definition EventMask must meet: bit j for q[j] that is not printable ASCII and
// not a tab.
func eventsBytewise(q []byte) uint64 {
	var m uint64
	for j, c := range q[:64] {
		if c != '\t' && (c < 0x20 || c >= 0x7f) {
			m |= 1 << j
		}
	}
	return m
}

// Every byte value in every lane of a block, and random blocks.
func TestEventMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	text := []byte("\x1b[1;32m 50%\x1b[0m [=====     ]\r\x1b[1;32m100%\x1b[0m [==========] \x1b[36mdone\x1b[0m ok\r\n")
	for _, f := range []struct {
		name string
		mask func([]byte) uint64
	}{{"EventMask", sanitize.EventMask}, {"EventWords", sanitize.EventWords}} {
		q := make([]byte, 80)
		for j := range 64 {
			for b := 0; b < 256; b++ {
				copy(q, text)
				q[j] = byte(b)
				if got, want := f.mask(q), eventsBytewise(q); got != want {
					t.Fatalf("%s(%q) = %064b, want %064b", f.name, q, got, want)
				}
			}
		}
		for range 20000 {
			for j := range q {
				q[j] = byte(rng.Uint32())
				if rng.IntN(2) == 0 {
					q[j] &= 0x7f
				}
			}
			if got, want := f.mask(q), eventsBytewise(q); got != want {
				t.Fatalf("%s(%q) = %064b, want %064b", f.name, q, got, want)
			}
		}
	}
}
