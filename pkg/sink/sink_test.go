package sink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func seq(from, to int) []byte {
	var b bytes.Buffer
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.Bytes()
}

func TestSeq100000(t *testing.T) {
	in := seq(1, 100000)
	h := checkSink(t, Options{Head: -1, Tail: -1}, in, 2)
	s := h.sum
	if !strings.HasSuffix(s.Text, "\n100000\n") || s.TotalLines != 100000 || s.ShownEnd != 100000 ||
		s.TotalBytes != int64(len(in)) || !s.Truncated || s.TruncatedBy != "bytes" || s.FirstLinePartial {
		t.Fatalf("%+v", s)
	}
	// The window starts at a line start: its first line is a whole number.
	first, _, _ := strings.Cut(s.Text, "\n")
	if first != fmt.Sprint(s.ShownStart) || s.OutputBytes > DefaultMaxBytes {
		t.Fatalf("first shown line %q, ShownStart %d, %d bytes", first, s.ShownStart, s.OutputBytes)
	}
	if s.ArtifactID != "7" || !bytes.Equal(h.art.buf.Bytes(), in) {
		t.Fatal("artifact is not the input")
	}
}

func TestWindow(t *testing.T) {
	x300k := strings.Repeat("x", 300000)
	eAcute := strings.Repeat("é", 100001) + "\n"
	tests := []struct {
		name       string
		o          Options
		in         string
		text       string
		start, end int64
		by         string
		partial    bool
	}{
		{"fits", Options{MaxBytes: 15}, "aaaa\nbbbb\ncccc\n", "aaaa\nbbbb\ncccc\n", 1, 3, "", false},
		{"cut exactly at a line start", Options{MaxBytes: 10}, "aaaa\nbbbb\ncccc\n", "bbbb\ncccc\n", 2, 3, "bytes", false},
		{"cut moves to the next line start", Options{MaxBytes: 8}, "aaaa\nbbbb\ncccc\n", "cccc\n", 3, 3, "bytes", false},
		{"last line alone too long", Options{MaxBytes: 4}, "aaaa\nbbbb\ncccc\n", "ccc\n", 3, 3, "bytes", true},
		{"unterminated last line", Options{MaxBytes: 6}, "aaaa\nbbbb\ncc", "cc", 3, 3, "bytes", false},
		{"long line then error", Options{}, x300k + "\nerror[E0001]: boom\n", "error[E0001]: boom\n", 2, 2, "bytes", false},
		{"é never split", Options{}, eAcute, strings.Repeat("é", 25599) + "\n", 1, 1, "bytes", true},
		{"é never split, odd window", Options{MaxBytes: 1000}, eAcute, strings.Repeat("é", 499) + "\n", 1, 1, "bytes", true},
		{"empty", Options{}, "", "", 0, 0, "", false},
		{"only newlines", Options{MaxBytes: 2}, "\n\n\n\n", "\n\n", 3, 4, "bytes", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Head, tc.o.Tail = -1, -1
			s := checkSink(t, tc.o, []byte(tc.in), 3).sum
			if s.Text != tc.text || s.ShownStart != tc.start || s.ShownEnd != tc.end || s.TruncatedBy != tc.by ||
				s.FirstLinePartial != tc.partial {
				t.Fatalf("got %q %d-%d by %q partial %v", trunc(s.Text), s.ShownStart, s.ShownEnd, s.TruncatedBy, s.FirstLinePartial)
			}
			if strings.ContainsRune(s.Text, utf8.RuneError) {
				t.Fatal("U+FFFD in text")
			}
		})
	}
}

