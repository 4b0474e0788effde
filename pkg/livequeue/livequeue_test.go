package livequeue

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowWriter takes a while per write, like a terminal that cannot keep up.
type slowWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestWriterNeverBlocksAndSaysWhatItSkipped(t *testing.T) {
	var w slowWriter
	a := New(&w, 1000)
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range 1000 {
		if n, err := a.Write(line); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	a.Close()
	out := w.b.String()
	if !strings.Contains(out, "live view skipped") || !strings.HasSuffix(out, "] …\n"+strings.Repeat(string(line), 10)) &&
		!strings.HasSuffix(out, string(line)) {
		t.Errorf("output %d bytes, no skip marker or the end is lost:\n%s", len(out), out[max(0, len(out)-300):])
	}
	if strings.Count(out, "\n") < 10 {
		t.Errorf("newest lines lost")
	}
	if n, _ := a.Write(line); n != len(line) {
		t.Errorf("Write after Close = %d", n)
	}
}

func TestWriterKeepsEverythingWhenFast(t *testing.T) {
	var b bytes.Buffer
	a := New(&b, 1<<20)
	for i := range 100 {
		fmt.Fprintf(a, "%d\n", i)
	}
	a.Close()
	if strings.Count(b.String(), "\n") != 100 || strings.Contains(b.String(), "skipped") {
		t.Errorf("got %q", b.String())
	}
}

// countedWriter is a slow Counted writer that checks each chunk against the stream.
type countedWriter struct {
	t      *testing.T
	stream []byte
	end    int64 // the previous chunk's end
	skips  int
}

func (w *countedWriter) Write(p []byte) (int, error) {
	w.t.Error("a Counted writer got Write")
	return len(p), nil
}

func (w *countedWriter) WriteCounted(text []byte, skipped, totalBytes, totalLines int64) error {
	time.Sleep(time.Millisecond)
	if skipped > 0 {
		w.skips++
	}
	start := totalBytes - int64(len(text))
	if !bytes.Equal(w.stream[start:totalBytes], text) || (skipped == 0 && start != w.end) || (skipped > 0 && start != w.end+skipped) ||
		totalLines != int64(bytes.Count(w.stream[:totalBytes], []byte("\n"))) {
		w.t.Errorf("chunk %q at %d bytes, %d lines (skipped %d, previous end %d)", text, totalBytes, totalLines, skipped, w.end)
	}
	w.end = totalBytes
	return nil
}

// A Counted writer gets each chunk with the counts at its end and the bytes dropped before it, no marker:
// the chunk is exactly the stream's bytes before its count.
func TestWriterCounted(t *testing.T) {
	var stream []byte
	for i := range 20000 {
		stream = fmt.Appendf(stream, "%d\n", i)
	}
	w := &countedWriter{t: t, stream: stream}
	a := New(w, 1000)
	lines := int64(0)
	for i := 0; i < len(stream); {
		j := i + bytes.IndexByte(stream[i:], '\n') + 1
		lines++
		a.WriteCounted(stream[i:j], int64(j), lines)
		i = j
	}
	a.Close()
	if w.end != int64(len(stream)) || w.skips == 0 {
		t.Errorf("ended at %d of %d, %d skips", w.end, len(stream), w.skips)
	}
}
