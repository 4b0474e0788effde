// Package sink turns the merged stdout+stderr byte stream of a command into what the model is shown,
// with bounded memory whatever the output size (reference §3.8, with the limits of §3.2 and the artifact
// spill and cap of §3.6).
//
// A [Sink] is an io.Writer. It sanitizes the stream as it arrives, keeps a tail window of the
// sanitized text (and, for a head limit, a head window), counts lines and bytes of the whole stream,
// applies head/tail line limits to the whole stream, and spills the raw bytes to an artifact on the
// first overflow. [Sink.Close] returns a [Summary]. Memory is about 2×MaxBytes +
// [sanitize.MaxOverwriteBytes] + [sanitize.MaxEscapeBytes] whatever the output size, one MaxBytes more
// with a head limit, and Write does not allocate once the raw buffer has spilled (or reached its size)
// and the windows have grown. The artifact is written in Write itself, from the caller's bytes.
//
// A head limit does not stop the reading at once (reference §3.2: counts are never guessed). Once it is
// met ([Sink.LimitMet]), what is shown is settled, and the sink goes on counting, sanitizing and
// spilling for at most [HeadReadOnBytes] more raw bytes; then Write returns [ErrHeadLimit]. The
// other bound, time, is the caller's: the runner reads on for a short while and closes the pipe.
//
// The sanitizer is pkg/sanitize's state machine ([sanitize.State]), embedded and fed each Write; a NUL
// byte anywhere makes the output binary instead: Text is "[binary output: N bytes]" (N raw bytes) and the
// artifact keeps the raw bytes. [sanitize.NewWriter] is the same sanitizer as a streaming filter, used
// to print an artifact's text: the text whose lines the notice counts.
package sink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Defaults (reference §3.8, §3.6).
const (
	DefaultMaxBytes         = 51200     // 50 KB tail window
	DefaultArtifactMaxBytes = 256 << 20 // 256 MiB artifact cap
)

// HeadReadOnBytes is how many raw bytes the sink takes after the Write that met a head limit, for the
// counts and the artifact, before it refuses more with [ErrHeadLimit] (reference §3.2: 2 MiB): the smallest
// round bound that keeps the totals of the finite commands §3.2 names exact (`seq 1 200000 | head -n 3`
// prints 1.3 MB), while `yes | head -n 5` writes 2 MB, not 8, before its pipe is closed (reference §12).
const HeadReadOnBytes = 2 << 20

// Shared byte strings (package-level so that passing them never allocates).
var (
	newline = []byte{'\n'}
	crByte  = []byte{'\r'}
)

var (
	// ErrHeadLimit is returned by [Sink.Write] once it has taken [HeadReadOnBytes] after the Write that
	// met the head limit: the caller should stop reading and close the pipe, as `| head` would (reference
	// §3.2). The stream was then not read to its end, and every count is a lower bound.
	ErrHeadLimit = errors.New("sink: head limit reached")
	// ErrClosed is returned by Write after Close.
	ErrClosed = errors.New("sink: write after close")
)

// Options configures a [Sink]. The zero value is usable except for Head and Tail, where 0 is a
// real limit: use -1 for none.
type Options struct {
	// MaxBytes is the size of the shown window in bytes of sanitized text; <= 0 → DefaultMaxBytes.
	MaxBytes int
	// Head and Tail are line limits on the whole stream; a negative value means none. Head is applied
	// first, then Tail to what Head kept, then the MaxBytes window (reference §3.2).
	Head, Tail int
	// ArtifactMaxBytes caps the raw bytes written to the artifact; <= 0 → DefaultArtifactMaxBytes.
	ArtifactMaxBytes int64
	// OpenArtifact is called at most once, lazily: when the raw bytes buffered would exceed MaxBytes,
	// or at Close when something was cut (a head/tail limit that hid lines counts, even for small
	// output) or the output is binary, and nothing was spilled yet. The sink writes the raw stream to
	// w and closes it. An error's text becomes a warning in Summary.Warnings as is (so it should say
	// that the artifact was not saved) and the sink goes on without an artifact. Nil: no artifact.
	OpenArtifact func() (w io.WriteCloser, id string, err error)
	// Keep opens the artifact at once (in New) and keeps it whatever the output, so the whole stream is
	// in it as it arrives (a background task's output, reference §8).
	Keep bool
	// Live, if set, receives the sanitized text as it arrives, once per Write that produced some, with
	// the sink's exact counts of the whole stream at the text's end (bytes and lines, as a Summary counts
	// them), from the goroutine that called Write, which it must not block. A CR that discards text is
	// passed on as a single '\r' before the text that replaces it (sink.LiveTail applies those marks).
	// Lines past a Head limit and text after binary is detected are not passed on. text is valid only
	// during the call.
	Live func(text []byte, totalBytes, totalLines int64)

	escMax, owMax int   // tests only: smaller sanitizer bounds; 0 → sanitize.MaxEscapeBytes, MaxOverwriteBytes
	readOn        int64 // tests only: a smaller read-on bound; 0 → HeadReadOnBytes
}