// 'é'*100001 cut at every chunk boundary shows no U+FFFD.
func TestWindowUTF8EveryChunking(t *testing.T) {
	in := []byte(strings.Repeat("é", 100001) + "\n")
	for chunk := 1; chunk <= 7; chunk++ {
		s := New(Options{MaxBytes: 999, Head: -1, Tail: -1})
		for i := 0; i < len(in); i += chunk {
			s.Write(in[i:min(i+chunk, len(in))])
		}
		if got := s.Close(); strings.ContainsRune(got.Text, utf8.RuneError) || !utf8.ValidString(got.Text) || got.Text != strings.Repeat("é", 499)+"\n" {
			t.Fatalf("chunk %d: %q", chunk, trunc(got.Text))
		}
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name        string
		head, tail  int
		in          []byte
		text        string
		start, end  int64
		total       int64
		truncatedBy string
		artifact    bool
	}{
		{"head 0 shows nothing", 0, -1, seq(1, 5), "", 0, 0, 5, "lines", true},
		{"tail 0 shows nothing", -1, 0, seq(1, 5), "", 0, 0, 5, "lines", true},
		{"head 3", 3, -1, seq(1, 10), "1\n2\n3\n", 1, 3, 10, "lines", true},
		{"head equal to the lines", 5, -1, seq(1, 5), "1\n2\n3\n4\n5\n", 1, 5, 5, "", false},
		{"head above the lines", 50, -1, seq(1, 5), "1\n2\n3\n4\n5\n", 1, 5, 5, "", false},
		{"tail 5 of 10 keeps an artifact", -1, 5, seq(1, 10), "6\n7\n8\n9\n10\n", 6, 10, 10, "lines", true},
		{"tail equal to the lines", -1, 10, seq(1, 10), string(seq(1, 10)), 1, 10, 10, "", false},
		{"tail counts real lines", -1, 2, []byte("a\nb\nc\n"), "b\nc\n", 2, 3, 3, "lines", true},
		{"tail with unterminated last line", -1, 2, []byte("a\nb\nc"), "b\nc", 2, 3, 3, "lines", true},
		{"tail of the whole stream", -1, 3, seq(1, 200000), "199998\n199999\n200000\n", 199998, 200000, 200000, "lines", true},
		{"head then tail", 100, 5, seq(1, 100), "96\n97\n98\n99\n100\n", 96, 100, 100, "lines", true},
		{"head then tail, more lines", 100, 5, seq(1, 1000), "96\n97\n98\n99\n100\n", 96, 100, 1000, "lines", true},
		{"tail longer than the window", -1, 20000, seq(1, 200000), "", 0, 200000, 200000, "bytes", true},
		{"head longer than the window", 20000, -1, seq(1, 200000), "", 0, 20000, 200000, "bytes", true},
		{"empty lines count", 2, -1, []byte("a\n\n\n"), "a\n\n", 1, 2, 3, "lines", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := checkSink(t, Options{Head: tc.head, Tail: tc.tail}, tc.in, 4)
			s := h.sum
			if tc.text != "" && s.Text != tc.text || s.ShownEnd != tc.end || (tc.start != 0 && s.ShownStart != tc.start) ||
				s.TotalLines != tc.total || s.TruncatedBy != tc.truncatedBy || (s.ArtifactID != "") != tc.artifact {
				t.Fatalf("got %q lines %d-%d of %d by %q artifact %q", trunc(s.Text), s.ShownStart, s.ShownEnd, s.TotalLines, s.TruncatedBy, s.ArtifactID)
			}
			if tc.artifact && !bytes.Equal(h.art.buf.Bytes(), tc.in) {
				t.Fatal("artifact is not the whole stream")
			}
		})
	}
}

