package intercept

import (
	"testing"
	"time"
)

// FuzzCheck runs the built-in rules over any input: Check and Explain never panic, agree with each other,
// and finish (each match is bounded by MatchTimeout; a slow input fails here long before the test timeout).
func FuzzCheck(f *testing.F) {
	for _, e := range readCorpus(f) {
		f.Add(e.command)
	}
	in, _ := New(nil, true, allTools)
	f.Fuzz(func(t *testing.T, command string) {
		start := time.Now()
		block := in.Check(command)
		matches := in.Explain(command)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("Check and Explain took %v on %q", d, command)
		}
		fired := false
		for _, m := range matches {
			fired = fired || m.Rule != nil
		}
		if (block != nil) != fired {
			t.Fatalf("Check(%q) = %+v but Explain = %+v after %v", command, block, matches, time.Since(start))
		}
	})
}
