package sanitize_test

import (
	"io"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// BenchmarkSanitizer measures NewWriter (as used by `agentbash artifact ID`).
func BenchmarkSanitizer(b *testing.B) {
	for _, name := range []string{"plain", "ansi", "colour", "marks"} {
		chunk := sanitizetest.Inputs()[name]
		b.Run(name, func(b *testing.B) {
			w := sanitize.NewWriter(io.Discard)
			w.Write(chunk)
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				w.Write(chunk)
			}
		})
	}
}
