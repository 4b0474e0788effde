package sink

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// recorder is an artifact file: what was written, how often, and errors to return.
type recorder struct {
	bytes.Buffer
	writes             int
	failAfter          int // fail the write after this many bytes were taken (0: never)
	writeErr, closeErr error
	closed             bool
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes++
	if r.failAfter > 0 && r.Len()+len(p) > r.failAfter {
		return 0, r.writeErr
	}
	return r.Buffer.Write(p)
}

func (r *recorder) Close() error { r.closed = true; return r.closeErr }

// Writes of every size arrive whole and in order.
func TestArtWriterOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, max := range []int{1, 100, 64 << 10, 1 << 20, 3 << 20} {
		var want bytes.Buffer
		rec := &recorder{}
		a := newArtWriter(rec, 1<<30)
		for range 50 {
			p := make([]byte, 1+rng.IntN(max))
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			want.Write(p)
			if n, err := a.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		if werr, cerr := a.Close(); werr != nil || cerr != nil {
			t.Fatalf("Close: %v, %v", werr, cerr)
		}
		if !bytes.Equal(rec.Bytes(), want.Bytes()) || !rec.closed {
			t.Fatalf("max %d: got %d bytes, want %d (closed %v)", max, rec.Len(), want.Len(), rec.closed)
		}
	}
}

// A failed file write is sticky: later Writes and Close report it, and the file is still closed.
func TestArtWriterErrors(t *testing.T) {
	boom := errors.New("disk full")
	rec := &recorder{failAfter: 10, writeErr: boom, closeErr: errors.New("close")}
	a := newArtWriter(rec, 1<<30)
	a.Write([]byte("0123456789abcdef"))
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		_, err = a.Write([]byte(strings.Repeat("x", 512<<10)))
	}
	if !errors.Is(err, boom) {
		t.Fatalf("Write after a failed file write: %v", err)
	}
	if werr, cerr := a.Close(); !errors.Is(werr, boom) || cerr == nil || !rec.closed {
		t.Fatalf("Close: %v, %v, closed %v", werr, cerr, rec.closed)
	}
}

// The sink reports a failed artifact write as a warning, names no artifact, and still shows the output.
func TestArtifactWriteFails(t *testing.T) {
	for _, tc := range []struct {
		rec  *recorder
		want string
	}{
		{&recorder{failAfter: 1000, writeErr: errors.New("disk full")}, "artifact 7 dropped: write failed: disk full"},
		{&recorder{closeErr: errors.New("stale handle")}, "artifact 7 dropped: close failed: stale handle"},
	} {
		s := New(Options{Head: -1, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return tc.rec, "7", nil }})
		s.Write(seq(1, 100000))
		sum := s.Close()
		if sum.ArtifactID != "" || len(sum.Warnings) != 1 || sum.Warnings[0] != tc.want || !strings.HasSuffix(sum.Text, "100000\n") {
			t.Fatalf("%q %v %q", sum.ArtifactID, sum.Warnings, trunc(sum.Text))
		}
	}
}

// A large artifact file gets its blocks reserved ahead of the writes (fallocate where the file system has
// it) and holds exactly what was written: no byte more in its size, and the blocks reserved past its end
// are freed when it is closed. A file the reservation fails on (/dev/null) is written as before.
func TestArtWriterPreallocates(t *testing.T) {
	path := t.TempDir() + "/art.log"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newArtWriter(f, 1<<30)
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 4096) // 68 KiB
	var want int64
	for want < preallocFrom+3*preallocMin+12345 {
		n, err := a.Write(chunk[:len(chunk)-int(want%7)])
		if err != nil {
			t.Fatal(err)
		}
		want += int64(n)
	}
	if a.allocated <= 0 && runtime.GOOS == "linux" {
		// Read without the lock: only for the message; the test's verdict is the file below.
		t.Logf("nothing was reserved (the file system may not support fallocate)")
	}
	if werr, cerr := a.Close(); werr != nil || cerr != nil {
		t.Fatalf("Close: %v, %v", werr, cerr)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != want {
		t.Fatalf("size %d, want %d", st.Size(), want)
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks * 512; blocks > want+1<<20 {
		t.Fatalf("%d bytes of blocks for %d bytes of data: the reservation past the end was not freed", blocks, want)
	}

	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	a = newArtWriter(null, 1<<30)
	for range 200 {
		if _, err := a.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if werr, cerr := a.Close(); werr != nil || cerr != nil {
		t.Fatalf("/dev/null: Close: %v, %v", werr, cerr)
	}
	if a.allocated != -1 && runtime.GOOS == "linux" {
		t.Fatalf("/dev/null: allocated %d, want -1 (the reservation failed and was not asked again)", a.allocated)
	}
}

// No reservation takes more than a small share of the space the file system has left: on a nearly full
// disk the command itself may need it (one that wrote a file next to its artifact ran out of space).
func TestArtWriterLeavesSpace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("preallocation is Linux-only")
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 4096) // 68 KiB
	for _, c := range []struct {
		avail   int64
		reserve bool
	}{
		{24 << 20, false}, // 24 MiB left: a reservation of 8 MiB is a third of it
		{1 << 40, true},   // plenty
	} {
		old := availableBytes
		availableBytes = func(*os.File) (int64, bool) { return c.avail, true }
		f, err := os.Create(t.TempDir() + "/art.log")
		if err != nil {
			t.Fatal(err)
		}
		a := newArtWriter(f, 1<<30)
		for n := 0; n < preallocFrom+2*preallocMin; n += len(chunk) {
			if _, err := a.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		if werr, cerr := a.Close(); werr != nil || cerr != nil {
			t.Fatalf("Close: %v, %v", werr, cerr)
		}
		availableBytes = old
		// Asked for (allocated -1: the file system could not), or never asked.
		if tried := a.allocated != 0; tried != c.reserve {
			t.Errorf("%d bytes available: allocated %d, want a reservation tried: %v", c.avail, a.allocated, c.reserve)
		}
	}
}
