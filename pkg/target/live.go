package target

import (
	"strings"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/run"
)

// live turns the far side's update events into the pieces an executor.Observer takes. An update carries
// the sanitized tail of the whole output (CR-redrawn lines collapsed) and the exact counts at its end; an
// observer wants each piece to continue the one before (run.LiveText). The new piece is what the tail
// holds past the bytes already passed on; a tail that starts past them is passed whole, Skipped the bytes
// between; a line the far side redrew (a CR discarded its text, so the counts may even go down) is passed
// as a '\r' mark, which discards the line's text as the sink's marks do, then the line's text now.
type live struct {
	obs   executor.Observer
	prev  string // the last update's text: the stream's tail at total
	total int64  // the bytes of the stream at prev's end
	seen  bool   // an update came
}

// update passes the new part of u on.
func (l *live) update(u update) {
	text, n := u.Text, u.TotalBytes
	start := max(n-int64(len(text)), 0) // where text begins in the stream
	var piece, mark string
	var skipped int64
	switch {
	case !l.seen:
		piece, skipped = text, start
	case n >= l.total && l.continues(text, start):
		if start > l.total { // the tail begins past what was passed on
			piece, skipped = text, start-l.total
		} else {
			piece = text[runeStart(text, int(l.total-start)):]
		}
	default: // the open line was redrawn
		stable := l.total - int64(len(l.prev)-(strings.LastIndexByte(l.prev, '\n')+1))
		if stable >= start {
			piece, mark = text[runeStart(text, int(stable-start)):], "\r"
		} else {
			piece, skipped = text, start-stable
		}
	}
	l.prev, l.total, l.seen = text, n, true
	// What a far side sends is not trusted to be clean: the piece is sanitized as output is here.
	piece = mark + sanitized(piece)
	if piece == "" && skipped == 0 {
		return
	}
	l.obs(run.LiveText{Text: piece, TotalBytes: n, TotalLines: u.TotalLines, Skipped: skipped})
}

// continues says whether text, which begins at start in the stream, agrees with the last tail where both
// hold the same bytes: the stream went on without redrawing a line passed on before.
func (l *live) continues(text string, start int64) bool {
	prevStart := l.total - int64(len(l.prev))
	from, to := max(start, prevStart), min(l.total, start+int64(len(text)))
	if from >= to {
		return true
	}
	return text[from-start:to-start] == l.prev[from-prevStart:to-prevStart]
}

// runeStart is i, or the next index where a character of s begins.
func runeStart(s string, i int) int {
	i = min(max(i, 0), len(s))
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
