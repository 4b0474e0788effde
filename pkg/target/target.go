// Package target is the executor of a command elsewhere (README "Targets", docs/architecture.md "The
// seam"): on a build host over the system OpenSSH client, in a container through docker or podman exec,
// in a pod through kubectl exec, or through any argv (cmd://) whose stdio reaches `agentbash rpc` there.
// The same agentbash runs on the target; this side speaks rpc's JSON lines to it over one connection per
// executor, opened on first use and kept, after a hello handshake that refuses another protocol version.
// Everything about the place — shell, cwd, environment base, rc, sessions, artifacts, tasks — is the
// target's; only the command's resolved half travels.
package target

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/rpc"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// Version is this agentbash's version (cmd sets it): the one a target runs when it has it installed, and
// the one errors name.
var Version = "dev"

// Executor runs commands on one target through its connection.
type Executor struct {
	t Target

	mu   sync.Mutex // held while dialling: one connection at a time
	conn *conn
}

var _ executor.Executor = (*Executor)(nil)

// Open makes the executor of uri (one of [Schemes]); nothing connects until its first use. The error is a
// malformed URI, naming it.
func Open(uri string) (executor.Executor, error) {
	t, err := Parse(uri, Version)
	if err != nil {
		return nil, err
	}
	return &Executor{t: t}, nil
}

// connect returns the open connection, dialling it when there is none or the last one was lost.
func (e *Executor) connect(ctx context.Context) (*conn, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		select {
		case <-e.conn.ended:
		default:
			return e.conn, nil
		}
	}
	c, err := dial(ctx, e.t, Version)
	if err != nil {
		return nil, err
	}
	e.conn = c
	return c, nil
}

// Hello is the target's answer to the handshake: its protocol, version, OS and architecture.
func (e *Executor) Hello(ctx context.Context) (rpc.HelloData, error) {
	c, err := e.connect(ctx)
	if err != nil {
		return rpc.HelloData{}, err
	}
	return c.hello, nil
}

// do makes one request on the connection.
func (e *Executor) do(ctx context.Context, typ string, fields any, onUpdate func(update)) (response, error) {
	c, err := e.connect(ctx)
	if err != nil {
		return response{}, unreachable{err}
	}
	resp, err := c.call(ctx, typ, fields, onUpdate)
	if errors.Is(err, errLost) {
		err = unreachable{err}
	}
	return resp, err
}

// unreachable is an error of a connection that failed or was lost: it is executor.ErrUnreachable too.
type unreachable struct{ error }

func (u unreachable) Unwrap() error        { return u.error }
func (u unreachable) Is(target error) bool { return target == executor.ErrUnreachable }

// Close ends the connection (the target sees EOF: what runs in the foreground there ends; tasks go on).
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conn != nil {
		e.conn.close()
		e.conn = nil
	}
	return nil
}

// NoAnswerMargin is how long past a command's timeout and kill grace a foreground run waits for the target's
// answer before it gives the connection up as lost.
var NoAnswerMargin = 15 * time.Second

// errNoAnswer marks a run whose target did not answer in time.
var errNoAnswer = errors.New("no answer from the target")

// bashRequest is a bash request: the command as it marshals (its caller's fields and its resolved half),
// and how it runs.
type bashRequest struct {
	request.Command
	Background bool    `json:"background,omitempty"`
	Yield      float64 `json:"yield,omitempty"`
	Stream     bool    `json:"stream,omitempty"`
}

// Run runs c on the target and returns its result, with details.target naming it. A connection that
// cannot be made or is lost is an error result naming the target and the engine's message.
func (e *Executor) Run(ctx context.Context, c request.Command, obs executor.Observer) result.Result {
	if ctx.Err() != nil {
		return e.cancelled(ctx, c, "")
	}
	if c.Stdin != nil {
		// Nothing here is sent to the target's command: saying so beats a command that reads nothing.
		return e.failed(c, fmt.Errorf("target %s: --stdin does not reach a command on a target; "+
			"write the input to a file there, or run it locally", e.t.URI))
	}
	if rs := c.Resolved; rs != nil && rs.Timeout > 0 {
		// The target ends the command at its timeout; an answer that never comes past that (a stalled
		// link) ends the call here, as a lost connection.
		limit := run.Seconds(rs.Timeout + rs.KillGrace)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit+NoAnswerMargin,
			fmt.Errorf("target %s: %w within %s of the command's timeout", e.t.URI, errNoAnswer, NoAnswerMargin))
		defer cancel()
	}
	var onUpdate func(update)
	if obs != nil {
		onUpdate = (&live{obs: obs}).update
	}
	r := e.bash(ctx, c, bashRequest{Command: c, Stream: obs != nil}, onUpdate)
	if rs := c.Resolved; obs != nil && rs != nil && rs.Head < 0 && rs.Tail < 0 &&
		r.Details.Status != result.StatusError && r.Details.Status != result.StatusBlocked {
		// It ran there and its output went to obs as it came, as a local run's does (no limit hides any).
		r.Streamed = true
	}
	return r
}