// `yes | head -n 5`: Write returns ErrHeadLimit after a bounded amount; the counts cover what was read.
func TestHeadLimitStopsEarly(t *testing.T) {
	chunk := bytes.Repeat([]byte("y\n"), 2048) // 4 KiB
	var art memArtifact
	art.failAfter = -1
	s := New(Options{Head: 5, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return &art, "3", nil }})
	read := 0
	var err error
	for i := 0; i < 1000; i++ {
		var n int
		n, err = s.Write(chunk)
		read += n
		if err != nil {
			break
		}
	}
	if !errors.Is(err, ErrHeadLimit) || read > DefaultMaxBytes+2*len(chunk) {
		t.Fatalf("err %v after %d bytes", err, read)
	}
	if n, err := s.Write(chunk); n != 0 || !errors.Is(err, ErrHeadLimit) {
		t.Fatalf("after the limit: %d, %v", n, err)
	}
	sum := s.Close()
	if sum.Text != "y\ny\ny\ny\ny\n" || !sum.HeadLimitReached || sum.ShownStart != 1 || sum.ShownEnd != 5 ||
		sum.TotalLines != int64(read/2) || sum.TruncatedBy != "lines" || sum.ArtifactID != "3" ||
		art.buf.Len() != read {
		t.Fatalf("%+v (read %d, artifact %d)", sum, read, art.buf.Len())
	}
}

// Without an artifact there is nothing to save: the head limit stops at once.
func TestHeadLimitNoArtifact(t *testing.T) {
	s := New(Options{Head: 1, Tail: -1})
	if _, err := s.Write([]byte("a\nb\n")); !errors.Is(err, ErrHeadLimit) {
		t.Fatal(err)
	}
	if sum := s.Close(); sum.Text != "a\n" || sum.TotalLines != 2 || !sum.HeadLimitReached {
		t.Fatalf("%+v", sum)
	}
	// Exactly Head complete lines meet the limit — stop reading, as head does — but are not a cut.
	s = New(Options{Head: 2, Tail: -1})
	if _, err := s.Write([]byte("a\nb\n")); !errors.Is(err, ErrHeadLimit) {
		t.Fatal(err)
	}
	if sum := s.Close(); sum.Truncated || !sum.HeadLimitReached || sum.Text != "a\nb\n" {
		t.Fatalf("%+v", sum)
	}
	// Fewer lines, or an unfinished Head-th line, go on reading.
	s = New(Options{Head: 2, Tail: -1})
	if _, err := s.Write([]byte("a\nb")); err != nil {
		t.Fatal(err)
	}
}

// A slow producer must not keep a met head limit waiting for more output (hostile test: a `sleep` loop
// piped to `head -n 2` ran to the timeout).
func TestHeadLimitStopsAtTheLimit(t *testing.T) {
	var art memArtifact
	art.failAfter = -1
	s := New(Options{Head: 2, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return &art, "1", nil }})
	for i, line := range []string{"line 1\n", "line 2\n"} {
		_, err := s.Write([]byte(line))
		if (i == 1) != errors.Is(err, ErrHeadLimit) {
			t.Fatalf("write %d: %v", i, err)
		}
	}
}

func TestBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"zeros", make([]byte, 20000)},
		{"late NUL", append(bytes.Repeat([]byte("text\n"), 30000), 0, 'x')},
		{"NUL after an escape", []byte("\x1b[31mred\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := checkSink(t, Options{Head: -1, Tail: -1}, tc.in, 5)
			s := h.sum
			want := fmt.Sprintf("[binary output: %d bytes]", len(tc.in))
			if !s.Binary || s.Text != want || s.TotalBytes != int64(len(tc.in)) || s.Truncated || s.ArtifactID == "" ||
				!bytes.Equal(h.art.buf.Bytes(), tc.in) {
				t.Fatalf("%+v", s)
			}
		})
	}
	// A binary stream with a head limit stops like any head: the view is a placeholder anyway.
	s := New(Options{Head: 5, Tail: -1})
	if _, err := s.Write(make([]byte, 100)); !errors.Is(err, ErrHeadLimit) {
		t.Fatal(err)
	}
}