// Summary is what a [Sink] saw, returned by [Sink.Close]. Counts are in bytes of sanitized text
// and in lines, where a line is a run ending in '\n' plus a final unterminated run if non-empty. Its
// JSON (in every run's done event, in a task's record) leaves zero fields out: less to write and read.
type Summary struct {
	// Text is what is shown: the sanitized stream after Head, then Tail, then the MaxBytes window.
	// With a Head limit and no Tail the window is the start of what Head chose, ending at the last
	// line end that fits, else (one first line longer than MaxBytes) on a UTF-8 boundary (reference §3.2:
	// a head limit keeps the start). Otherwise it is the end, starting at the first line start that
	// still leaves output, else on a UTF-8 boundary. It keeps its final newline if any (the caller
	// drops one). For binary output it is "[binary output: N bytes]".
	Text                     string `json:",omitempty"`
	TotalLines, TotalBytes   int64  `json:",omitempty"` // the whole sanitized stream read (raw bytes read, for binary)
	OutputLines, OutputBytes int64  `json:",omitempty"` // of Text (0 for binary)
	// Truncated: Text is not the whole sanitized stream (binary output does not count as a cut).
	Truncated bool `json:",omitempty"`
	// TruncatedBy is "bytes" when the MaxBytes window cut what the limits chose, else "lines" (a
	// head/tail limit chose what is shown); "" when not truncated.
	TruncatedBy string `json:",omitempty"`
	// ShownStart and ShownEnd are the 1-based inclusive line numbers of Text within the whole stream;
	// 0, 0 when nothing is shown.
	ShownStart, ShownEnd int64 `json:",omitempty"`
	// PartialLine: Text is a part of one line, line ShownStart (== ShownEnd), longer than MaxBytes and
	// cut on a UTF-8 boundary: the line's end for a tail window, its start for a head window.
	PartialLine bool `json:",omitempty"`
	// LineBytes is the size in bytes of that line, its newline included, when PartialLine. LineOpen:
	// the line had not ended when the stream did (no newline after it in what was read), so if the
	// stream was not read to its end, LineBytes is a lower bound.
	LineBytes int64 `json:",omitempty"`
	LineOpen  bool  `json:",omitempty"`
	// ArtifactID is the id OpenArtifact returned, when the artifact was written without error. It can
	// be set while Truncated is false: a raw stream longer than MaxBytes is spilled even when its
	// sanitized text fits (escape codes, progress bars); the artifact is kept, nothing is claimed cut.
	ArtifactID string `json:",omitempty"`
	// ArtifactCapped: the raw stream exceeded ArtifactMaxBytes; ArtifactOmitted bytes were left out
	// and the artifact ends with a marker line and the final sanitized window.
	ArtifactCapped  bool  `json:",omitempty"`
	ArtifactOmitted int64 `json:",omitempty"`
	// Binary: a NUL byte was seen. The artifact keeps the raw bytes.
	Binary bool `json:",omitempty"`
	// HeadLimitReached: the head limit was met (LimitMet): Head lines were complete, or the output is
	// binary, so later output only went to the counts and the artifact.
	HeadLimitReached bool `json:",omitempty"`
	// Stopped: Write returned ErrHeadLimit, so the stream was not read to its end and the counts
	// cover what was read (lower bounds).
	Stopped  bool     `json:",omitempty"`
	Warnings []string `json:",omitempty"`
}

