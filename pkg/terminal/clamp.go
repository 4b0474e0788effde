package terminal

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/texts"
)

var newline = []byte{'\n'}

// LiveLineMax is the longest line, in characters, that the live terminal view prints whole (reference §3.10).
const LiveLineMax = 4000

// LineClamp is an io.Writer for the live terminal view: it passes text through and clamps each line at
// max characters, replacing the rest with `… [N chars omitted]`. Input is sanitized UTF-8 text.
type LineClamp struct {
	w       io.Writer
	max     int
	col     int // characters written on the current line
	omitted int // characters dropped from the current line
}

// NewLineClamp returns a LineClamp writing to w.
func NewLineClamp(w io.Writer, max int) *LineClamp { return &LineClamp{w: w, max: max} }

// Write implements io.Writer; it always reports len(p) so a closed terminal never stops the run.
func (c *LineClamp) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		nl := bytes.IndexByte(p, '\n')
		seg := p
		if nl >= 0 {
			seg = p[:nl]
		}
		if room := c.max - c.col; room > 0 {
			keep, chars := prefixChars(seg, room)
			_, _ = c.w.Write(seg[:keep])
			c.col += chars
			c.omitted += utf8.RuneCount(seg[keep:])
		} else {
			c.omitted += utf8.RuneCount(seg)
		}
		if nl < 0 {
			break
		}
		c.endLine()
		_, _ = c.w.Write(newline)
		p = p[nl+1:]
	}
	return n, nil
}

func (c *LineClamp) endLine() {
	if c.omitted > 0 {
		fmt.Fprintf(c.w, texts.CharsOmitted, c.omitted)
	}
	c.col, c.omitted = 0, 0
}

// Flush ends an unterminated last line, and reports whether it had to (the cursor was mid-line).
func (c *LineClamp) Flush() bool {
	if c.col > 0 || c.omitted > 0 {
		c.endLine()
		_, _ = c.w.Write(newline)
		return true
	}
	return false
}

// prefixChars returns the byte length of the first n characters of b, and how many characters that is.
func prefixChars(b []byte, n int) (bytes, chars int) {
	for bytes < len(b) && chars < n {
		_, size := utf8.DecodeRune(b[bytes:])
		bytes += size
		chars++
	}
	return bytes, chars
}