func TestArtifactCap(t *testing.T) {
	in := seq(1, 100000)
	h := checkSink(t, Options{Head: -1, Tail: -1, ArtifactMaxBytes: 1000}, in, 6)
	s := h.sum
	art := h.art.buf.String()
	marker := fmt.Sprintf("\n[agentbash: %d bytes omitted: artifact capped at 1000B]\n", len(in)-1000)
	if !s.ArtifactCapped || s.ArtifactOmitted != int64(len(in)-1000) || art != string(in[:1000])+marker+s.Text {
		t.Fatalf("capped %v omitted %d, artifact ends %q", s.ArtifactCapped, s.ArtifactOmitted, art[max(0, len(art)-200):])
	}
	// A cap below the buffered window, with a tail limit: the artifact keeps the whole window.
	h = checkSink(t, Options{Head: -1, Tail: 2, MaxBytes: 100, ArtifactMaxBytes: 10}, seq(1, 50), 7)
	if !strings.HasSuffix(h.art.buf.String(), "\n49\n50\n") || !h.sum.ArtifactCapped {
		t.Fatalf("%q", h.art.buf.String())
	}
}

func TestArtifactFailures(t *testing.T) {
	in := seq(1, 100000)
	// OpenArtifact fails: a warning, no id, the run goes on.
	s := New(Options{Head: -1, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) {
		return nil, "", errors.New("mkdir /dev/null/x: not a directory")
	}})
	s.Write(in)
	sum := s.Close()
	if sum.ArtifactID != "" || len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "not a directory") ||
		!strings.HasSuffix(sum.Text, "\n100000\n") || !sum.Truncated {
		t.Fatalf("%+v", sum)
	}
	// Writes fail part way (ENOSPC): a warning, no id, the run goes on.
	art := &memArtifact{failAfter: 70000}
	s = New(Options{Head: -1, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return art, "9", nil }})
	for i := 0; i < len(in); i += 4096 {
		if _, err := s.Write(in[i:min(i+4096, len(in))]); err != nil {
			t.Fatal(err)
		}
	}
	sum = s.Close()
	if sum.ArtifactID != "" || len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0], "no space") ||
		sum.TotalLines != 100000 || art.closed != 1 {
		t.Fatalf("%+v", sum)
	}
}

// Lots of escape codes: the raw stream overflows and is spilled, but nothing is cut.
func TestSpillWithoutCut(t *testing.T) {
	in := append(bytes.Repeat([]byte("\x1b[31m\x1b[0m"), 10000), "ok\n"...)
	s := checkSink(t, Options{Head: -1, Tail: -1}, in, 8).sum
	if s.Text != "ok\n" || s.Truncated || s.ArtifactID == "" || s.TruncatedBy != "" {
		t.Fatalf("%+v", s)
	}
}

// A CR discard that reaches back before text the window dropped still leaves a full window.
func TestCRDiscardKeepsWindow(t *testing.T) {
	in := append(seq(1, 20000), strings.Repeat("z", 60000)+"\rdone\n"...)
	s := checkSink(t, Options{Head: -1, Tail: -1}, in, 9).sum
	if !strings.HasSuffix(s.Text, "\n20000\ndone\n") || s.OutputBytes < DefaultMaxBytes-10 || s.TotalLines != 20001 {
		t.Fatalf("%q %d", trunc(s.Text), s.OutputBytes)
	}
}

// 1 GB of progress updates separated by CR would stay bounded: check 64 MiB and the allocations.
func TestProgressBarBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB")
	}
	var chunk []byte
	for i := 0; len(chunk) < 32<<10; i++ {
		chunk = fmt.Appendf(chunk, "\r\x1b[Kdownloading %3d%% [%-20s]", i%100, strings.Repeat("=", i%20))
	}
	s := New(Options{Head: -1, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return nopCloser{io.Discard}, "1", nil }})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	for n < 64<<20 {
		s.Write(chunk)
		n += len(chunk)
	}
	runtime.ReadMemStats(&after)
	s.Write([]byte("\rdone 100%\n"))
	sum := s.Close()
	if sum.Text != "done 100%\n" || sum.TotalLines != 1 || sum.TotalBytes != 10 || sum.Truncated || sum.ArtifactID != "1" {
		t.Fatalf("%+v", sum)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("allocated %d bytes for 64 MiB of progress updates", grew)
	}
}

