package sink

import (
	"bytes"
	"strings"
)

// LiveTail is the end of a run's live output (Options.Live) with its CR marks applied: a '\r' in the
// live text discards the text of the current line (the sink passes one on exactly where it discarded a
// line's text for a bare CR, before the text that replaces it), so Tail is what the sanitized output ends
// with, not every state a progress bar went through. It keeps at most 2×max bytes (at least the newest
// max). Not safe for concurrent use.
type LiveTail struct {
	max   int
	buf   []byte
	line  int64 // bytes of the current line received (its start may be out of buf)
	total int64 // bytes of sanitized text so far: received, less what CRs discarded
	lines int64 // newlines so far
}

// NewLiveTail returns a LiveTail that keeps at least the newest max bytes.
func NewLiveTail(max int) *LiveTail { return &LiveTail{max: max} }

// Write takes the next piece of live text.
func (t *LiveTail) Write(text string) {
	for len(text) > 0 {
		piece := text
		i := strings.IndexByte(text, '\r')
		if i >= 0 {
			piece = text[:i]
		}
		t.add(piece)
		if i < 0 {
			break
		}
		// The current line's text is gone.
		t.total -= t.line
		t.line = 0
		t.buf = t.buf[:bytes.LastIndexByte(t.buf, '\n')+1]
		text = text[i+1:]
	}
	if len(t.buf) > 2*t.max {
		n := copy(t.buf, t.buf[len(t.buf)-t.max:])
		t.buf = t.buf[:n]
	}
}

func (t *LiveTail) add(piece string) {
	if piece == "" {
		return
	}
	t.buf = append(t.buf, piece...)
	t.total += int64(len(piece))
	if k := int64(strings.Count(piece, "\n")); k > 0 {
		t.lines += k
		t.line = int64(len(piece) - 1 - strings.LastIndexByte(piece, '\n'))
	} else {
		t.line += int64(len(piece))
	}
}

// Tail returns the newest text kept (valid until the next Write).
func (t *LiveTail) Tail() []byte { return t.buf }

// Total returns the bytes of sanitized text so far, and its newlines.
func (t *LiveTail) Total() (bytes, newlines int64) { return t.total, t.lines }
