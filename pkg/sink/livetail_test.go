package sink

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// A LiveTail fed the live text of a sink, in any pieces, ends with the sink's text and counts the bytes
// and lines the sink counts: progress bars redrawn by CRs are collapsed as in the result.
func TestLiveTailMatchesTheSink(t *testing.T) {
	inputs := []string{
		"red\n20%\r40%\r60%\r80%\r100%\nend\n",
		"\x1b[1;32m 50%\x1b[0m [=====     ]\r\x1b[1;32m100%\x1b[0m [==========] done\r\nnext\r\n",
		strings.Repeat("progress 1/3000\rprogress 2/3000\r", 200) + "done\n",
		"no newline at all\rstill\rnone",
		"a\r\rb\r\nc\rd",
		"\r\r\n\rx",
		"x |\b/\b-\bdone\nN\bNA\bA\nabc\b\bX\n50%\b\b\b75%\b\b\b100%",
	}
	for _, in := range inputs {
		for seed := range uint64(20) {
			var live bytes.Buffer
			s := New(Options{MaxBytes: 50 << 10, Head: -1, Tail: -1, Live: func(text []byte, _, _ int64) { live.Write(text) }})
			rng := rand.New(rand.NewPCG(seed, 3))
			for rest := []byte(in); len(rest) > 0; {
				n := 1 + rng.IntN(len(rest))
				s.Write(rest[:n])
				rest = rest[n:]
			}
			sum := s.Close()
			lt := NewLiveTail(64)
			for rest := live.String(); len(rest) > 0; {
				n := 1 + rng.IntN(len(rest))
				lt.Write(rest[:n])
				rest = rest[n:]
			}
			n, nl := lt.Total()
			tail := string(lt.Tail())
			if !strings.HasSuffix(sum.Text, tail) && !strings.HasSuffix(tail, sum.Text) {
				t.Errorf("%q (seed %d): tail %q, the sink's text %q", in, seed, tail, sum.Text)
			}
			if n != sum.TotalBytes || nl != int64(strings.Count(sum.Text, "\n")) {
				t.Errorf("%q (seed %d): %d bytes, %d newlines; the sink: %d bytes, text %q", in, seed, n, nl, sum.TotalBytes, sum.Text)
			}
		}
	}
}