// bash sends a bash request and makes its result.
func (e *Executor) bash(ctx context.Context, c request.Command, req bashRequest, onUpdate func(update)) result.Result {
	start := time.Now()
	resp, err := e.do(ctx, rpc.TypeBash, req, onUpdate)
	var r result.Result
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errNoAnswer):
		e.Close() // the link is not to be trusted: the next call connects again
		r = e.failed(c, context.Cause(ctx))
	case err != nil && ctx.Err() != nil && !errors.Is(err, errLost):
		r = e.cancelled(ctx, c, err.Error())
	case err != nil:
		r = e.failed(c, err)
	case !resp.Success:
		r = e.failed(c, fmt.Errorf("target %s refused the command: %s", e.t.URI, sanitized(resp.Error)))
	default:
		if r, err = e.decode(ctx, resp); err != nil {
			r = e.failed(c, err)
		}
		return r
	}
	// Made here: the time it took is the time spent trying (a connection that failed can take long).
	r.Details.DurationMs = time.Since(start).Milliseconds()
	return r
}

// failed is the error result of a command that could not run on the target.
func (e *Executor) failed(c request.Command, err error) result.Result {
	r := result.Build(e.input(c, err, nil))
	r.Details.Target = e.t.URI
	return r
}

// cancelled is the result of a command cancelled here before the target answered; warning, when set,
// says why there is no answer.
func (e *Executor) cancelled(ctx context.Context, c request.Command, warning string) result.Result {
	in := e.input(c, nil, &run.Outcome{ExitCode: -1, Cancelled: true})
	in.Summary = &sink.Summary{}
	if sc, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
		in.CancelSignal = sc.Signal
	}
	if warning != "" {
		in.Warnings = append(in.Warnings, warning)
	}
	r := result.Build(in)
	r.Details.Target = e.t.URI
	return r
}

// input is what a result made on this side knows of c: its resolved half (the target's cwd and shell
// are unknown here).
func (e *Executor) input(c request.Command, err error, o *run.Outcome) result.Input {
	in := result.Input{Command: strings.TrimSpace(c.Command), Err: err, Outcome: o, Head: -1, Tail: -1}
	if rs := c.Resolved; rs != nil {
		in.Command, in.NormalizedCommand = string(rs.Command), string(rs.NormalizedCommand)
		in.TimeoutSeconds, in.TimeoutRequested = rs.Timeout, rs.TimeoutRequested
		in.Head, in.Tail, in.MaxBytes, in.NonZeroExit = rs.Head, rs.Tail, rs.MaxBytes, rs.NonZeroExit
		in.Warnings = append(in.Warnings, rs.Warnings...)
	}
	return in
}

// Tasks, Sessions and Artifacts are the target's.
func (e *Executor) Tasks() executor.Tasks         { return taskOps{e} }
func (e *Executor) Sessions() executor.Sessions   { return sessionOps{e} }
func (e *Executor) Artifacts() executor.Artifacts { return artifactOps{e} }

type taskOps struct{ e *Executor }

// Start starts c as a task on the target: a bash request with background, or with yield when the task
// runs in the foreground first.
func (o taskOps) Start(ctx context.Context, c request.Command) result.Result {
	if ctx.Err() != nil {
		return o.e.cancelled(ctx, c, "")
	}
	req := bashRequest{Command: c, Background: true}
	if rs := c.Resolved; rs != nil && rs.Task != nil && rs.Task.Yield > 0 {
		req.Background, req.Yield = false, rs.Task.Yield
	}
	return o.e.bash(ctx, c, req, nil)
}

