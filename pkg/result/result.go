// Package result shapes the outcome of one `agentbash run` into the tool result of reference §3.9–3.10 (the
// model-visible text, isError and details). The process exit status of §3.11 is the CLI's to derive,
// from details.status.
package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Status values of details.status (reference §3.10). Status is the field to switch on.
const (
	StatusExited    = "exited"    // ran to the end, any exit code
	StatusSignaled  = "signaled"  // the shell died of a signal agentbash did not send
	StatusTimedOut  = "timed_out" // killed by agentbash at the timeout
	StatusCancelled = "cancelled" // agentbash itself got SIGINT/SIGTERM/SIGHUP
	StatusBlocked   = "blocked"   // an interceptor rule fired; nothing ran
	StatusError     = "error"     // could not run: bad cwd, no shell, bad config
	StatusRunning   = "running"   // a task (reference §8): started, yielded, or still going at a read
	StatusKilled    = "killed"    // a task ended by `kill` or tasks.maxLifetime
)

// Non-zero exit policies (config result.nonZeroExit).
const (
	NonZeroError  = "error"  // a non-zero exit is an error result (default)
	NonZeroReport = "report" // a non-zero exit is plain data
)

// Result is the tool result, MCP CallToolResult-compatible (reference §3.10).
type Result struct {
	Content []Content `json:"content"`
	IsError bool      `json:"isError"`
	Details Details   `json:"details"`

	// Output is the shown output without the status and notice lines (for live text mode).
	Output string `json:"-"`
	// Footer holds the status and notice lines that follow the output (for live text mode).
	Footer []string `json:"-"`
	// Streamed is set when the output was already written live to a terminal.
	Streamed bool `json:"-"`
	// CancelSignal is the signal that cancelled agentbash (SIGINT), 0 when the run was not cancelled or
	// the cause is unknown: the terminal footer names it, the CLI's exit status is 128 + it (reference §3.11).
	CancelSignal syscall.Signal `json:"-"`
	// KillSignal is the signal that ended a killed task (status killed: `kill` or tasks.maxLifetime, reference
	// §8), 0 otherwise: the CLI's exit status is 128 + it.
	KillSignal syscall.Signal `json:"-"`
}

// Content is one MCP content block.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Details is the structured part of the result. Keys match reference §3.10; optional ones are omitted when
// they do not apply.
type Details struct {
	Status string `json:"status"`
	// Command, Cwd and Shell are there in every result of a command; an error result that names none (an
	// unknown or malformed task id) leaves them out rather than say "".
	Command           string          `json:"command,omitempty"`
	NormalizedCommand string          `json:"normalizedCommand,omitempty"`
	Cwd               string          `json:"cwd,omitempty"`
	Shell             string          `json:"shell,omitempty"`
	ExitCode          *int            `json:"exitCode"`
	Signal            string          `json:"signal,omitempty"`
	TimedOut          bool            `json:"timedOut"`
	Cancelled         bool            `json:"cancelled"`
	TimeoutSeconds    float64         `json:"timeoutSeconds"`
	TimeoutRequested  *float64        `json:"timeoutRequested,omitempty"`
	DurationMs        int64           `json:"durationMs"`
	Head              *int            `json:"head,omitempty"`
	Tail              *int            `json:"tail,omitempty"`
	ArtifactID        string          `json:"artifactId,omitempty"`
	ArtifactPath      string          `json:"artifactPath,omitempty"` // absolute; set whenever ArtifactID is (reference §3.6)
	ProducerStatus    *ProducerStatus `json:"producerStatus,omitempty"`
	Meta              *Meta           `json:"meta,omitempty"`
	Blocked           *Blocked        `json:"blocked,omitempty"`
	LeftoverPids      []int           `json:"leftoverPids,omitempty"`
	Warnings          []string        `json:"warnings,omitempty"`
	// Background tasks (reference §8): the task's id (decimal digits), the shell's and the supervisor's pids,
	// RFC 3339 times, a read's loss (raw artifact bytes skipped since the reader's last read), whether
	// `kill` killed it, and why a task could not run or was lost.
	TaskID        string `json:"taskId,omitempty"`
	Pid           int    `json:"pid,omitempty"`
	SupervisorPid int    `json:"supervisorPid,omitempty"`
	StartedAt     string `json:"startedAt,omitempty"`
	EndedAt       string `json:"endedAt,omitempty"`
	Lossy         bool   `json:"lossy,omitempty"`
	SkippedBytes  int64  `json:"skippedBytes,omitempty"`
	Killed        *bool  `json:"killed,omitempty"`
	// LeftoverKilled (kill): how many processes the kill ended that the task's shell had left running.
	LeftoverKilled int    `json:"leftoverKilled,omitempty"`
	Error          string `json:"error,omitempty"`
	// Sessions (reference §7.1): the session the command ran in, and where it ended when its state was kept
	// (the next command's cwd).
	Session  string `json:"session,omitempty"`
	FinalCwd string `json:"finalCwd,omitempty"`
	// Target is the target URI, as given, of a command run elsewhere (README "Targets"); paths in the
	// result are the target's.
	Target string `json:"target,omitempty"`
	// Sandbox is what confined the command (reference §13), on every sandboxed result.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// Screen is what the terminal of a command run with one (--tty) shows (reference §14): at the end of a
	// run, or now for a running task's output, input and wait.
	Screen *screen.Screen `json:"screen,omitempty"`
}

