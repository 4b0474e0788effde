package tasks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Past the cap the stream goes on in the tail segments; a read gets the newest bytes and counts what the
// segments no longer hold as skipped.
func TestTailWriterPastCap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cap, total int
		maxBytes   int
		partial    bool
	}{
		{"under the cap", 1000, 500, 4096, false},
		{"just past the cap", 1000, 1500, 4096, true},
		{"past two segments", 100, 3*TailSegmentBytes + 77, 4096, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			art := filepath.Join(s.Dir, "artifact")
			id, err := s.Create(Record{Status: StatusRunning, ArtifactPath: art, ArtifactCap: int64(tc.cap)})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(art)
			if err != nil {
				t.Fatal(err)
			}
			capped := &capWriter{w: f, left: tc.cap}
			tw := &TailWriter{W: capped, Store: s, ID: id, Cap: int64(tc.cap)}
			var all bytes.Buffer
			for i := 0; all.Len() < tc.total; i++ {
				line := []byte(strings.Repeat("x", i%50) + "\n")
				line = line[:min(len(line), tc.total-all.Len())]
				all.Write(line)
				if _, err := tw.Write(line); err != nil {
					t.Fatal(err)
				}
			}
			tw.Close()
			f.Close()
			if n := len(s.tailSegments(id)); n > 2 {
				t.Fatalf("%d tail segments kept, want at most 2", n)
			}
			rec, _ := s.load(id)
			rec.Status = StatusExited
			rd, _, err := s.read(rec, 0, s.pieces(rec), tc.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(all.String(), rd.Text) || rd.Text == "" {
				t.Fatalf("read %q is not the end of the stream", rd.Text[max(0, len(rd.Text)-40):])
			}
			if got, want := rd.Skipped+int64(len(rd.Text)), int64(all.Len()); got != want {
				t.Errorf("skipped %d + read %d = %d, want the stream's %d", rd.Skipped, len(rd.Text), got, want)
			}
			if rd.Partial != tc.partial {
				t.Errorf("partial %v, want %v", rd.Partial, tc.partial)
			}
		})
	}
}

// capWriter stands for the sink: it keeps the first left bytes, as the artifact cap does.
type capWriter struct {
	w    *os.File
	left int
}

func (c *capWriter) Write(p []byte) (int, error) {
	k := min(len(p), c.left)
	c.left -= k
	if _, err := c.w.Write(p[:k]); err != nil {
		return 0, err
	}
	return len(p), nil
}
