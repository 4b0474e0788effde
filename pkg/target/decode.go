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

// decode makes a result of a response, as the target shaped it, with details.target set: its data, the parts
// its text is made of (the output and footer lines result.Text joins, which a terminal and MCP's
// structuredContent read: the far side sends them to a caller that said hello), and the signals the CLI's
// exit status needs, which do not travel. A target is not
// trusted: its text and warnings are sanitized as output is here, an artifact or task id that is not one is
// dropped, and a status or exit code no agentbash gives makes the answer unreadable. The CLI hints in the
// text (the yielded task's `agentbash output N`, a warning's `agentbash kill N`) gain `--target URI`, so
// following them reaches the task.
func (e *Executor) decode(ctx context.Context, resp response) (result.Result, error) {
	var r result.Result
	err := json.Unmarshal(resp.Data, &r)
	if err == nil && resp.Parts == nil {
		err = errors.New("no parts")
	}
	if err != nil || len(r.Content) == 0 {
		return r, fmt.Errorf("target %s answered with a result this agentbash cannot read: %v", e.t.URI, cmp.Or(err, errors.New("no content")))
	}
	d := &r.Details
	if err := check(d); err != nil {
		return r, fmt.Errorf("target %s answered with a result this agentbash cannot read: %v", e.t.URI, err)
	}
	for i, w := range d.Warnings {
		d.Warnings[i] = e.withTarget(sanitized(w))
	}
	d.Error, d.Signal = sanitized(d.Error), sanitized(d.Signal)
	if d.Blocked != nil {
		d.Blocked.Message = sanitized(d.Blocked.Message)
	}
	if sb := d.Sandbox; sb != nil {
		sb.Hint = sanitized(sb.Hint)
		for i := range sb.Denied {
			sb.Denied[i].Host = sanitized(sb.Denied[i].Host)
		}
	}
	r.Output, r.Footer = sanitized(resp.Parts.Output), make([]string, len(resp.Parts.Footer))
	for i, f := range resp.Parts.Footer {
		r.Footer[i] = sanitized(f)
	}
	if n := len(r.Footer); n > 0 && d.Status == result.StatusRunning {
		on := d.TaskID + " --target " + quote(e.t.URI)
		switch r.Footer[n-1] {
		case fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID):
			r.Footer[n-1] = fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, on)
		case fmt.Sprintf(texts.TaskYieldedInput, d.TaskID, d.Pid, d.TaskID, d.TaskID):
			r.Footer[n-1] = fmt.Sprintf(texts.TaskYieldedInput, d.TaskID, d.Pid, on, on)
		}
	}
	if sc := d.Screen; sc != nil {
		// The far side's screen is as untrusted as its output: no escape sequence reaches a terminal here.
		sc.Text = sanitized(sc.Text)
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