// taskResult makes the result of a task request: the target's, with the error of a failed one (an
// unknown id), or an error result naming the target when the connection failed.
func (e *Executor) taskResult(ctx context.Context, id, typ string, fields any) (result.Result, error) {
	resp, err := e.do(ctx, typ, fields, nil)
	if err != nil {
		r := result.Build(result.Input{Err: err, Head: -1, Tail: -1})
		r.Details.Target, r.Details.TaskID = e.t.URI, id
		return r, err
	}
	var rerr error
	if !resp.Success {
		rerr = errors.New(resp.Error)
	}
	if len(resp.Data) == 0 || string(resp.Data) == "null" {
		r := result.Build(result.Input{Err: cmp.Or(rerr, errors.New("no data")), Head: -1, Tail: -1})
		r.Details.Target, r.Details.TaskID = e.t.URI, id
		return r, cmp.Or(rerr, fmt.Errorf("target %s answered %s without data", e.t.URI, typ))
	}
	r, err := e.decode(ctx, resp)
	if err != nil {
		return r, err
	}
	return r, rerr
}

// Output reads on the target; deliver, when set, gets the result once the far side's reader moved (a
// print that fails then loses that text: the read and its delivery are on two machines).
func (o taskOps) Output(ctx context.Context, id, reader string, wait time.Duration, _ int,
	deliver func(result.Result) error) (result.Result, error) {
	r, err := o.e.taskResult(ctx, id, rpc.TypeOutput, struct {
		TaskID string  `json:"taskId"`
		Wait   float64 `json:"wait"`
		Reader string  `json:"reader,omitempty"`
	}{id, wait.Seconds(), reader})
	if err == nil && deliver != nil {
		err = deliver(r)
	}
	return r, err
}

// Input sends in as an rpc input request: text crosses as a JSON string, so bytes that are not UTF-8 reach
// the far side as U+FFFD (docs/reference.md §14: JSON text is UTF-8).
func (o taskOps) Input(ctx context.Context, id string, in console.Request, wait time.Duration, _ int) (result.Result, error) {
	return o.e.taskResult(ctx, id, rpc.TypeInput, struct {
		TaskID string   `json:"taskId"`
		Text   string   `json:"text,omitempty"`
		Keys   []string `json:"keys,omitempty"`
		EOF    bool     `json:"eof,omitempty"`
		Cols   int      `json:"cols,omitempty"`
		Rows   int      `json:"rows,omitempty"`
		Wait   float64  `json:"wait"`
	}{id, string(in.Text), in.Keys, in.EOF, in.Cols, in.Rows, wait.Seconds()})
}

func (o taskOps) Kill(ctx context.Context, id string, sig syscall.Signal) (result.Result, error) {
	name := unix.SignalName(sig)
	if name == "" {
		name = fmt.Sprint(int(sig))
	}
	return o.e.taskResult(ctx, id, rpc.TypeKill, struct {
		TaskID string `json:"taskId"`
		Signal string `json:"signal"`
	}{id, name})
}

func (o taskOps) Wait(ctx context.Context, id string, timeout time.Duration) (result.Result, error) {
	return o.e.taskResult(ctx, id, rpc.TypeWait, struct {
		TaskID  string  `json:"taskId"`
		Timeout float64 `json:"timeout"`
	}{id, timeout.Seconds()})
}

// List is the target's task rows, their text columns sanitized (a target is not trusted to send clean
// text to a terminal).
func (o taskOps) List(ctx context.Context, all bool) ([]tasks.Row, error) {
	var rows []tasks.Row
	err := o.e.data(ctx, rpc.TypeTasks, map[string]bool{"all": all}, &rows)
	for i := range rows {
		r := &rows[i]
		for _, s := range []*string{&r.TaskID, &r.Status, &r.Command, &r.Cwd, &r.StartedAt, &r.EndedAt} {
			*s = oneLine(*s)
		}
	}
	return rows, err
}

// Prune is a tasks_prune request: its data is the ids removed.
func (o taskOps) Prune(ctx context.Context, age time.Duration) ([]string, error) {
	var r rpc.Removed
	return r.Removed, o.e.data(ctx, rpc.TypeTasksPrune, map[string]float64{"olderThan": age.Seconds()}, &r)
}

