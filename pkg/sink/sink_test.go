package sink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
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
		s.TotalBytes != int64(len(in)) || !s.Truncated || s.TruncatedBy != "bytes" || s.PartialLine {
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
				s.PartialLine != tc.partial {
				t.Fatalf("got %q %d-%d by %q partial %v", trunc(s.Text), s.ShownStart, s.ShownEnd, s.TruncatedBy, s.PartialLine)
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
		{"head longer than the window keeps the start", 20000, -1, seq(1, 200000), string(seq(1, 10384)), 1, 10384, 200000, "bytes", true},
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

// `yes | head -n 5`: once the limit is met the sink takes HeadReadOnBytes more for the counts and the
// artifact, exactly, and then refuses; the counts cover what was read.
func TestHeadReadOnStopsAfterItsBound(t *testing.T) {
	chunk := bytes.Repeat([]byte("y\n"), 2048) // 4 KiB
	var art memArtifact
	art.failAfter = -1
	s := New(Options{Head: 5, Tail: -1, OpenArtifact: func() (io.WriteCloser, string, error) { return &art, "3", nil }})
	read := 0
	var err error
	for err == nil {
		var n int
		n, err = s.Write(chunk)
		read += n
		if read == len(chunk) && (err != nil || !s.LimitMet()) {
			t.Fatalf("the Write that met the limit: %v, LimitMet %v", err, s.LimitMet())
		}
	}
	if !errors.Is(err, ErrHeadLimit) || read != len(chunk)+HeadReadOnBytes {
		t.Fatalf("err %v after %d bytes, want ErrHeadLimit after %d", err, read, len(chunk)+HeadReadOnBytes)
	}
	if n, err := s.Write(chunk); n != 0 || !errors.Is(err, ErrHeadLimit) {
		t.Fatalf("after the limit: %d, %v", n, err)
	}
	sum := s.Close()
	if sum.Text != "y\ny\ny\ny\ny\n" || !sum.HeadLimitReached || !sum.Stopped || sum.ShownStart != 1 || sum.ShownEnd != 5 ||
		sum.TotalLines != int64(read/2) || sum.TruncatedBy != "lines" || sum.ArtifactID != "3" ||
		art.buf.Len() != read {
		t.Fatalf("%+v (read %d, artifact %d)", trunc(fmt.Sprint(sum)), read, art.buf.Len())
	}
}

// `seq 1 200000 | head -n 3`: a finite stream past the limit is read to its end: exact totals, the
// whole stream in the artifact, nothing refused.
func TestHeadReadOnCountsFiniteStream(t *testing.T) {
	in := seq(1, 200000)
	h := checkSink(t, Options{Head: 3, Tail: -1}, in, 11)
	s := h.sum
	if h.err != nil || s.Stopped || !s.HeadLimitReached || s.Text != "1\n2\n3\n" || s.TotalLines != 200000 ||
		s.TotalBytes != int64(len(in)) || s.ShownStart != 1 || s.ShownEnd != 3 || !bytes.Equal(h.art.buf.Bytes(), in) {
		t.Fatalf("err %v %+v", h.err, s)
	}
}

// LimitMet turns true once Head lines are complete (or the output is binary), never without a limit.
func TestLimitMet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		head   int
		writes []string
		met    []bool
	}{
		{"second line ends", 2, []string{"a\n", "b", "\n", "c\n"}, []bool{false, false, true, true}},
		{"both lines in one write", 2, []string{"a\nb\nc"}, []bool{true}},
		{"a CR does not end a line", 1, []string{"10%\r", "100%", "\r\n"}, []bool{false, false, true}},
		{"head 0 is met at once", 0, []string{"x"}, []bool{true}},
		{"binary is met at once", 5, []string{"a\x00b"}, []bool{true}},
		{"no limit", -1, []string{"a\nb\n", "\x00"}, []bool{false, false}},
		{"fewer lines than the limit", 3, []string{"a\nb\n"}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{Head: tc.head, Tail: -1})
			for i, w := range tc.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("write %d: %d, %v", i, n, err)
				}
				if got := s.LimitMet(); got != tc.met[i] {
					t.Fatalf("after write %d (%q): LimitMet %v, want %v", i, w, got, tc.met[i])
				}
			}
			if sum := s.Close(); sum.HeadLimitReached != tc.met[len(tc.met)-1] || sum.Stopped {
				t.Fatalf("%+v", sum)
			}
		})
	}
}

