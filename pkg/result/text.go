package result

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/agentbash/agentbash/pkg/texts"
)

// WriteText writes the model-visible text and a newline: what JSON's content holds (reference §3.10). With
// preview > 0 only the last preview lines of the output are shown, after a line saying how many were hidden.
func WriteText(w io.Writer, r Result, preview int) error {
	text := r.Text()
	if preview > 0 {
		text = r.Preview(preview)
	}
	_, err := io.WriteString(w, text+"\n")
	return err
}

// Preview is the model-visible text with only the last n lines of the output (n ≥ 1), after a line saying
// how many were hidden (`[3 earlier lines hidden; showing the last 2]`, counting the lines a limit or the
// window cut too); the first line of a timeout or cancel stays above it.
func (r Result) Preview(n int) string {
	first, out := "", r.Output
	if r.Details.TimedOut || r.Details.Cancelled {
		// The first line says so (reference §3.9); it stays above the preview.
		if f, rest, ok := strings.Cut(out, "\n"); ok {
			first, out = f+"\n", rest
		}
	}
	lines := strings.Split(out, "\n")
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
	cp.Output = first + strings.Join(lines, "\n")
	return cp.Text()
}

// WriteWarnings writes each warning on a line of its own, `agentbash: warning: …`, with any control
// characters in it (a newline from an error text) turned into spaces, so one warning is one line.
func WriteWarnings(w io.Writer, warnings []string) error {
	var b strings.Builder
	for _, warn := range warnings {
		b.WriteString(texts.WarningPrefix + OneLine(warn) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// OneLine turns the control characters of s into spaces, so a warning (or any text from an error) is one
// line.
func OneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