// BinaryText is what is shown for binary output of n raw bytes (reference §3.8): "[binary output: N bytes]",
// or, when the stream was not read to its end, "[binary output: at least N bytes]".
func BinaryText(n int64, complete bool) string {
	if !complete {
		return fmt.Sprintf(texts.BinaryOutputAtLeast, n)
	}
	return fmt.Sprintf(texts.BinaryOutput, n)
}

// Sink is the output sink of reference §3.8. It is an io.Writer; Write and Close may be called from
// different goroutines (they are serialized).
type Sink struct {
	mu  sync.Mutex
	o   Options
	z   sanitize.State
	win ring   // sanitized text of the lines within Head: its end
	pre prefix // the same text's start, for a head window (Head without Tail)

	rawTotal  int64 // raw bytes read
	total     int64 // sanitized bytes
	nl        int64 // newlines in the sanitized stream
	lineLen   int64 // sanitized bytes of the current line
	firstLine int64 // bytes of line 1 with its newline, once it ended
	lastLine  int64 // bytes of the last line within Head that ended, with its newline

	headWin bool  // Head without Tail: the window keeps the start
	headMet bool  // text past the Head limit was seen
	met     bool  // the head limit is met (LimitMet)
	metAt   int64 // rawTotal after the Write that met it
	stopped bool  // ErrHeadLimit returned
	binary  bool

	raw       []byte // raw bytes not yet in the artifact (until the first spill)
	spilled   bool   // OpenArtifact succeeded
	artFailed bool   // OpenArtifact failed or is nil: no artifact
	artBroken bool   // a write to the artifact failed
	art       *artWriter
	artID     string
	artN      int64 // raw bytes written to the artifact
	omitted   int64 // raw bytes left out past the cap

	liveBuf []byte // the live text of the current Write

	warnings []string
	closed   bool
	sum      Summary
}

// New returns a sink for one command's output. Its buffers grow with the output up to about
// 2×MaxBytes + MaxOverwriteBytes + MaxEscapeBytes.
func New(o Options) *Sink {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Head < 0 {
		o.Head = -1
	}
	if o.Tail < 0 {
		o.Tail = -1
	}
	if o.ArtifactMaxBytes <= 0 {
		o.ArtifactMaxBytes = DefaultArtifactMaxBytes
	}
	if o.escMax <= 0 {
		o.escMax = sanitize.MaxEscapeBytes
	}
	if o.owMax <= 0 {
		o.owMax = sanitize.MaxOverwriteBytes
	}
	s := &Sink{o: o}
	s.z.Init((*emitter)(s), o.escMax, o.owMax)
	// One byte more than MaxBytes shows whether the window starts at a line start; MaxOverwriteBytes
	// more keeps MaxBytes held after a CR discards a run.
	s.win = newRing(o.MaxBytes + o.owMax + 1)
	if o.readOn <= 0 {
		o.readOn = HeadReadOnBytes
	}
	s.o.readOn = o.readOn
	if s.headWin = o.Head >= 0 && o.Tail < 0; s.headWin {
		// One byte more than MaxBytes shows whether the window ends inside a character.
		s.pre = newPrefix(o.MaxBytes + 1)
	}
	s.artFailed = o.OpenArtifact == nil
	if o.Keep {
		s.spill()
	}
	return s
}

// Write consumes p and returns len(p), nil — except past a met head limit: once it has taken
// HeadReadOnBytes after the Write that met it, it takes only what fits, returns ErrHeadLimit, and
// 0, ErrHeadLimit after that. After Close it returns 0, ErrClosed.
func (s *Sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	if s.stopped {
		return 0, ErrHeadLimit
	}
	if len(p) == 0 {
		return 0, nil
	}
	var err error
	if s.met {
		if left := s.o.readOn - (s.rawTotal - s.metAt); int64(len(p)) >= left {
			p, s.stopped, err = p[:left], true, ErrHeadLimit
		}
	}
	s.rawTotal += int64(len(p))
	s.keepRaw(p)
	if !s.binary {
		if bytes.IndexByte(p, 0) >= 0 {
			s.binary = true
			s.liveFlush()
			if s.o.Head >= 0 {
				s.headMet = true // the view is a placeholder: nothing more to show
			}
		} else {
			s.z.Write(p)
			s.liveFlush()
		}
	}
	if !s.met && (s.headMet || (s.o.Head >= 0 && s.nl >= int64(s.o.Head))) {
		s.met, s.metAt = true, s.rawTotal
	}
	return len(p), err
}

