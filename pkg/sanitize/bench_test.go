package sanitize_test

import (
	"bytes"
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

// BenchmarkPlainASCII measures the scan of a stretch of ASCII text, the assembly (on amd64) beside Go.
func BenchmarkPlainASCII(b *testing.B) {
	text := bytes.Repeat([]byte("0123456789abcdef\n"), 256<<10/17)
	for _, f := range []struct {
		name string
		scan func([]byte) int
	}{{"asm", sanitize.PlainASCII}, {"words", sanitize.PlainASCIIWords}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if f.scan(text) != len(text) {
					b.Fatal("not plain")
				}
			}
		})
	}
}