// The read-on bound counts raw bytes after the Write that met the limit; the Write that reaches it
// takes only what fits.
func TestHeadReadOnPartialWrite(t *testing.T) {
	s := New(Options{Head: 1, Tail: -1, readOn: 10})
	if n, err := s.Write([]byte("a\nbcd")); n != 5 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := s.Write([]byte("0123456")); n != 7 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := s.Write([]byte("789\nxyz")); n != 3 || !errors.Is(err, ErrHeadLimit) {
		t.Fatal(n, err)
	}
	if sum := s.Close(); sum.Text != "a\n" || sum.TotalBytes != 15 || sum.TotalLines != 2 || !sum.Stopped {
		t.Fatalf("%+v", sum)
	}
}

// A head limit keeps the start (reference §3.2): when the lines it chose do not fit, the view is their first
// MaxBytes cut at a line end; a first line longer than the window shows its first MaxBytes on a UTF-8
// boundary.
func TestHeadWindowKeepsStart(t *testing.T) {
	x300k := strings.Repeat("x", 300000)
	eAcute := strings.Repeat("é", 100001) + "\n"
	for _, tc := range []struct {
		name       string
		o          Options
		in         []byte
		text       string // "" : check only that it is lines 1..end of the input
		end        int64
		by         string
		partial    bool
		lineBytes  int64
		lineOpen   bool
		totalLines int64
	}{
		{"seq | head -n 20000", Options{Head: 20000}, seq(1, 100000), "", 10384, "bytes", false, 0, false, 100000},
		{"head above the lines, too long", Options{Head: 200000}, seq(1, 100000), "", 10384, "bytes", false, 0, false, 100000},
		{"cut exactly at a line end", Options{Head: 3, MaxBytes: 10}, []byte("aaaa\nbbbb\ncccc\n"), "aaaa\nbbbb\n", 2, "bytes", false, 0, false, 3},
		{"cut before a line end", Options{Head: 3, MaxBytes: 9}, []byte("aaaa\nbbbb\ncccc\n"), "aaaa\n", 1, "bytes", false, 0, false, 3},
		{"fits", Options{Head: 3, MaxBytes: 15}, []byte("aaaa\nbbbb\ncccc\nd\n"), "aaaa\nbbbb\ncccc\n", 3, "lines", false, 0, false, 4},
		{"long first line", Options{Head: 2}, []byte(x300k + "\nsecond\n"), x300k[:DefaultMaxBytes], 1, "bytes", true, 300001, false, 2},
		{"long first line, unterminated", Options{Head: 2}, []byte(x300k), x300k[:DefaultMaxBytes], 1, "bytes", true, 300000, true, 1},
		{"é never split", Options{Head: 1}, []byte(eAcute), strings.Repeat("é", 25600), 1, "bytes", true, 200003, false, 1},
		{"é never split, odd window", Options{Head: 1, MaxBytes: 1001}, []byte(eAcute), strings.Repeat("é", 500), 1, "bytes", true, 200003, false, 1},
		{"a CR rewrites the start", Options{Head: 1, MaxBytes: 8}, []byte("0123456789\rabc\n"), "abc\n", 1, "", false, 0, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Tail = -1
			s := checkSink(t, tc.o, tc.in, 12).sum
			want := tc.text
			if want == "" && tc.by != "" {
				want = string(seq(1, int(tc.end)))
			}
			if s.Text != want || s.ShownStart != 1 || s.ShownEnd != tc.end || s.TruncatedBy != tc.by ||
				s.PartialLine != tc.partial || s.LineBytes != tc.lineBytes || s.LineOpen != tc.lineOpen ||
				s.TotalLines != tc.totalLines {
				t.Fatalf("got %q lines %d-%d of %d by %q partial %v line %d open %v", trunc(s.Text), s.ShownStart,
					s.ShownEnd, s.TotalLines, s.TruncatedBy, s.PartialLine, s.LineBytes, s.LineOpen)
			}
			if !utf8.ValidString(s.Text) || int64(len(s.Text)) > int64(max(tc.o.MaxBytes, 0)) && tc.o.MaxBytes > 0 {
				t.Fatalf("text %d bytes, invalid or over the window", len(s.Text))
			}
		})
	}
}