// LimitMet reports whether the head limit is met: Head lines are complete, or the output is binary.
// What is shown is then settled; later output only adds to the counts and the artifact, for at most
// HeadReadOnBytes, and the caller may close the stream whenever it likes (reference §3.2). False without a
// head limit.
func (s *Sink) LimitMet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.met
}

// emitter is the Sink as its sanitizer's [sanitize.Emitter] (a conversion, no allocation), which keeps
// Text and CR off the Sink's own methods. They do the sink's work themselves (no wrapper: no extra call
// per emitted run).
type emitter Sink

// Text receives sanitized text (emitter).
func (e *emitter) Text(b []byte, lastNL int) {
	s := (*Sink)(e)
	n := int64(len(b))
	var nls int64
	if lastNL >= 0 {
		nls = int64(bytes.Count(b, newline))
	}
	if !s.headMet {
		f, fNL := b, lastNL
		if s.o.Head >= 0 {
			left := int64(s.o.Head) - s.nl // newlines still within the head
			switch {
			case left <= 0:
				f, s.headMet = nil, true
			case nls >= left:
				k := nthNewline(b, left)
				if k+1 < len(b) {
					f, fNL, s.headMet = b[:k+1], k, true
				}
			}
		}
		if len(f) > 0 {
			s.feed(f, fNL)
		}
	}
	s.total += n
	if lastNL >= 0 {
		s.nl += nls
		s.lineLen = int64(len(b) - lastNL - 1)
	} else {
		s.lineLen += n
	}
}

// feed takes text within the Head limit (all text without one); lastNL is the index of its last '\n',
// or -1. Before the counts are updated, s.nl and s.lineLen describe the text fed so far.
func (s *Sink) feed(f []byte, lastNL int) {
	s.win.write(f)
	if s.headWin {
		s.pre.write(f)
	}
	s.live(f)
	if lastNL < 0 {
		return
	}
	if s.nl == 0 {
		s.firstLine = s.lineLen + int64(bytes.IndexByte(f, '\n')) + 1
	}
	if prev := bytes.LastIndexByte(f[:lastNL], '\n'); prev >= 0 {
		s.lastLine = int64(lastNL - prev)
	} else {
		s.lastLine = s.lineLen + int64(lastNL) + 1
	}
}

// CR receives a CR discard (emitter).
func (e *emitter) CR(n int) {
	s := (*Sink)(e)
	if n <= 0 {
		return
	}
	s.total -= int64(n)
	s.lineLen -= int64(n)
	if !s.headMet { // the current line is within the head: it is in the window
		s.win.retract(int64(n))
		if s.headWin {
			s.pre.retract(int64(n))
		}
		s.live(crByte)
	}
}

// nthNewline returns the index of the n-th '\n' in b (n >= 1, b holds at least n).
func nthNewline(b []byte, n int64) int {
	off := 0
	for {
		k := bytes.IndexByte(b[off:], '\n')
		if n--; n == 0 {
			return off + k
		}
		off += k + 1
	}
}

func (s *Sink) live(b []byte) {
	if s.o.Live == nil || s.binary {
		return
	}
	s.liveBuf = append(s.liveBuf, b...)
}

// liveFlush passes the live text of a Write on, with the counts at its end.
func (s *Sink) liveFlush() {
	if len(s.liveBuf) == 0 {
		return
	}
	lines := s.nl
	if s.lineLen > 0 {
		lines++
	}
	s.o.Live(s.liveBuf, s.total, lines)
	s.liveBuf = s.liveBuf[:0]
}

func (s *Sink) warn(format string, a ...any) {
	s.warnings = append(s.warnings, fmt.Sprintf(format, a...))
}

// keepRaw buffers raw bytes until the first overflow, then writes them to the artifact.
func (s *Sink) keepRaw(p []byte) {
	switch {
	case s.spilled:
		s.artWrite(p)
	case s.artFailed:
	case len(s.raw)+len(p) <= s.o.MaxBytes:
		if s.raw == nil {
			s.raw = make([]byte, 0, min(s.o.MaxBytes, max(len(p), 4096)))
		}
		s.raw = append(s.raw, p...)
	default:
		s.spill()
		s.artWrite(p)
	}
}

