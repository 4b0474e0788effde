package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// noLimit stands for "no timer" where the backend needs a positive timeout: about a century.
const noLimit = 100 * 365 * 24 * time.Hour

// taskOps is this machine's background tasks (reference §8), recorded in the task store.
type taskOps struct{ e *Executor }

var _ executor.Tasks = taskOps{}

// Start runs c as a background task and returns at once, once the shell runs: a result with status running,
// the task id, the pids and the artifact that receives the output (reference §8). The command then outlives
// this process. With a yield, it runs in the foreground until then (see yield). Problems before the start
// (blocked, bad cwd, no shell, a task store that cannot be written) are the usual results.
func (t taskOps) Start(ctx context.Context, c request.Command) result.Result {
	r := t.e
	if y := c.Resolved.Task.Yield; y > 0 {
		return withSession(c, r.yield(ctx, c, run.Seconds(y)))
	}
	rec, res, _, ok := r.startTask(ctx, c, false)
	if !ok {
		return withSession(c, res)
	}
	if !rec.Running() {
		// It ended already (a quick command): start reports the task as it started; wait and output
		// give the end.
		rec.Status, rec.EndedAt, rec.Outcome, rec.Summary = tasks.StatusRunning, nil, nil, nil
		rec.KillSignal, rec.LifetimeExceeded = 0, false
	}
	return withSession(c, tasks.Result(rec, true))
}

// yield runs c in the foreground for up to yield; a command still running then goes on as a task and the
// result is what it printed so far (read by the default reader), with status running and the task id. A
// command that ended before is a plain run result (reference §8). The run's timeout applies to the task. In
// a session it is a task from the start: it starts from the session's state and does not write it back.
func (r *Executor) yield(ctx context.Context, req request.Command, yield time.Duration) result.Result {
	t := r.taskStore()
	rec, res, proc, ok := r.startTask(ctx, req, true)
	if !ok {
		return res
	}
	// Until the yield, the run is in the foreground: a cancel (Ctrl-C) or the end of this process kills its
	// tree as for any run. After it, the task goes on by itself.
	rec, err := t.Wait(rec.TaskID, yield)
	if err == nil && rec.Running() {
		err = proc.Detach()
	} else {
		proc.Release()
	}
	if err != nil {
		return Failed(req.Command, string(cmp.Or(req.Resolved.Cwd, req.Resolved.StartCwd)), err)
	}
	if rec.Running() {
		rd, err := t.ReadOutput(rec.TaskID, tasks.DefaultReader, req.Resolved.MaxBytes, 0)
		if err != nil {
			return Failed(req.Command, string(cmp.Or(req.Resolved.Cwd, req.Resolved.StartCwd)), err)
		}
		res := tasks.ReadResult(rd)
		// Say that the command goes on, and how to read on (and, when it takes input, to answer it).
		if rec.Interactive != "" {
			res.Footer = append(res.Footer, fmt.Sprintf(texts.TaskYieldedInput, rec.TaskID, rec.Pid, rec.TaskID, rec.TaskID))
		} else {
			res.Footer = append(res.Footer, fmt.Sprintf(texts.TaskYielded, rec.TaskID, rec.Pid, rec.TaskID))
		}
		res.Retext()
		withScreen(ctx, t, rec, &res)
		return res
	}
	// Ended within the yield: a plain run result, and no task left behind. One this process cancelled
	// (Ctrl-C) is recorded as a cancelled run; its exit status is 128 + the signal that cancelled us.
	res = tasks.Result(rec, false)
	if c, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok && rec.Status == tasks.StatusCancelled {
		res.CancelSignal = c.Signal
	}
	if rec.Leftovers > 0 {
		// Its shell ended, but processes it started run on: the task owns them to the end (README
		// "Background tasks"), so it stays, and the result names it (agentbash kill ID ends them).
		res.Retext()
		return res
	}
	d := &res.Details
	d.TaskID, d.Pid, d.SupervisorPid, d.StartedAt, d.EndedAt = "", 0, 0, "", ""
	if s := rec.Summary; s != nil && !s.Truncated && !s.Binary && s.ArtifactID != "" {
		// A task always keeps its artifact; a run keeps one only when something was cut.
		_ = artifact.Store{Dir: r.c.ArtifactDir}.Remove(s.ArtifactID)
		d.ArtifactID, d.ArtifactPath = "", ""
	}
	_ = t.Remove(rec.TaskID)
	res.Retext()
	return res
}

// taskProcess is a task's supervisor as the starter holds it.
type taskProcess interface {
	Release()
	Detach() error
}

// startTask prepares req, records the task and starts its supervisor: detached, or (attached) in the
// foreground until the returned process is detached, with ctx's cancel reaching it. A task in a session
// starts from the session's state and holds its lock only until it runs (reference §8: it never writes the
// session back, so a task ending days later cannot rewind it).
func (r *Executor) startTask(ctx context.Context, req request.Command, attached bool) (tasks.Record, result.Result, taskProcess, bool) {
	var p prepared
	if req.Session != "" {
		var lease *session.Lease
		if p, lease = r.prepareInSession(ctx, req, false); lease != nil {
			defer lease.Release()
		}
	} else {
		p = r.prepare(ctx, req)
	}
	if p.done {
		return tasks.Record{}, p.finish(), nil, false
	}
	in, spec := p.in, p.spec
	t := *req.Resolved.Task
	own := t.Timeout
	in.TimeoutSeconds = own
	spec.Timeout = noLimit
	if limit := minPositive(own, t.MaxLifetime); limit > 0 {
		spec.Timeout = run.Seconds(limit)
	}
	spec.Output.Keep = true
	rec := tasks.Record{
		Command: in.Command, NormalizedCommand: in.NormalizedCommand, Cwd: in.Cwd, Shell: in.Shell,
		StartedAt: time.Now(), TimeoutSeconds: own, MaxLifetime: t.MaxLifetime,
		Head: in.Head, Tail: in.Tail, MaxBytes: in.MaxBytes, NonZeroExit: in.NonZeroExit, Warnings: in.Warnings,
		Sandbox: in.Sandbox,
	}
	if req.Resolved.Interactive != nil {
		rec.Interactive = req.Resolved.Interactive.Mode()
	}
	store := r.taskStore()
	id, err := store.Create(rec)
	if err != nil {
		in.Err = fmt.Errorf("task not started: %w", err)
		return tasks.Record{}, p.finish(), nil, false
	}
	spec.Task = &run.Task{Dir: run.Raw(store.Dir), ID: id, Attached: attached}
	startCtx := context.WithoutCancel(ctx)
	if attached {
		startCtx = ctx
	}
	proc, err := r.sup.Start(startCtx, spec, p.streams)
	if err != nil {
		_ = store.Remove(id)
		in.Err = err
		return tasks.Record{}, p.finish(), nil, false
	}
	tp, ok := proc.(taskProcess)
	if !ok {
		_ = store.Remove(id)
		in.Err = errors.New("this executor cannot run background tasks")
		return tasks.Record{}, p.finish(), nil, false
	}
	if !attached {
		tp.Release()
	}
	rec, err = store.Load(id)
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