// A tail window cut inside its last line says which line and how long it is (reference §3.9's in-line
// notice is built from these).
func TestTailWindowPartialLine(t *testing.T) {
	y := strings.Repeat("y", 200000)
	for _, tc := range []struct {
		name       string
		o          Options
		in         string
		line       int64
		lineBytes  int64
		lineOpen   bool
		totalLines int64
	}{
		{"print(y*200000)", Options{Head: -1, Tail: -1}, y + "\n", 1, 200001, false, 1},
		{"unterminated", Options{Head: -1, Tail: -1}, y, 1, 200000, true, 1},
		{"after other lines", Options{Head: -1, Tail: -1}, string(seq(1, 10)) + y + "\n", 11, 200001, false, 11},
		{"the last line of a head and tail", Options{Head: 2, Tail: 1}, "a\n" + y + "\nb\nc", 2, 200001, false, 4},
		{"a tail of one", Options{Head: -1, Tail: 1}, "a\n" + y, 2, 200000, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := checkSink(t, tc.o, []byte(tc.in), 13).sum
			if !s.PartialLine || s.ShownStart != tc.line || s.ShownEnd != tc.line || s.LineBytes != tc.lineBytes ||
				s.LineOpen != tc.lineOpen || s.TotalLines != tc.totalLines || s.TruncatedBy != "bytes" ||
				!strings.HasPrefix(y, strings.TrimSuffix(s.Text, "\n")) || s.OutputBytes != DefaultMaxBytes {
				t.Fatalf("%q line %d-%d of %d, %d bytes, open %v, shown %d", trunc(s.Text), s.ShownStart, s.ShownEnd,
					s.TotalLines, s.LineBytes, s.LineOpen, s.OutputBytes)
			}
		})
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
	// A binary stream with a head limit meets it at once (the view is a placeholder anyway) and is
	// read on like any head.
	s := New(Options{Head: 5, Tail: -1, readOn: 150})
	if _, err := s.Write(make([]byte, 100)); err != nil || !s.LimitMet() {
		t.Fatal(err)
	}
	if n, err := s.Write(make([]byte, 100)); n != 100 || err != nil {
		t.Fatal(n, err)
	}
	if n, err := s.Write(make([]byte, 100)); n != 50 || !errors.Is(err, ErrHeadLimit) {
		t.Fatal(n, err)
	}
	if sum := s.Close(); sum.Text != "[binary output: 250 bytes]" || !sum.Stopped {
		t.Fatalf("%+v", sum)
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

// Live gets the text of each Write that made some, with the sink's exact counts of the whole stream at
// its end (a CR discard, a backspace's overwrite and a head limit included).
func TestLive(t *testing.T) {
	type call struct {
		text         string
		bytes, lines int64
	}
	var calls []call
	live := func(text []byte, b, l int64) { calls = append(calls, call{string(text), b, l}) }
	s := New(Options{Head: -1, Tail: -1, Live: live})
	s.Write([]byte("a\x1b[1m\n10%"))
	s.Write([]byte("\r100%\n\r\n"))
	s.Write([]byte("\x1b[1m")) // no text: no call
	s.Write([]byte("ab\bc"))
	s.Close()
	want := []call{{"a\n10%", 5, 2}, {"\r100%\n\n", 8, 3}, {"ab\rac", 10, 4}}
	if !slices.Equal(calls, want) {
		t.Fatalf("%+v, want %+v", calls, want)
	}
	calls = nil
	s = New(Options{Head: 1, Tail: -1, Live: live})
	s.Write([]byte("one\ntwo\n"))
	s.Close()
	if want := []call{{"one\n", 8, 2}}; !slices.Equal(calls, want) {
		t.Fatalf("%+v, want %+v", calls, want)
	}
}

// The counts Live gets are those of the whole stream at the text's end, whatever the writes.
func TestLiveCountsExact(t *testing.T) {
	var in strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&in, "%d\n", i)
	}
	raw := []byte(in.String())
	rng := rand.New(rand.NewPCG(1, 2))
	var got []byte
	fed := 0
	s := New(Options{Head: -1, Tail: -1, MaxBytes: 100, Live: func(text []byte, b, l int64) {
		got = append(got, text...)
		lines := int64(bytes.Count(raw[:fed], []byte("\n")))
		if raw[fed-1] != '\n' {
			lines++ // the line being written counts
		}
		if b != int64(fed) || l != lines || !bytes.Equal(got, raw[:fed]) {
			t.Fatalf("after %d bytes: counts %d bytes %d lines", fed, b, l)
		}
	}})
	for fed < len(raw) {
		n := min(1+rng.IntN(5000), len(raw)-fed)
		fed += n
		s.Write(raw[fed-n : fed])
	}
	s.Close()
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
		if rng.IntN(3) == 0 {
			o.readOn = int64(rng.IntN(100000)) + 1
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkSink(t, o, []byte(b.String()), uint64(i)) })
	}
}