func TestLive(t *testing.T) {
	var live bytes.Buffer
	s := New(Options{Head: -1, Tail: -1, Live: &live})
	s.Write([]byte("a\x1b[1m\n10%"))
	s.Write([]byte("\r100%\n\r\n"))
	s.Close()
	if live.String() != "a\n10%\r100%\n\n" {
		t.Fatalf("%q", live.String())
	}
	live.Reset()
	s = New(Options{Head: 1, Tail: -1, Live: &live})
	s.Write([]byte("one\ntwo\n"))
	s.Close()
	if live.String() != "one\n" {
		t.Fatalf("%q", live.String())
	}
	// A failing Live writer is a warning.
	s = New(Options{Head: -1, Tail: -1, Live: errWriter{errors.New("EPIPE")}})
	s.Write([]byte("x\n"))
	s.Write([]byte("y\n"))
	if sum := s.Close(); sum.Text != "x\ny\n" || len(sum.Warnings) != 1 {
		t.Fatalf("%+v", sum)
	}
}

func TestCloseIdempotent(t *testing.T) {
	art := &memArtifact{failAfter: -1}
	s := New(Options{Head: -1, Tail: 1, OpenArtifact: func() (io.WriteCloser, string, error) { return art, "1", nil }})
	s.Write([]byte("a\nb\n"))
	a, b := s.Close(), s.Close()
	if a.Text != "b\n" || b.Text != a.Text || a.ArtifactID != "1" || art.closed != 1 {
		t.Fatalf("%+v %+v closes %d", a, b, art.closed)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0B", 512: "512B", 1023: "1023B", 1024: "1.0KB", 1536: "1.5KB", 51200: "50.0KB",
		1048575: "1.0MB", 1572864: "1.5MB", 2 << 30: "2.0GB", 256 << 20: "256.0MB", 5 << 40: "5120.0GB",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func trunc(s string) string {
	if len(s) > 80 {
		return s[:40] + "…" + s[len(s)-40:]
	}
	return s
}

// Realistic streams (lines, long lines, progress bars, colours, hyperlinks, invalid bytes) with the
// real bounds, random limits and windows, against the reference.
func TestRandomStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	rng := rand.New(rand.NewPCG(42, 7))
	pieces := []func() string{
		func() string { return fmt.Sprintf("line %d of output\n", rng.IntN(1e6)) },
		func() string { return "\x1b[1;3" + fmt.Sprint(rng.IntN(8)) + "mcolour\x1b[0m " },
		func() string {
			return fmt.Sprintf("\r\x1b[K%3d%% [%s]", rng.IntN(101), strings.Repeat("#", rng.IntN(30)))
		},
		func() string { return strings.Repeat("é", rng.IntN(40000)) },
		func() string { return strings.Repeat("x", rng.IntN(80000)) + "\n" },
		func() string {
			return "\x1b]8;;https://example.com/" + fmt.Sprint(rng.IntN(100)) + "\x1b\\link\x1b]8;;\x1b\\"
		},
		func() string { return "\r\n" },
		func() string { return string([]byte{0xff, 0xc3, 0xe2, 0x82, '\t', 0x07}) },
		func() string { return "\x1b]0;unterminated " + strings.Repeat("t", rng.IntN(6000)) },
		func() string { return strings.Repeat("\n", rng.IntN(5)) },
	}
	for i := range 40 {
		var b strings.Builder
		size := rng.IntN(400000)
		for b.Len() < size {
			b.WriteString(pieces[rng.IntN(len(pieces))]())
		}
		o := Options{MaxBytes: []int{0, 100, 4096, 70000}[rng.IntN(4)], Head: rng.IntN(40) - 20, Tail: rng.IntN(40) - 20}
		if rng.IntN(4) == 0 {
			o.ArtifactMaxBytes = int64(rng.IntN(200000)) + 1
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkSink(t, o, []byte(b.String()), uint64(i)) })
	}
}
