package sink

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// This file is a second, deliberately naive implementation of the sink's semantics: it sees the
// whole input at once, looks ahead instead of keeping state, and builds the full sanitized text in
// memory (with the sanitizer's reference, sanitizetest.Reference). The tests and fuzzers check the
// streaming sink against it.

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
	all := sanitizetest.Reference(in, escMax, owMax)
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
