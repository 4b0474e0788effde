package sanitize_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// FuzzSanitizer checks NewWriter, fed in random chunks, against the reference, with small bounds (so short
// inputs reach them), or the real ones when bounds is 0.
func FuzzSanitizer(f *testing.F) {
	for i, s := range sanitizetest.Seeds {
		f.Add([]byte(s), uint64(i), uint8(i*37))
		f.Add([]byte(s), uint64(i), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, bounds uint8) {
		escMax, owMax := 2+int(bounds%16), 1+int(bounds/16)
		if bounds == 0 {
			escMax, owMax = sanitize.MaxEscapeBytes, sanitize.MaxOverwriteBytes
		}
		want := sanitizetest.Reference(in, escMax, owMax)
		rng := rand.New(rand.NewPCG(seed, 1))
		var out bytes.Buffer
		w := sanitize.NewWriterBounds(&out, escMax, owMax)
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.Close()
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("got %q, want %q", out.Bytes(), want)
		}
		if err := sanitizetest.Clean(out.String()); err != nil {
			t.Fatal(err)
		}
	})
}
