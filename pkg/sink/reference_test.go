package sink

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// This file is a second, deliberately naive implementation of the sink's semantics: it sees the
// whole input at once, looks ahead instead of keeping state, and builds the full sanitized text in
// memory. The tests and fuzzers check the streaming sink against it.

// refSanitize sanitizes the whole input (SPEC §3.8) with the given bounds.
func refSanitize(in []byte, escMax, owMax int) []byte {
	var out []byte
	runStart := 0 // where the current run (since the line start or the last CR) starts in out
	crPending := false
	put := func(b []byte) {
		if crPending {
			crPending = false
			if b[0] != '\n' {
				if len(out)-runStart <= owMax {
					out = out[:runStart]
				}
				runStart = len(out)
			}
		}
		out = append(out, b...)
		if b[0] == '\n' {
			runStart = len(out)
		}
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == 0x1b:
			if n := refEscape(in[i:], escMax); n > 0 {
				i += n
				continue
			}
			i++ // the ESC is dropped; what follows is text
		case c == '\r':
			crPending = true
			i++
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f):
			put(in[i : i+1])
			i++
		case c < 0x80:
			i++ // control
		default:
			n, ok := refChar(in[i:])
			if !ok {
				put([]byte("\uFFFD"))
			} else if r, _ := utf8.DecodeRune(in[i : i+n]); r >= 0xa0 {
				put(in[i : i+n])
			}
			i += n
		}
	}
	return out
}

// refEscape returns the length of the complete escape sequence at the start of b (b[0] == ESC)
// when it is at most max bytes long, else 0.
func refEscape(b []byte, max int) int {
	if len(b) < 2 {
		return 0
	}
	limit := min(len(b), max)
	c := b[1]
	switch {
	case c == '[':
		for j := 2; j < limit; j++ {
			d := b[j]
			if d >= 0x40 && d <= 0x7e {
				return j + 1
			}
			if d < 0x20 || d > 0x3f {
				return 0
			}
		}
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for j := 2; j < limit; j++ {
			d := b[j]
			if d == 0x07 {
				return j + 1
			}
			if d == 0x1b {
				if j+1 < limit && b[j+1] == '\\' {
					return j + 2
				}
				return 0
			}
			if d < 0x20 {
				return 0
			}
		}
	case c >= 0x20 && c <= 0x2f:
		for j := 2; j < limit; j++ {
			d := b[j]
			if d >= 0x30 && d <= 0x7e {
				return j + 1
			}
			if d < 0x20 || d > 0x2f {
				return 0
			}
		}
	case c >= 0x30 && c <= 0x7e:
		if limit >= 2 {
			return 2
		}
	}
	return 0
}

// refChar looks at a non-ASCII byte: a valid character (its length, true), or the maximal invalid
// subpart that becomes one U+FFFD (its length, false).
func refChar(b []byte) (int, bool) {
	if r, size := utf8.DecodeRune(b); r != utf8.RuneError || size > 1 {
		return size, true
	}
	var l int
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		l = 2
	case c >= 0xe0 && c <= 0xef:
		l = 3
	case c >= 0xf0 && c <= 0xf4:
		l = 4
	default:
		return 1, false
	}
	m := 1
	for m < l && m < len(b) {
		// Is b[:m+1] a prefix of a valid character? Complete it with continuation bytes.
		p := append(bytes.Clone(b[:m+1]), bytes.Repeat([]byte{0x80}, l-m-1)...)
		if !utf8.Valid(p) {
			break
		}
		m++
	}
	return m, false
}

// refSummary computes the Summary fields that do not depend on the artifact.
func refSummary(in []byte, o Options) Summary {
	if bytes.IndexByte(in, 0) >= 0 {
		return Summary{
			Text:       "[binary output: " + strconv.Itoa(len(in)) + " bytes]",
			TotalBytes: int64(len(in)),
			Binary:     true,
		}
	}
	escMax, owMax := escMaxOf(o), owMaxOf(o)
	maxB := o.MaxBytes
	if maxB <= 0 {
		maxB = DefaultMaxBytes
	}
	all := refSanitize(in, escMax, owMax)
	lines := bytes.SplitAfter(all, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	sum := Summary{TotalLines: int64(len(lines)), TotalBytes: int64(len(all))}
	sel, first := lines, 0
	if o.Head >= 0 && len(sel) > o.Head {
		sel = sel[:o.Head]
	}
	if o.Tail >= 0 && len(sel) > o.Tail {
		first = len(sel) - o.Tail
		sel = sel[first:]
	}
	joined := bytes.Join(sel, nil)
	text, byteCut, partial := joined, false, false
	var line []byte // the line a partial view is part of
	switch {
	case len(joined) <= maxB:
	case o.Head >= 0 && o.Tail < 0:
		// A head window keeps the start: the whole lines that fit, else the start of the first line up
		// to a character boundary.
		byteCut = true
		n := 0
		for _, l := range sel {
			if n+len(l) > maxB {
				break
			}
			n += len(l)
		}
		if n == 0 {
			n = maxB
			for n > 0 && !utf8.RuneStart(joined[n]) {
				n--
			}
			partial, line = true, sel[0]
		}
		text = joined[:n]
	default:
		// Otherwise the end: from the first line start that leaves at most maxB, else from a character
		// boundary inside the last line.
		byteCut = true
		bs := len(joined) - maxB
		start := -1
		off := 0
		for _, l := range sel {
			if off >= bs {
				start = off
				break
			}
			off += len(l)
		}
		if start < 0 {
			start = bs
			for start < len(joined) && !utf8.RuneStart(joined[start]) {
				start++
			}
			partial, line = true, sel[len(sel)-1]
		}
		text = joined[start:]
	}
	sum.Text = string(text)
	sum.OutputBytes = int64(len(text))
	if len(text) > 0 {
		sum.OutputLines = int64(bytes.Count(text, []byte{'\n'}))
		if text[len(text)-1] != '\n' {
			sum.OutputLines++
		}
		if o.Head >= 0 && o.Tail < 0 {
			sum.ShownStart = int64(first + 1)
			sum.ShownEnd = sum.ShownStart + sum.OutputLines - 1
		} else {
			sum.ShownEnd = int64(first + len(sel))
			sum.ShownStart = sum.ShownEnd - sum.OutputLines + 1
		}
		if partial {
			sum.PartialLine = true
			sum.LineBytes = int64(len(line))
			sum.LineOpen = line[len(line)-1] != '\n'
		}
	}
	if len(text) < len(all) {
		sum.Truncated = true
		sum.TruncatedBy = "lines"
		if byteCut {
			sum.TruncatedBy = "bytes"
		}
	}
	return sum
}
