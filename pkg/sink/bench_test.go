package sink

import (
	"fmt"
	"io"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// BenchmarkSinkWrite measures the steady state: after the first overflow, with the artifact
// written to io.Discard. It must report 0 allocs/op.
func BenchmarkSinkWrite(b *testing.B) {
	for _, name := range []string{"plain", "ansi", "utf8", "progress", "colour", "marks"} {
		chunk := sanitizetest.Inputs()[name]
		for _, lim := range []struct{ head, tail int }{{-1, -1}, {-1, 10}, {1 << 40, -1}} {
			head, tail := lim.head, lim.tail
			name := fmt.Sprintf("%s/tail=%d", name, tail)
			if head >= 0 {
				name = fmt.Sprintf("%s/head", name) // a head window that is never met: both windows fed
			}
			b.Run(name, func(b *testing.B) {
				s := New(Options{Head: head, Tail: tail, ArtifactMaxBytes: 1 << 62,
					OpenArtifact: func() (io.WriteCloser, string, error) { return nopCloser{io.Discard}, "1", nil }})
				for range 16 {
					s.Write(chunk) // past the first overflow and the growth of the window
				}
				b.SetBytes(int64(len(chunk)))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					s.Write(chunk)
				}
				b.StopTimer()
				s.Close()
			})
		}
	}
}