// spill opens the artifact and writes what is buffered.
func (s *Sink) spill() {
	if s.spilled || s.artFailed {
		return
	}
	w, id, err := s.o.OpenArtifact()
	if err == nil && w == nil {
		err = errors.New("no writer")
	}
	if err != nil {
		s.artFailed = true
		s.raw = nil
		s.warn("%v", err) // the opener's error says what failed
		return
	}
	s.spilled, s.art, s.artID = true, newArtWriter(w, s.o.ArtifactMaxBytes), id
	s.artWrite(s.raw)
	s.raw = nil
}

// artWrite appends raw bytes to the artifact up to the cap.
func (s *Sink) artWrite(b []byte) {
	if !s.spilled || s.artBroken || len(b) == 0 {
		return
	}
	if room := s.o.ArtifactMaxBytes - s.artN; int64(len(b)) > room {
		room = max(room, 0)
		s.omitted += int64(len(b)) - room
		b = b[:room]
		if len(b) == 0 {
			return
		}
	}
	s.artN += int64(len(b))
	s.artPut(b)
}

// artPut writes to the artifact; a failure drops the artifact with a warning.
func (s *Sink) artPut(b []byte) {
	if s.artBroken {
		return
	}
	if _, err := s.art.Write(b); err != nil {
		s.artBroken = true
		s.warn("artifact %s dropped: write failed: %v", s.artID, err)
	}
}

// Close ends the stream and returns the summary. It flushes the sanitizer, writes the artifact if
// something was cut and none was written yet, appends the cap marker and final window to a capped
// artifact, and closes the artifact writer. Later calls return the same summary.
func (s *Sink) Close() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.sum
	}
	s.closed = true
	if !s.binary {
		s.z.Flush()
		s.liveFlush()
	}
	sum, tail := s.summarize()
	if sum.Truncated || sum.Binary {
		s.spill()
	}
	if s.spilled {
		if s.omitted > 0 {
			s.artPut(fmt.Appendf(nil, "\n[agentbash: %d bytes omitted: artifact capped at %s]\n",
				s.omitted, FormatSize(s.o.ArtifactMaxBytes)))
			s.artPut(tail)
		}
		switch werr, cerr := s.art.Close(); {
		case s.artBroken:
		case werr != nil:
			s.artBroken = true
			s.warn("artifact %s dropped: write failed: %v", s.artID, werr)
		case cerr != nil:
			s.artBroken = true
			s.warn("artifact %s dropped: close failed: %v", s.artID, cerr)
		}
		if !s.artBroken {
			sum.ArtifactID = s.artID
			sum.ArtifactCapped = s.omitted > 0
			sum.ArtifactOmitted = s.omitted
		}
	}
	sum.HeadLimitReached, sum.Stopped = s.met, s.stopped
	sum.Warnings = s.warnings
	s.sum = sum
	s.win, s.pre, s.raw, s.liveBuf = ring{}, prefix{}, nil, nil
	return sum
}

