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
