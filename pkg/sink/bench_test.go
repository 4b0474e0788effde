package sink

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchInputs are 32 KiB chunks of typical output.
func benchInputs() map[string][]byte {
	var plain, ansi, utf, progress bytes.Buffer
	for i := 0; plain.Len() < 32<<10; i++ {
		fmt.Fprintf(&plain, "src/pkg/file%d.go:%d: some compiler message about line %d\n", i%97, i, i*7)
	}
	for i := 0; ansi.Len() < 32<<10; i++ {
		fmt.Fprintf(&ansi, "\x1b[1m\x1b[32m   Compiling\x1b[0m crate-%d v0.%d.0 (\x1b]8;;file:///src/%d\x1b\\/src/%d\x1b]8;;\x1b\\)\n", i, i%10, i, i)
	}
	for i := 0; utf.Len() < 32<<10; i++ {
		fmt.Fprintf(&utf, "ошибка %d: файл «données-%d.txt» — ✓ 😀\n", i, i)
	}
	for i := 0; progress.Len() < 32<<10; i++ {
		fmt.Fprintf(&progress, "\r\x1b[Kdownloading %3d%% [%-20s]", i%100, bytes.Repeat([]byte("="), i%20))
	}
	return map[string][]byte{
		"plain":    plain.Bytes()[:32<<10],
		"ansi":     ansi.Bytes()[:32<<10],
		"utf8":     utf.Bytes()[:32<<10],
		"progress": progress.Bytes()[:32<<10],
	}
}

// BenchmarkSinkWrite measures the steady state: after the first overflow, with the artifact
// written to io.Discard. It must report 0 allocs/op.
func BenchmarkSinkWrite(b *testing.B) {
	for _, name := range []string{"plain", "ansi", "utf8", "progress"} {
		chunk := benchInputs()[name]
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

// BenchmarkSanitizer measures NewSanitizer (as used by `agentbash artifact ID`).
func BenchmarkSanitizer(b *testing.B) {
	for _, name := range []string{"plain", "ansi"} {
		chunk := benchInputs()[name]
		b.Run(name, func(b *testing.B) {
			w := NewSanitizer(io.Discard)
			w.Write(chunk)
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				w.Write(chunk)
			}
		})
	}
}
