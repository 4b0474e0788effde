package screen

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// plainLines is 64 KiB of 80-column lines, as a build log prints them (CRLF, as a pseudo-terminal makes).
func plainLines() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "%-78.78s\r\n", fmt.Sprintf("line %d of the output of a command that prints plain text lines", i))
	}
	return b.Bytes()
}

// colouredText is 64 KiB of lines with an SGR sequence every few words, as ls --color or a test runner.
func colouredText() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "\x1b[1;32mPASS\x1b[0m \x1b[36mpkg/%d\x1b[0m (\x1b[33m%d.%02ds\x1b[0m) \x1b[38;5;%dmcoloured\x1b[m words here\r\n", i, i%10, i%100, i%256)
	}
	return b.Bytes()
}

// peakHeap samples the heap in use while f runs and reports the largest in MiB, and on Linux the peak
// resident size of the whole test process during f (VmHWM after resetting it through clear_refs).
func peakHeap(b *testing.B, f func()) {
	runtime.GC()
	rss := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	if status, err := os.ReadFile("/proc/self/status"); rss && err == nil {
		for line := range strings.Lines(string(status)) {
			var kib int
			if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kib); err == nil {
				b.ReportMetric(float64(kib)/1024, "peak-rss-MiB")
			}
		}
	}
}

// BenchmarkEmulator is the emulator's speed through a Terminal: each op writes 64 KiB and waits until the
// screen shows it (Snapshot, under its 256 KiB bound, so nothing is dropped).
func BenchmarkEmulator(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
	}{{"plain", plainLines()}, {"coloured", colouredText()}} {
		b.Run(in.name, func(b *testing.B) {
			term := New(DefaultCols, DefaultRows, nil)
			defer term.Close()
			b.SetBytes(int64(len(in.data)))
			b.ResetTimer()
			peakHeap(b, func() {
				for range b.N {
					term.Write(in.data)
					term.Snapshot()
				}
			})
		})
	}
}

// BenchmarkWriteFlooded is the cost of Write alone, the supervisor's side, when output comes much faster
// than the emulator takes it: the queue cuts and the emulator starts again over and over.
func BenchmarkWriteFlooded(b *testing.B) {
	for _, in := range []struct {
		name string
		data []byte
	}{{"plain", plainLines()}, {"coloured", colouredText()}} {
		for _, size := range []int{4 << 10, 64 << 10} {
			b.Run(fmt.Sprintf("%s/%dKiB", in.name, size>>10), func(b *testing.B) {
				term := New(DefaultCols, DefaultRows, nil)
				defer term.Close()
				chunk := in.data[:size]
				b.SetBytes(int64(size))
				b.ResetTimer()
				peakHeap(b, func() {
					for range b.N {
						term.Write(chunk)
					}
				})
				b.StopTimer()
				if s := term.Snapshot(); b.N*size > 2*maxPending && !s.Approximate {
					b.Fatal("never fell behind")
				}
			})
		}
	}
}
