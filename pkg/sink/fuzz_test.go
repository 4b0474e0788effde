package sink

import (
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// FuzzSinkChunking feeds the same input in one write and in random chunk sizes, with small windows,
// bounds (or the real ones, when bounds is 0) and read-on limits, and checks every summary against the naive reference implementation
// (over what was read), the artifact against the raw input, and the shown text for chunk-size
// independence.
func FuzzSinkChunking(f *testing.F) {
	for i, s := range sanitizetest.Seeds {
		f.Add([]byte(s), uint64(i), uint16(i*7), int8(-1), int8(-1), uint8(i*37))
		f.Add([]byte(s), uint64(i), uint16(3+i), int8(i%4), int8(i%3), uint8(i*11))
		f.Add([]byte(s), uint64(i), uint16(40+i), int8(-1), int8(-1), uint8(0))
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
		if bounds == 0 {
			o.escMax, o.owMax = 0, 0 // the real bounds
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
