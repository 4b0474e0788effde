package target

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// statuses are the details.status values a result may have.
var statuses = []string{result.StatusExited, result.StatusSignaled, result.StatusTimedOut, result.StatusCancelled,
	result.StatusBlocked, result.StatusError, result.StatusRunning, result.StatusKilled}

// decode makes a result of a response's data, as the target shaped it, with details.target set and what
// does not travel made again: the signals the CLI's exit status needs, and the output and footer lines
// the text is made of (result.Text), which a terminal and MCP's structuredContent read. A target is not
// trusted: its text and warnings are sanitized as output is here, an artifact or task id that is not one is
// dropped, and a status or exit code no agentbash gives makes the answer unreadable. The CLI hints in the
// text (the yielded task's `agentbash output N`, a warning's `agentbash kill N`) gain `--target URI`, so
// following them reaches the task.
func (e *Executor) decode(ctx context.Context, data json.RawMessage) (result.Result, error) {
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil || len(r.Content) == 0 {
		return r, fmt.Errorf("target %s answered with a result this agentbash cannot read: %v", e.t.URI, cmp.Or(err, errors.New("no content")))
	}
	d := &r.Details
	if err := check(d); err != nil {
		return r, fmt.Errorf("target %s answered with a result this agentbash cannot read: %v", e.t.URI, err)
	}
	var text strings.Builder
	for _, c := range r.Content {
		text.WriteString(c.Text)
	}
	for i, w := range d.Warnings {
		d.Warnings[i] = e.withTarget(sanitized(w))
	}
	d.Error, d.Signal = sanitized(d.Error), sanitized(d.Signal)
	if d.Blocked != nil {
		d.Blocked.Message = sanitized(d.Blocked.Message)
	}
	r.Output, r.Footer = split(sanitized(text.String()), *d)
	if n := len(r.Footer); n > 0 && d.Status == result.StatusRunning &&
		r.Footer[n-1] == fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID) {
		r.Footer[n-1] = fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID+" --target "+quote(e.t.URI))
	}
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	d.Target = e.t.URI
	switch d.Status {
	case result.StatusKilled:
		r.KillSignal = unix.SignalNum(d.Signal)
	case result.StatusCancelled:
		if sc, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
			r.CancelSignal = sc.Signal
		}
	}
	return r, nil
}

// check refuses the details no agentbash gives (a status it does not know, an exit code out of 0–255 that
// is not -1) and drops the ids that are none (and the artifact's path with its id).
func check(d *result.Details) error {
	if !slices.Contains(statuses, d.Status) {
		return fmt.Errorf("status %q", d.Status)
	}
	for _, c := range []*int{d.ExitCode, producerExit(d)} {
		if c != nil && (*c < -1 || *c > 255) {
			return fmt.Errorf("exit code %d", *c)
		}
	}
	if d.ArtifactID != "" && !artifact.ValidID(d.ArtifactID) {
		d.ArtifactID, d.ArtifactPath = "", ""
	}
	if d.Meta != nil && d.Meta.Truncation.ArtifactID != "" && !artifact.ValidID(d.Meta.Truncation.ArtifactID) {
		d.Meta.Truncation.ArtifactID = ""
	}
	if d.TaskID != "" && !tasks.ValidID(d.TaskID) {
		d.TaskID = ""
	}
	return nil
}

func producerExit(d *result.Details) *int {
	if d.ProducerStatus == nil {
		return nil
	}
	return d.ProducerStatus.ExitCode
}

// withTarget is a warning with its `agentbash kill N` hint naming the target.
func (e *Executor) withTarget(w string) string {
	i := strings.Index(w, "`agentbash kill ")
	if i < 0 {
		return w
	}
	j := strings.IndexByte(w[i+1:], '`')
	if j < 0 || !tasks.ValidID(w[i+len("`agentbash kill "):i+1+j]) {
		return w
	}
	return w[:i+1+j] + " --target " + quote(e.t.URI) + w[i+1+j:]
}

// split is text, made by result.Text of a result with details d, cut into its output and its footer: the
// status line, the raw-bytes or truncation notice, a task's error, the skip notice of a read, the yielded
// task's line. Each is taken off the end when d says it is there, in the reverse of the order they are
// written in, so output that ends with a line like them keeps it.
func split(text string, d result.Details) (string, []string) {
	var footer []string
	take := func(match func(string) bool) {
		i := strings.LastIndex(text, "\n\n")
		if i >= 0 && match(text[i+2:]) {
			footer = append(footer, text[i+2:])
			text = text[:i]
		}
	}
	is := func(want string) func(string) bool { return func(s string) bool { return s == want } }
	notice := func(prefix string) func(string) bool {
		return func(s string) bool {
			return strings.HasPrefix(s, prefix) && strings.HasSuffix(s, "]") && !strings.Contains(s, "\n")
		}
	}
	if d.Status == result.StatusRunning && d.TaskID != "" {
		take(is(fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID)))
	}
	if d.Lossy {
		take(notice("[Skipped "))
	}
	if d.Status == result.StatusError && d.TaskID != "" { // a read of a task that could not run: its reason
		take(is(cmp.Or(d.Error, "the task ended without a result")))
	}
	if d.Meta != nil {
		take(notice("[Showing "))
	}
	if d.ArtifactID != "" {
		take(is("[Raw bytes: artifact://" + d.ArtifactID + "]"))
	}
	switch {
	case d.Status == result.StatusSignaled:
		take(is(fmt.Sprintf(texts.Killed, d.Signal)))
	case d.Status == result.StatusExited && d.ExitCode == nil:
		take(is(texts.MissingStatus))
	case d.Status == result.StatusExited && *d.ExitCode != 0:
		take(is(fmt.Sprintf(texts.Exited, *d.ExitCode)))
	}
	slices.Reverse(footer)
	return text, footer
}
