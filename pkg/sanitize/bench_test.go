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

// BenchmarkEventMask measures the mask of a block's events for ground, the assembly (on amd64) beside Go.
func BenchmarkEventMask(b *testing.B) {
	text := bytes.Repeat([]byte("\x1b[1;32m 50%\x1b[0m [=====     ]\r\x1b[1;32m100%\x1b[0m [==========] ok\r\n"), 1<<10)
	for _, f := range []struct {
		name string
		mask func([]byte) uint64
	}{{"asm", sanitize.EventMask}, {"words", sanitize.EventWords}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(text) &^ 63))
			var m uint64
			for b.Loop() {
				for i := 0; i+64 <= len(text); i += 64 {
					m ^= f.mask(text[i:])
				}
			}
			sink = m
		})
	}
}

var sink uint64