// data makes a request and decodes its data into v; a failed request is its error.
func (e *Executor) data(ctx context.Context, typ string, fields, v any) error {
	resp, err := e.do(ctx, typ, fields, nil)
	if err != nil {
		return err
	}
	if !resp.Success {
		return fmt.Errorf("target %s: %s", e.t.URI, resp.Error)
	}
	if v == nil || len(resp.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(resp.Data, v); err != nil {
		return fmt.Errorf("target %s: a %s answer this agentbash cannot read: %v", e.t.URI, typ, err)
	}
	return nil
}

type sessionOps struct{ e *Executor }

func (o sessionOps) List(ctx context.Context) ([]session.Info, error) {
	var infos []session.Info
	return infos, o.e.data(ctx, rpc.TypeSessionList, struct{}{}, &infos)
}

func (o sessionOps) Show(ctx context.Context, name string, values bool) (session.Info, error) {
	var info session.Info
	return info, o.e.data(ctx, rpc.TypeSessionShow, struct {
		Name   string `json:"name"`
		Values bool   `json:"values,omitempty"`
	}{name, values}, &info)
}

// Remove removes the session on the target, which waits for its running command as `session rm` does
// (session.RemoveWait, not wait).
func (o sessionOps) Remove(ctx context.Context, name string, _ time.Duration) error {
	return o.e.data(ctx, rpc.TypeSessionRemove, map[string]string{"name": name}, nil)
}

// Discard removes the session as Remove does: the target's store is reached only by a request.
func (o sessionOps) Discard(ctx context.Context, name string) error { return o.Remove(ctx, name, 0) }

type artifactOps struct{ e *Executor }

// artifactChunk is how many bytes one artifact request reads.
const artifactChunk = 1 << 20

// Print copies artifact id from the target to w, a window per request: its text sanitized, here too (the
// target sanitizes it, but is not trusted to), or its bytes as they are with raw. An answer that is not
// the window asked for (another offset, nothing before the end) is an error, not a loop.
func (o artifactOps) Print(ctx context.Context, w io.Writer, id string, raw bool) error {
	out := io.WriteCloser(nopCloser{w})
	if !raw {
		out = sanitize.NewWriter(w)
	}
	for off := int64(0); ; {
		var ch rpc.ArtifactChunk
		err := o.e.data(ctx, rpc.TypeArtifact, struct {
			ID     string `json:"artifactId"`
			Raw    bool   `json:"raw,omitempty"`
			Offset int64  `json:"offset"`
			Limit  int64  `json:"limit"`
		}{id, raw, off, artifactChunk}, &ch)
		switch {
		case err != nil:
			return err
		case ch.Offset != off:
			return fmt.Errorf("target %s answered artifact %s at offset %d for offset %d", o.e.t.URI, id, ch.Offset, off)
		case len(ch.Data) == 0 && !ch.EOF:
			return fmt.Errorf("target %s answered artifact %s with nothing at offset %d, before its end", o.e.t.URI, id, off)
		}
		if _, err := io.WriteString(out, string(ch.Data)); err != nil {
			return err
		}
		off += int64(len(ch.Data))
		if ch.EOF {
			return out.Close()
		}
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Path is the artifact's path on the target.
func (o artifactOps) Path(ctx context.Context, id string) (string, error) {
	var p struct {
		Path string `json:"path"`
	}
	return p.Path, o.e.data(ctx, rpc.TypeArtifactPath, map[string]string{"artifactId": id}, &p)
}

// List is the target's artifacts, their text columns sanitized.
func (o artifactOps) List(ctx context.Context) ([]artifact.Info, error) {
	var infos []artifact.Info
	err := o.e.data(ctx, rpc.TypeArtifactList, struct{}{}, &infos)
	for i := range infos {
		infos[i].ID, infos[i].Command = oneLine(infos[i].ID), oneLine(infos[i].Command)
	}
	return infos, err
}

func (o artifactOps) Prune(ctx context.Context, age time.Duration) ([]string, error) {
	var r rpc.Removed
	return r.Removed, o.e.data(ctx, rpc.TypeArtifactPrune, map[string]float64{"olderThan": age.Seconds()}, &r)
}
