// Package terminal writes results and live output for a person at a terminal (reference §3.10): the output
// live as it arrives, each line clamped, or the rolling `--preview`, then a footer.
package terminal

import (
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/livequeue"
	"github.com/agentbash/agentbash/pkg/result"
)

// Options shapes the text format on a terminal (reference §3.10).
type Options struct {
	// Preview > 0 shows only the last Preview lines of the output, after a line saying how many were hidden.
	Preview int
	// Roll redraws the preview in place while the command runs (cursor movement: not for TERM=dumb).
	Roll bool
	// Color paints the status lines; never when NO_COLOR is set.
	Color bool
	// Cols and Rows are the terminal's size in characters, 0 when unknown; the rolling preview keeps its
	// lines within them.
	Cols, Rows int
}

// View is the text format for a person at a terminal: the output live as it arrives (through a queue,
// so a slow terminal never slows the command; each line clamped at LiveLineMax characters), or with
// --preview the last N lines rolling in place, then a footer: the status and notice lines of reference §3.9 and
// a summary line naming what happened, with the duration, the timeout and the warnings.
type View struct {
	w     io.Writer
	opt   Options
	async *livequeue.Writer
	clamp *LineClamp
	roll  *Roller
}

// New returns a View writing to w, which must be a terminal.
func New(w io.Writer, opt Options) *View { return &View{w: w, opt: opt} }

// liveQueueBytes bounds the live view's queue.
const liveQueueBytes = 1 << 20

// Live returns the writer for the live view (fed by the pipeline's Observer): sanitized output as it
// arrives. Without it the output is printed once, by Finish. Write never blocks on the terminal.
func (t *View) Live() io.Writer {
	switch {
	case t.opt.Preview > 0 && t.opt.Roll:
		if t.roll == nil {
			t.roll = NewRoller(t.w, RollOptions{Lines: t.opt.Preview, Cols: t.opt.Cols, Rows: t.opt.Rows, Color: t.opt.Color})
		}
		return t.roll
	case t.opt.Preview > 0:
		return nil // the preview is printed at the end
	}
	if t.clamp == nil {
		t.async = livequeue.New(t.w, liveQueueBytes)
		t.clamp = NewLineClamp(t.async, LiveLineMax)
	}
	return t.clamp
}

// Finish ends the live view and writes the rest of r: the output unless it was streamed, the status and
// notice lines, the summary line (`exit 3 · 1.2s · timeout 300s`) and one line per warning.
func (t *View) Finish(r result.Result) error {
	endedLine, erased := false, false
	if t.clamp != nil {
		endedLine = t.clamp.Flush()
		t.async.Close()
	}
	if t.roll != nil {
		erased = t.roll.Close()
	}
	var b strings.Builder
	if r.Details.Cancelled && r.CancelSignal == unix.SIGINT && !endedLine && !erased {
		// The terminal echoed ^C where the cursor was; the cancel line starts on a line of its own.
		b.WriteString("\n")
	}
	paint := func(code, s string) string {
		if !t.opt.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	if t.clamp != nil && r.Streamed {
		if first, _, ok := strings.Cut(r.Output, "\n"); ok && (r.Details.TimedOut || r.Details.Cancelled) {
			b.WriteString(paint("1;31", first) + "\n")
		}
	} else {
		out := r.Output
		if t.opt.Preview > 0 {
			cp := r
			cp.Footer = nil
			out = cp.Preview(t.opt.Preview)
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
	status := paint("32", StatusWords(r))
	if r.IsError {
		status = paint("1;31", StatusWords(r))
	}
	meta := (time.Duration(r.Details.DurationMs) * time.Millisecond).String()
	if !r.Details.TimedOut {
		meta += " · timeout " + result.FormatSeconds(r.Details.TimeoutSeconds) + "s"
	}
	if r.Details.ArtifactID != "" {
		meta += " · artifact://" + r.Details.ArtifactID
	}
	b.WriteString(status + paint("2", " · "+meta) + "\n")
	for _, warn := range r.Details.Warnings {
		b.WriteString(paint("33", "warning: "+result.OneLine(warn)) + "\n")
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// StatusWords names what happened, for the summary line of the terminal footer: `exit 3`,
// `timed out after 5s`, `cancelled (SIGINT)`, `killed by SIGKILL`, `blocked`, `not run`,
// `no exit status`. A timeout or a cancel is never named by the signal agentbash sent (reference §3.10).
func StatusWords(r result.Result) string {
	d := r.Details
	switch {
	case d.TimedOut:
		return "timed out after " + result.FormatSeconds(d.TimeoutSeconds) + "s"
	case d.Cancelled && r.CancelSignal != 0:
		return "cancelled (" + unix.SignalName(r.CancelSignal) + ")"
	case d.Cancelled:
		return "cancelled"
	case d.Status == result.StatusBlocked:
		return "blocked"
	case d.Status == result.StatusError:
		return "not run"
	case d.Status == result.StatusSignaled:
		return "killed by " + d.Signal
	case d.ExitCode != nil:
		return fmt.Sprintf("exit %d", *d.ExitCode)
	}
	return "no exit status"
}