// Sandbox is details.sandbox (reference §13): the mode and network the command ran under, the mechanisms that
// enforced them (landlock-fs, landlock-scope, userns, mountns, netns, seccomp, proxy), the hosts the proxy
// refused, and a hint naming the writable set when a write outside it failed.
type Sandbox struct {
	Mode     string          `json:"mode"`
	Network  string          `json:"network"`
	Enforced []string        `json:"enforced"`
	Denied   []SandboxDenied `json:"denied,omitempty"`
	Hint     string          `json:"hint,omitempty"`
}

// SandboxDenied is one host the sandbox's proxy refused, with how many times (pkg/proxy's own record).
type SandboxDenied = proxy.Denial

// ProducerStatus is the raw status of the command when agentbash closed its pipe early to honour a head
// limit (reference §3.2): the run then counts as exited with code 0, as `cmd | head` would.
type ProducerStatus struct {
	ExitCode *int   `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
}

// Meta carries the truncation metadata.
type Meta struct {
	Truncation Truncation `json:"truncation"`
}

// Truncation says what was cut and where the whole output is (reference §3.10).
type Truncation struct {
	Direction   string `json:"direction"`
	TruncatedBy string `json:"truncatedBy"`
	// Complete: the stream was read to its end, so the totals are exact. False when agentbash stopped
	// reading first (it closed the pipe after a head limit, or a leftover process still held it after
	// the drain): the totals are then lower bounds and the artifact holds what was read (reference §3.2).
	Complete       bool   `json:"complete"`
	TotalLines     int64  `json:"totalLines"`
	TotalBytes     int64  `json:"totalBytes"`
	OutputLines    int64  `json:"outputLines"`
	OutputBytes    int64  `json:"outputBytes"`
	ShownRange     Range  `json:"shownRange"`
	ArtifactID     string `json:"artifactId,omitempty"`
	ArtifactCapped bool   `json:"artifactCapped,omitempty"`
	MaxBytes       int    `json:"maxBytes"`
	// Head and Tail are set when both line limits were in effect: the head applied first, then the tail
	// to what it kept, as the notice says (in JSON, details.head and details.tail carry them).
	Head, Tail *int `json:"-"`
}

// Range is a 1-based inclusive line range; {0,0} when nothing is shown.
type Range struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// Blocked is the interceptor's verdict, structured (reference §3.3).
type Blocked struct {
	Tool    string `json:"tool"`
	Message string `json:"message"`
	Pattern string `json:"pattern"`
}

// Input is everything the stages produced for one run. Exactly one of Blocked, Err or Outcome decides
// the kind of result.
type Input struct {
	Command           string // as given, outer whitespace trimmed
	NormalizedCommand string // what ran, when it differs from Command
	Cwd               string // absolute
	Shell             string
	TimeoutSeconds    float64
	TimeoutRequested  *float64 // set when the request was clamped
	Head, Tail        int      // effective line limits, -1 when none
	MaxBytes          int      // the sink's window, bytes
	NonZeroExit       string   // NonZeroError or NonZeroReport
	Blocked           *intercept.Block
	Err               error // could not run
	Outcome           *run.Outcome
	Summary           *sink.Summary
	CancelSignal      syscall.Signal // the signal that cancelled agentbash, 0 when unknown
	Duration          time.Duration
	Warnings          []string
	ArtifactPath      string // the absolute path of Summary.ArtifactID's file
	// Killed, for a task ended by `kill` or tasks.maxLifetime (a cancel or timeout outcome), is the first
	// line of the text instead of the cancel's or timeout's; the status is killed, and KillSignal (the
	// signal that ended it) is the Result's (reference §8).
	Killed     string
	KillSignal syscall.Signal
	// Sandbox is what confined the command (details.sandbox), nil when it was not sandboxed.
	Sandbox *Sandbox
}

// Build shapes in into a Result: the text of reference §3.9 (first line for a timeout or cancel, the output or
// "(no output)", the status line, the truncation notice), isError and details (§3.10).
func Build(in Input) Result {
	d := Details{
		Command:          in.Command,
		Cwd:              in.Cwd,
		Shell:            in.Shell,
		TimeoutSeconds:   in.TimeoutSeconds,
		TimeoutRequested: in.TimeoutRequested,
		DurationMs:       in.Duration.Milliseconds(),
		Warnings:         append([]string(nil), in.Warnings...),
		Sandbox:          in.Sandbox,
	}
	if in.NormalizedCommand != "" && in.NormalizedCommand != in.Command {
		d.NormalizedCommand = in.NormalizedCommand
	}
	if in.Head >= 0 {
		d.Head = new(in.Head)
	}
	if in.Tail >= 0 {
		d.Tail = new(in.Tail)
	}
	r := Result{}
	switch {
	case in.Blocked != nil:
		d.Status = StatusBlocked
		d.Blocked = &Blocked{Tool: in.Blocked.Tool, Message: in.Blocked.Message, Pattern: in.Blocked.Pattern}
		r.Output = fmt.Sprintf(texts.Blocked, in.Blocked.Message, in.Command)
		r.IsError = true
	case in.Err != nil || in.Outcome == nil:
		d.Status = StatusError
		msg := "agentbash: nothing was run"
		if in.Err != nil {
			msg = in.Err.Error()
		}
		r.Output = msg
		r.IsError = true
	default:
		r = fromOutcome(in, &d)
	}
	r.Details = d
	if in.Outcome != nil && in.Err == nil {
		r.addDenied(in.Outcome.ProxyDenied)
		r.AddScreen(in.Outcome.Screen, in.MaxBytes)
	}
	r.Content = []Content{{Type: "text", Text: r.Text()}}
	return r
}

// addDenied puts what the sandbox's proxy refused into details.sandbox.denied (a copy: in.Sandbox may be a
// task record's) and a line for each host into the text (reference §13), so a model that reads only the
// text learns why a connection failed.
func (r *Result) addDenied(denied []proxy.Denial) {
	if len(denied) == 0 || r.Details.Sandbox == nil {
		return
	}
	sb := *r.Details.Sandbox
	sb.Denied = denied
	r.Details.Sandbox = &sb
	r.Footer = append(r.Footer, strings.Join(DeniedLines(denied), "\n"))
}

// DeniedLines is the text's lines for what the sandbox's proxy refused (reference §13): `[Sandbox:
// blocked network access to HOST:PORT]` for the first hosts, one line for how many more, and one for what
// would let a host through; nil when nothing was refused.
func DeniedLines(denied []SandboxDenied) []string {
	var lines []string
	shown, more, others := 0, 0, 0
	for _, d := range denied {
		switch {
		case d.Host == proxy.OtherHosts:
			others = d.Count
		case shown < texts.SandboxBlockedShown:
			lines = append(lines, fmt.Sprintf(texts.SandboxBlocked, proxy.JoinHostPort(d.Host, d.Port)))
			shown++
		default:
			more++
		}
	}
	switch {
	case others > 0:
		lines = append(lines, fmt.Sprintf(texts.SandboxBlockedOthers, more, others))
	case more > 0:
		lines = append(lines, fmt.Sprintf(texts.SandboxBlockedMore, more))
	}
	if len(lines) > 0 {
		lines = append(lines, texts.SandboxBlockedHow)
	}
	return lines
}

// AddScreen puts a terminal's screen into r (details.screen) and, when it shows a full-screen program or a
// prompt left without a newline (screen.Screen.Showing), also into the text, after the output under a
// "--- screen ---" line (reference §14): its last maxBytes bytes at most (0: no bound), from a line start,
// as the output's window would show them. A nil s changes nothing.
func (r *Result) AddScreen(s *screen.Screen, maxBytes int) {
	if s == nil {
		return
	}
	r.Details.Screen = s
	if s.Showing() && strings.TrimSpace(s.Text) != "" {
		text := s.Text
		if maxBytes > 0 && len(text) > maxBytes {
			cut := len(text) - maxBytes
			for cut < len(text) && !utf8.RuneStart(text[cut]) {
				cut++
			}
			if nl := strings.IndexByte(text[cut:], '\n'); nl >= 0 && nl < len(text)-cut-1 {
				cut += nl + 1
			}
			text = fmt.Sprintf(texts.ScreenCut, strings.Count(text[:cut], "\n")) + "\n" + text[cut:]
		}
		r.Output = strings.TrimSuffix(r.Output, "\n") + "\n" + texts.ScreenHeader + "\n" + text
	}
	r.Retext()
}

// fromOutcome maps a run that started: status, text, notice.
func fromOutcome(in Input, d *Details) Result {
	o, s := in.Outcome, in.Summary
	if s == nil {
		s = &sink.Summary{}
	}
	r := Result{}
	d.TimedOut, d.Cancelled = o.TimedOut, o.Cancelled
	d.Signal = o.Signal
	d.LeftoverPids = o.LeftoverPids
	d.Warnings = append(d.Warnings, o.Warnings...)
	d.Warnings = append(d.Warnings, s.Warnings...)
	d.ArtifactID = s.ArtifactID
	if s.ArtifactID != "" {
		d.ArtifactPath = in.ArtifactPath
	}
	if o.ExitCode >= 0 {
		d.ExitCode = new(o.ExitCode)
	}

	var first string
	switch {
	case in.Killed != "" && (o.TimedOut || o.Cancelled):
		d.Status = StatusKilled
		first = in.Killed
		r.IsError, r.KillSignal = true, in.KillSignal
	case o.TimedOut:
		d.Status = StatusTimedOut
		first = fmt.Sprintf(texts.TimedOut, FormatSeconds(in.TimeoutSeconds))
		r.IsError = true
	case o.Cancelled:
		d.Status = StatusCancelled
		first = texts.Cancelled
		r.IsError, r.CancelSignal = true, in.CancelSignal
	case o.OutputClosed && s.HeadLimitReached:
		// Closed early for a head limit: counts as `cmd | head` would (reference §3.2).
		d.Status = StatusExited
		d.ProducerStatus = &ProducerStatus{ExitCode: d.ExitCode, Signal: o.Signal}
		d.ExitCode, d.Signal = new(0), ""
	case o.SignalNumber > 0:
		d.Status = StatusSignaled
		r.Footer = append(r.Footer, fmt.Sprintf(texts.Killed, o.Signal))
		r.IsError = true
	case o.ExitCode < 0:
		d.Status = StatusExited
		r.Footer = append(r.Footer, texts.MissingStatus)
		r.IsError = true
	default:
		d.Status = StatusExited
		if o.ExitCode != 0 {
			r.Footer = append(r.Footer, fmt.Sprintf(texts.Exited, o.ExitCode))
			r.IsError = in.NonZeroExit != NonZeroReport
		}
	}

	complete := !o.OutputIncomplete && !s.Stopped // read to its end: the totals are exact (reference §3.2)
	body := strings.TrimSuffix(s.Text, "\n")
	if s.Binary && !complete {
		body = sink.BinaryText(s.TotalBytes, false)
	}
	if body == "" {
		body = texts.NoOutput
	}
	if first != "" {
		body = first + "\n" + body
	}
	r.Output = body
	if s.Binary && s.ArtifactID != "" && !s.Truncated {
		r.Footer = append(r.Footer, "[Raw bytes: artifact://"+s.ArtifactID+"]")
	}
	if s.Truncated {
		t := Truncation{
			Direction: "tail", TruncatedBy: s.TruncatedBy, Complete: complete,
			TotalLines: s.TotalLines, TotalBytes: s.TotalBytes,
			OutputLines: s.OutputLines, OutputBytes: s.OutputBytes,
			ShownRange: Range{Start: s.ShownStart, End: s.ShownEnd},
			ArtifactID: s.ArtifactID, ArtifactCapped: s.ArtifactCapped, MaxBytes: in.MaxBytes,
		}
		if in.Head >= 0 && in.Tail < 0 {
			t.Direction = "head" // the sink's head window: the start is shown
		}
		if in.Head >= 0 && in.Tail >= 0 {
			t.Head, t.Tail = new(in.Head), new(in.Tail)
		}
		d.Meta = &Meta{Truncation: t}
		var line LineCut
		if s.PartialLine {
			line = LineCut{Bytes: s.LineBytes, Open: s.LineOpen}
		}
		r.Footer = append(r.Footer, Notice(t, s.ArtifactOmitted, line))
	}
	return r
}

// LineCut describes a view that is part of one line (the byte budget cut inside it, reference §3.9), for the
// in-line notice; the zero value: the view is whole lines.
type LineCut struct {
	Bytes int64 // the line's size in bytes, its newline included
	Open  bool  // the line had not ended where reading stopped: if the stream is incomplete, Bytes is a lower bound
}

// Notice is the truncation notice of reference §3.9, brackets included, e.g.
// `[Showing lines 91467-100000 of 100000 (50.0KB limit). Full: artifact://3]`. When the stream is not
// complete the totals are lower bounds and the artifact holds what was read:
// `[Showing lines 1-5 of at least 4194309. Partial: artifact://3]`. When the view is part of one line
// (line.Bytes > 0) it says which part of which line:
// `[Showing the last 50.0KB of line 1 (195.3KB). Full: artifact://3]` (`first` for a head window), with
// ` of T lines` after the size when the stream has more lines than that one, or is incomplete. When both
// line limits applied (t.Head and t.Tail), a part says how: `[Showing lines 2-3 of 10. Head then tail: the
// first 3 lines, then the last 2 of those. Full: artifact://3]`.
// omitted is the number of bytes left out of a capped artifact.
func Notice(t Truncation, omitted int64, line LineCut) string {
	total := strconv.FormatInt(t.TotalLines, 10)
	if !t.Complete {
		total = "at least " + total
	}
	var shown string
	switch {
	case line.Bytes > 0:
		part := "last"
		if t.Direction == "head" {
			part = "first"
		}
		size := sink.FormatSize(line.Bytes)
		if line.Open && !t.Complete {
			size = "at least " + size
		}
		shown = fmt.Sprintf("Showing the %s %s of line %d (%s)", part, sink.FormatSize(t.OutputBytes), t.ShownRange.Start, size)
		if t.TotalLines > 1 || !t.Complete {
			shown += " of " + total + " line"
			if t.TotalLines != 1 {
				shown += "s"
			}
		}
	case t.ShownRange.End < t.ShownRange.Start || t.ShownRange.End == 0:
		shown = fmt.Sprintf("Showing %d of %s lines", t.OutputLines, total)
	default:
		shown = fmt.Sprintf("Showing lines %d-%d of %s", t.ShownRange.Start, t.ShownRange.End, total)
		if t.TruncatedBy == "bytes" {
			shown += " (" + sink.FormatSize(int64(t.MaxBytes)) + " limit)"
		}
	}
	parts := []string{shown}
	if t.Head != nil && t.Tail != nil {
		parts = append(parts, fmt.Sprintf("Head then tail: the first %d %s, then the last %d of those", *t.Head, plural(*t.Head, "line"), *t.Tail))
	}
	if t.ArtifactCapped {
		parts = append(parts, fmt.Sprintf("Artifact capped, %s left out of it", sink.FormatSize(omitted)))
	}
	if t.ArtifactID != "" {
		if t.Complete && !t.ArtifactCapped {
			parts = append(parts, "Full: artifact://"+t.ArtifactID)
		} else {
			parts = append(parts, "Partial: artifact://"+t.ArtifactID)
		}
	}
	return "[" + strings.Join(parts, ". ") + "]"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Text is the model-visible text: the output, then the status and notice lines after blank lines.
func (r Result) Text() string {
	if len(r.Footer) == 0 {
		return r.Output
	}
	return r.Output + "\n\n" + strings.Join(r.Footer, "\n\n")
}

// Retext makes r's content the text of its output and footer again, after either changed.
func (r *Result) Retext() { r.Content = []Content{{Type: "text", Text: r.Text()}} }

// FormatSeconds prints seconds in their shortest form: 1, 1.5, 300 (reference §3.5); values too small or too
// large for a short decimal use an exponent (1e-320).
func FormatSeconds(s float64) string {
	if a := math.Abs(s); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(s, 'g', -1, 64)
	}
	return strconv.FormatFloat(s, 'f', -1, 64)
}

// WriteJSON writes r as one compact JSON object on one line, without HTML escaping (reference §3.10).
func (r Result) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
