package sink

import (
	"math/rand/v2"
	"testing"
)

func TestStressTmp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\n\r\t\x1b[]P\\\x07;0m\xc3\xa9\xe2\x82\xf0\x9f\x80\xff\x00 ")
	for it := 0; it < 200000; it++ {
		n := rng.IntN(60)
		in := make([]byte, n)
		for i := range in {
			in[i] = alphabet[rng.IntN(len(alphabet))]
		}
		o := Options{MaxBytes: 1 + rng.IntN(20), Head: rng.IntN(6) - 2, Tail: rng.IntN(6) - 2, escMax: 2 + rng.IntN(16), owMax: 1 + rng.IntN(16)}
		if rng.IntN(3) == 0 {
			o.ArtifactMaxBytes = 1 + int64(rng.IntN(50))
		}
		func() {
			defer func() {
				if t.Failed() {
					t.Logf("in %q o %+v", in, o)
				}
			}()
			checkSink(t, o, in, uint64(it))
		}()
	}
}