// summarize computes the summary from the window and counts. tail is the final sanitized window of
// the whole stream for a capped artifact (nil when the window does not hold the stream's end).
func (s *Sink) summarize() (sum Summary, tail []byte) {
	if s.binary {
		return Summary{
			Text:       BinaryText(s.rawTotal, true),
			TotalBytes: s.rawTotal,
			Binary:     true,
		}, nil
	}
	sum.TotalBytes = s.total
	sum.TotalLines = s.nl
	if s.lineLen > 0 {
		sum.TotalLines++
	}

	r := &s.win
	end := r.w // the fed text: lines 1..min(Head, all), sanitized
	maxB := int64(s.o.MaxBytes)
	winLo := max(r.lo, end-maxB-1)
	buf := r.slice(winLo, end)
	at := func(q int64) byte { return buf[q-winLo] }

	// Where the Tail limit starts; -1: before the held window (the lines are longer than it).
	var limitStart int64
	if t := int64(s.o.Tail); t == 0 {
		limitStart = end
	} else if t > 0 {
		pos := end
		if end > winLo && at(end-1) == '\n' {
			pos-- // a final newline does not make an extra line
		}
		found := int64(0)
		for found < t {
			k := bytes.LastIndexByte(buf[:pos-winLo], '\n')
			if k < 0 {
				break
			}
			found++
			pos = winLo + int64(k)
		}
		switch {
		case found == t:
			limitStart = pos + 1
		case winLo == 0:
			limitStart = 0
		default:
			limitStart = -1
		}
	}

	var text []byte
	var byteCut, partial bool
	if s.headWin {
		text, byteCut, partial = s.headCut(end)
	} else {
		var start int64
		start, byteCut, partial = s.cut(buf, winLo, end, limitStart)
		text = buf[start-winLo:]
	}
	sum.Text = string(text)
	sum.OutputBytes = int64(len(text))
	sum.OutputLines = int64(bytes.Count(text, newline))
	if len(text) > 0 && text[len(text)-1] != '\n' {
		sum.OutputLines++
	}
	if len(text) > 0 {
		if s.headWin {
			sum.ShownStart, sum.ShownEnd = 1, sum.OutputLines
		} else {
			fedNL := s.nl
			if s.headMet {
				fedNL = int64(s.o.Head)
			}
			sum.ShownEnd = fedNL
			if at(end-1) != '\n' {
				sum.ShownEnd++
			}
			sum.ShownStart = sum.ShownEnd - sum.OutputLines + 1
		}
		if sum.PartialLine = partial; partial {
			// The line cut is line 1 for a head window, else the last line fed; either is still the
			// current line of the stream when no newline has ended it.
			switch {
			case s.headWin && s.nl > 0:
				sum.LineBytes = s.firstLine
			case !s.headWin && at(end-1) == '\n':
				sum.LineBytes = s.lastLine
			default:
				sum.LineBytes, sum.LineOpen = s.lineLen, true
			}
		}
	}
	if sum.OutputBytes < sum.TotalBytes {
		sum.Truncated = true
		sum.TruncatedBy = "lines"
		if byteCut {
			sum.TruncatedBy = "bytes"
		}
	}
	if !s.headMet {
		t, _, _ := s.cut(buf, winLo, end, 0)
		tail = buf[t-winLo:]
	}
	return sum, tail
}

// headCut applies the MaxBytes window to the start of the fed text (end bytes long) for a head
// window: what fits, up to the last line end in it, else (one first line longer than the window) up to
// a UTF-8 boundary. It returns the text (in the prefix buffer), whether the window cut into what the
// limit chose, and whether it ends inside a line.
func (s *Sink) headCut(end int64) (text []byte, byteCut, partial bool) {
	b := s.pre.bytes()
	maxB := s.o.MaxBytes
	if end <= int64(maxB) {
		return b, false, false
	}
	if k := bytes.LastIndexByte(b[:maxB], '\n'); k >= 0 {
		return b[:k+1], true, false
	}
	j := maxB // the prefix holds byte maxB: a character that starts before it and runs on is left out
	for j > 0 && !utf8.RuneStart(b[j]) {
		j--
	}
	return b[:j], true, true
}

// cut applies the MaxBytes window to the fed text [limitStart, end) held in buf (from winLo). It
// returns where the shown text starts, whether the window cut into what the limits chose, and
// whether it starts inside a line.
func (s *Sink) cut(buf []byte, winLo, end, limitStart int64) (start int64, byteCut, partial bool) {
	byteStart := max(end-int64(s.o.MaxBytes), 0)
	if limitStart >= byteStart {
		return limitStart, false, false
	}
	// The first line start in the window that still leaves output. The ring holds the byte before
	// the window (its size is MaxBytes+MaxOverwriteBytes+1 and a discard retracts at most
	// MaxOverwriteBytes), so whether the window itself starts a line is known.
	from := max(byteStart-1, winLo)
	if k := bytes.IndexByte(buf[from-winLo:end-1-winLo], '\n'); k >= 0 {
		return from + int64(k) + 1, true, false
	}
	start = byteStart
	for start < end && buf[start-winLo]&0xc0 == 0x80 {
		start++ // never split a character
	}
	return start, true, true
}
