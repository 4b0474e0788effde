package sink

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// fuzzSeeds are inputs that reach the interesting states; the corpus in testdata/fuzz adds more.
var fuzzSeeds = []string{
	"hello\nworld\n",
	"\x1b[31mred\x1b[0m\n",
	"\x1b]8;;http://x\x07l\x1b]8;;\x1b\\\n",
	"\x1bPq#0~\x1b\\x\x1b_a\x1b\\",
	"p 10%\rp 100%\x1b[K\n",
	"a\r\nb\r\rc\r",
	"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82 \xff\xed\xa0\x80\xc2\x9b",
	"\x1b]0;unterminated\nline\n",
	"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
	"bin\x00ary\n",
	"\x1b[12\x1b[3mx\x1b",
	"long line without newline éééééééééééééééééééé",
	"éééééééééé\nsecond\nthird\n",
	"0123456789\rab\ncd\r\nef\n",
}

// FuzzSinkChunking feeds the same input in one write and in random chunk sizes, with small windows,
// bounds and read-on limits, and checks every summary against the naive reference implementation
// (over what was read), the artifact against the raw input, and the shown text for chunk-size
// independence.
func FuzzSinkChunking(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i), uint16(i*7), int8(-1), int8(-1), uint8(i*37))
		f.Add([]byte(s), uint64(i), uint16(3+i), int8(i%4), int8(i%3), uint8(i*11))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, maxB uint16, head, tail int8, bounds uint8) {
		if len(in) > 2048 {
			in = in[:2048] // keeps executions fast; the windows and bounds are small anyway
		}
		o := Options{
			MaxBytes: 1 + int(maxB%97),
			Head:     int(head),
			Tail:     int(tail),
			escMax:   2 + int(bounds%16),
			owMax:    1 + int(bounds/16),
		}
		if seed%3 == 0 {
			o.ArtifactMaxBytes = 1 + int64(seed/3%50)
		}
		if seed%2 == 0 {
			o.readOn = 1 + int64(seed/6%64) // a head limit stops reading soon after it is met
		}
		checkSink(t, o, in, seed)
	})
}

// FuzzSanitizer checks NewSanitizer, fed in random chunks, against the reference, with small bounds.
func FuzzSanitizer(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i), uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, bounds uint8) {
		escMax, owMax := 2+int(bounds%16), 1+int(bounds/16)
		want := refSanitize(in, escMax, owMax)
		rng := rand.New(rand.NewPCG(seed, 1))
		var out bytes.Buffer
		w := newSanitizeWriter(&out, escMax, owMax)
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			w.Write(rest[:n])
			rest = rest[n:]
		}
		w.Close()
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("got %q, want %q", out.Bytes(), want)
		}
		checkClean(t, out.String())
	})
}
