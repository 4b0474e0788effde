package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Task configures how a request runs as a background task (SPEC §8).
type Task struct {
	Store tasks.Store
	// Timeout is the task's own timeout, seconds (clamped like a run's); nil is none.
	Timeout *float64
	// MaxLifetime is tasks.maxLifetime, seconds; 0 is no limit.
	MaxLifetime float64
}

// noLimit stands for "no timer" where the backend needs a positive timeout: about a century.
const noLimit = 100 * 365 * 24 * time.Hour

// Start runs req as a background task and returns at once, once the shell runs: a result with status
// running, the task id, the pids and the artifact that receives the output (SPEC §8). The command then
// outlives this process. Problems before the start (blocked, bad cwd, no shell, a task store that cannot
// be written) are the usual results.
func (r *Runner) Start(ctx context.Context, req Request, t Task) result.Result {
	rec, res, _, ok := r.startTask(ctx, req, t, t.Timeout, false)
	if !ok {
		return withSession(req, res)
	}
	if !rec.Running() {
		// It ended already (a quick command): start reports the task as it started; wait and output
		// give the end.
		rec.Status, rec.EndedAt, rec.Outcome, rec.Summary = tasks.StatusRunning, nil, nil, nil
		rec.KillSignal, rec.LifetimeExceeded = 0, false
	}
	return withSession(req, tasks.Result(rec, true))
}

// Yield runs req in the foreground for up to yield; a command still running then goes on as a task and
// the result is what it printed so far (read by the default reader), with status running and the task id.
// A command that ended before is a plain run result (SPEC §8). The run's timeout applies to the task. In
// a session it is a task from the start: it starts from the session's state and does not write it back.
func (r *Runner) Yield(ctx context.Context, req Request, t Task, yield time.Duration) result.Result {
	return withSession(req, r.yield(ctx, req, t, yield))
}

func (r *Runner) yield(ctx context.Context, req Request, t Task, yield time.Duration) result.Result {
	timeout := r.c.Timeout
	if req.Timeout != nil {
		timeout = *req.Timeout
	}
	rec, res, proc, ok := r.startTask(ctx, req, t, &timeout, true)
	if !ok {
		return res
	}
	// Until the yield, the run is in the foreground: a cancel (Ctrl-C) or the end of this process kills its
	// tree as for any run. After it, the task goes on by itself.
	rec, err := t.Store.Wait(rec.TaskID, yield)
	if err == nil && rec.Running() {
		err = proc.Detach()
	} else {
		proc.Release()
	}
	if err != nil {
		return Failed(req.Command, cmp.Or(req.Cwd, req.StartCwd), err)
	}
	if rec.Running() {
		rd, err := t.Store.ReadOutput(rec.TaskID, tasks.DefaultReader, r.c.MaxBytes, 0)
		if err != nil {
			return Failed(req.Command, cmp.Or(req.Cwd, req.StartCwd), err)
		}
		res := tasks.ReadResult(rd)
		// Say that the command goes on, and how to read on.
		res.Footer = append(res.Footer, fmt.Sprintf(texts.TaskYielded, rec.TaskID, rec.Pid, rec.TaskID))
		res.Content = []result.Content{{Type: "text", Text: res.Text()}}
		return res
	}
	// Ended within the yield: a plain run result, and no task left behind. One this process cancelled
	// (Ctrl-C) is recorded as a cancelled run; its exit status is 128 + the signal that cancelled us.
	res = tasks.Result(rec, false)
	if c, ok := errors.AsType[SignalCause](context.Cause(ctx)); ok && rec.Status == tasks.StatusCancelled {
		res.CancelSignal = c.Signal
	}
	if rec.Leftovers > 0 {
		// Its shell ended, but processes it started run on: the task owns them to the end (README
		// "Background tasks"), so it stays, and the result names it (agentbash kill ID ends them).
		res.Content = []result.Content{{Type: "text", Text: res.Text()}}
		return res
	}
	d := &res.Details
	d.TaskID, d.Pid, d.SupervisorPid, d.StartedAt, d.EndedAt = "", 0, 0, "", ""
	if s := rec.Summary; s != nil && !s.Truncated && !s.Binary && s.ArtifactID != "" {
		// A task always keeps its artifact; a run keeps one only when something was cut.
		_ = artifact.Store{Dir: r.c.ArtifactDir}.Remove(s.ArtifactID)
		d.ArtifactID, d.ArtifactPath = "", ""
	}
	_ = t.Store.Remove(rec.TaskID)
	res.Content = []result.Content{{Type: "text", Text: res.Text()}}
	return res
}

// taskProcess is a task's supervisor as the starter holds it.
type taskProcess interface {
	Release()
	Detach() error
}

// startTask prepares req, records the task and starts its supervisor: detached, or (attached) in the
// foreground until the returned process is detached, with ctx's cancel reaching it. A task in a session
// starts from the session's state and holds its lock only until it runs (SPEC §8: it never writes the
// session back, so a task ending days later cannot rewind it).
func (r *Runner) startTask(ctx context.Context, req Request, t Task, timeout *float64, attached bool) (tasks.Record, result.Result, taskProcess, bool) {
	var p prepared
	if req.Session != "" {
		var lease *session.Lease
		if p, lease = r.prepareInSession(ctx, req, timeout, false); lease != nil {
			defer lease.Release()
		}
	} else {
		p = r.prepare(ctx, req, timeout)
	}
	if p.done {
		return tasks.Record{}, p.finish(), nil, false
	}
	in, rr := p.in, p.rr
	own := 0.0
	if timeout != nil {
		own = in.TimeoutSeconds
	} else {
		in.TimeoutSeconds = 0
	}
	rr.Timeout = noLimit
	if limit := minPositive(own, t.MaxLifetime); limit > 0 {
		rr.Timeout = time.Duration(limit * float64(time.Second))
	}
	rr.Output.Keep = true
	rec := tasks.Record{
		Command: in.Command, NormalizedCommand: in.NormalizedCommand, Cwd: in.Cwd, Shell: in.Shell,
		StartedAt: time.Now(), TimeoutSeconds: own, MaxLifetime: t.MaxLifetime,
		Head: in.Head, Tail: in.Tail, MaxBytes: in.MaxBytes, NonZeroExit: in.NonZeroExit, Warnings: in.Warnings,
	}
	id, err := t.Store.Create(rec)
	if err != nil {
		in.Err = fmt.Errorf("task not started: %w", err)
		return tasks.Record{}, p.finish(), nil, false
	}
	rr.Task = &run.Task{Dir: run.Raw(t.Store.Dir), ID: id, Attached: attached}
	startCtx := context.WithoutCancel(ctx)
	if attached {
		startCtx = ctx
	}
	proc, err := r.exe.Start(startCtx, rr)
	if err != nil {
		_ = t.Store.Remove(id)
		in.Err = err
		return tasks.Record{}, p.finish(), nil, false
	}
	tp, ok := proc.(taskProcess)
	if !ok {
		_ = t.Store.Remove(id)
		in.Err = errors.New("this executor cannot run background tasks")
		return tasks.Record{}, p.finish(), nil, false
	}
	if !attached {
		tp.Release()
	}
	rec, err = t.Store.Load(id)
	if err != nil {
		in.Err = err
		return tasks.Record{}, p.finish(), nil, false
	}
	return rec, result.Result{}, tp, true
}

// minPositive is the smaller of the positive values of a and b, 0 when neither is.
func minPositive(a, b float64) float64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return math.Min(a, b)
}
