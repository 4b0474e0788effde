package result

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

var newline = []byte{'\n'}

// LiveLineMax is the longest line, in characters, that the live terminal view prints whole (SPEC §3.10).
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
		fmt.Fprintf(c.w, "… [%d chars omitted]", c.omitted)
	}
	c.col, c.omitted = 0, 0
}

// Flush ends an unterminated last line.
func (c *LineClamp) Flush() {
	if c.col > 0 || c.omitted > 0 {
		c.endLine()
		_, _ = c.w.Write(newline)
	}
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

// WriteText writes the model-visible text and a newline: what JSON's content holds (SPEC §3.10). With
// preview > 0 only the last preview lines of the output are shown, after a line saying how many were hidden.
func WriteText(w io.Writer, r Result, preview int) error {
	text := r.Text()
	if preview > 0 {
		text = previewed(r, preview)
	}
	_, err := io.WriteString(w, text+"\n")
	return err
}

func previewed(r Result, n int) string {
	lines := strings.Split(r.Output, "\n")
	if len(lines) > n {
		hidden := len(lines) - n
		earlier := 0 // lines before the shown range, cut by the window or a limit
		if m := r.Details.Meta; m != nil && m.Truncation.ShownRange.Start > 1 {
			earlier = int(m.Truncation.ShownRange.Start - 1)
		}
		header := fmt.Sprintf("[%d earlier lines hidden; showing the last %d]", hidden+earlier, n)
		lines = append([]string{header}, lines[hidden:]...)
	}
	cp := r
	cp.Output = strings.Join(lines, "\n")
	return cp.Text()
}

// TerminalOptions shapes the text format on a terminal.
type TerminalOptions struct {
	Live    *LineClamp // the output was already streamed through it
	Preview int
	Color   bool // never when NO_COLOR is set
}

// WriteTerminal writes the result for a person at a terminal: the output (unless it was streamed live),
// then the status and notice lines and a summary line with exit code, duration and timeout, coloured when
// opt.Color.
func WriteTerminal(w io.Writer, r Result, opt TerminalOptions) error {
	var b strings.Builder
	paint := func(code, s string) string {
		if !opt.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	if opt.Live != nil && r.Streamed {
		opt.Live.Flush()
		if first, _, ok := strings.Cut(r.Output, "\n"); ok && (r.Details.TimedOut || r.Details.Cancelled) {
			b.WriteString(paint("1;31", first) + "\n")
		}
	} else {
		out := r.Output
		if opt.Preview > 0 {
			cp := r
			cp.Footer = nil
			out = previewed(cp, opt.Preview)
		}
		clamp := NewLineClamp(&b, LiveLineMax)
		_, _ = clamp.Write([]byte(out))
		clamp.Flush()
	}
	for _, f := range r.Footer {
		color := "33"
		if strings.HasPrefix(f, "Command") {
			color = "1;31"
		}
		b.WriteString("\n" + paint(color, f) + "\n")
	}
	status := "exit " + exitText(r)
	if r.IsError {
		status = paint("1;31", status)
	} else {
		status = paint("32", status)
	}
	meta := fmt.Sprintf("%s · timeout %ss", time.Duration(r.Details.DurationMs)*time.Millisecond,
		FormatSeconds(r.Details.TimeoutSeconds))
	if r.Details.ArtifactID != "" {
		meta += " · artifact://" + r.Details.ArtifactID
	}
	b.WriteString(status + paint("2", " · "+meta) + "\n")
	for _, warn := range r.Details.Warnings {
		b.WriteString(paint("33", "warning: "+warn) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func exitText(r Result) string {
	switch {
	case r.Details.ExitCode != nil:
		return fmt.Sprint(*r.Details.ExitCode)
	case r.Details.Signal != "":
		return r.Details.Signal
	}
	return r.Details.Status
}
