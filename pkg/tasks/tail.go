package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// TailSegmentBytes is the size of one segment of a task's live tail, bytes: past the artifact cap the
// supervisor writes the output to segments <id>.tail.<offset> (offset: the raw stream offset of the
// segment's first byte) and keeps the newest two, so readers still get the newest output and the disk
// a task uses stays bounded (cap + 2 segments).
const TailSegmentBytes = 1 << 20

// TailWriter passes a task's raw output on to W and writes what lies past Cap bytes of the stream (the
// artifact cap) to the task's tail segments. Write errors of the tail are not W's: a tail that cannot be
// written only leaves the later reads lossy.
type TailWriter struct {
	W     io.Writer
	Store Store
	ID    string
	Cap   int64 // raw bytes the artifact holds at most

	n       int64    // raw bytes of the stream so far
	seg     *os.File // the segment being written, nil before the first
	segLeft int64
	broken  bool
}

// Write writes p to W, then the part of what W took that lies past Cap to the tail.
func (t *TailWriter) Write(p []byte) (int, error) {
	n, err := t.W.Write(p)
	b := p[:n]
	if over := t.n + int64(n) - t.Cap; over > 0 && !t.broken {
		t.tail(b[int64(len(b))-min(over, int64(len(b))):])
	}
	t.n += int64(n)
	return n, err
}

func (t *TailWriter) tail(b []byte) {
	base := max(t.n, t.Cap) // the stream offset of b[0]
	for len(b) > 0 {
		if t.seg == nil || t.segLeft == 0 {
			if err := t.next(base); err != nil {
				t.broken = true
				return
			}
		}
		k := min(int64(len(b)), t.segLeft)
		if _, err := t.seg.Write(b[:k]); err != nil {
			t.broken = true
			return
		}
		b, base, t.segLeft = b[k:], base+k, t.segLeft-k
	}
}

// next starts the segment at stream offset base and removes all but the newest two.
func (t *TailWriter) next(base int64) error {
	if t.seg != nil {
		t.seg.Close()
	}
	f, err := os.OpenFile(t.Store.tailPath(t.ID, base), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, FileMode)
	if err != nil {
		return fmt.Errorf("task %s: tail: %w", t.ID, err)
	}
	t.seg, t.segLeft = f, TailSegmentBytes
	segs := t.Store.tailSegments(t.ID)
	for len(segs) > 2 {
		os.Remove(t.Store.tailPath(t.ID, segs[0]))
		segs = segs[1:]
	}
	return nil
}

// Close closes the segment being written.
func (t *TailWriter) Close() error {
	if t.seg != nil {
		return t.seg.Close()
	}
	return nil
}

func (s Store) tailPath(id string, base int64) string {
	return filepath.Join(s.Dir, id+".tail."+strconv.FormatInt(base, 10))
}

// tailSegments are the stream offsets of task id's tail segments, oldest first.
func (s Store) tailSegments(id string) []int64 {
	names, _ := filepath.Glob(filepath.Join(s.Dir, id+".tail.*"))
	var bases []int64
	for _, n := range names {
		if b, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(n), id+".tail."), 10, 64); err == nil && b >= 0 {
			bases = append(bases, b)
		}
	}
	slices.Sort(bases)
	return bases
}

// piece is a stretch of the raw stream kept in a file: bytes [lo, lo+size) are the file's [0, size).
type piece struct {
	path     string
	lo, size int64
}

// pieces are where task rec's raw stream can be read: the artifact for its first bytes (at most
// rec.ArtifactCap when the tail took over) and the tail segments after it, in stream order.
func (s Store) pieces(rec Record) []piece {
	var ps []piece
	art := fileSize(rec.ArtifactPath)
	segs := s.tailSegments(rec.TaskID)
	if len(segs) > 0 && rec.ArtifactCap > 0 {
		art = min(art, rec.ArtifactCap) // past the cap the artifact holds the cap's marker, not the stream
	}
	if rec.ArtifactPath != "" {
		ps = append(ps, piece{path: rec.ArtifactPath, size: art})
	}
	for _, b := range segs {
		p := s.tailPath(rec.TaskID, b)
		ps = append(ps, piece{path: p, lo: b, size: fileSize(p)})
	}
	return ps
}

// end is where the stream kept in ps ends (raw bytes).
func streamEnd(ps []piece) int64 {
	var e int64
	for _, p := range ps {
		e = max(e, p.lo+p.size)
	}
	return e
}

// readRange reads the kept bytes of [lo, hi) from ps: it returns the offset of the first byte it has
// (past lo when the start is no longer kept) and the bytes from there to hi, contiguous.
func readRange(ps []piece, lo, hi int64) (int64, []byte, error) {
	var out []byte
	at := lo
	for _, p := range ps {
		a, b := max(at, p.lo), min(hi, p.lo+p.size)
		if a >= b {
			continue
		}
		if a > at { // a gap: what lies before is gone, start again here
			out, at = nil, a
		}
		f, err := os.Open(p.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a segment removed since it was listed: its bytes are skipped
		}
		if err != nil {
			return at, nil, err
		}
		buf := make([]byte, b-a)
		k, err := f.ReadAt(buf, a-p.lo)
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return at, nil, err
		}
		out = append(out, buf[:k]...)
		at = a + int64(k)
		if int64(k) < b-a {
			break
		}
	}
	if len(out) == 0 {
		return at, nil, nil
	}
	return at - int64(len(out)), out, nil
}
