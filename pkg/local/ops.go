package local

import (
	"context"
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// waitStep is how long one step of a long output or wait blocks before it looks at its context again, so
// a cancelled call (an rpc shutdown, an MCP cancel) stops waiting.
const waitStep = 250 * time.Millisecond

// Output reads what task id printed since reader's previous read, waiting up to wait for something new.
func (t taskOps) Output(ctx context.Context, id, reader string, wait time.Duration, maxBytes int,
	deliver func(result.Result) error) (result.Result, error) {
	store := t.e.taskStore()
	deadline := time.Now().Add(wait)
	for {
		var r result.Result
		var rec tasks.Record
		var derr error
		final := false
		_, err := store.ReadOutputTo(id, reader, maxBytes, min(waitStep, max(0, time.Until(deadline))),
			func(rd tasks.Read) error {
				final = rd.Text != "" || rd.Lossy || !rd.Record.Running() || !time.Now().Before(deadline) ||
					ctx.Err() != nil
				if !final {
					return errNotYet // nothing to give: read again, the reader stays
				}
				r, rec = tasks.ReadResult(rd), rd.Record
				if deliver != nil {
					// The CLI prints before the reader moves: the screen comes now, under the reader's
					// lock. Without a deliver it is asked for after the lock is let go (below), so
					// concurrent reads never wait on one another's socket round trips.
					withScreen(ctx, store, rec, &r)
					derr = deliver(r)
				}
				return derr
			})
		switch {
		case derr != nil:
			return r, derr
		case err != nil && !errors.Is(err, errNotYet):
			return tasks.ErrorResult(id, err), err
		case final:
			if deliver == nil {
				withScreen(ctx, store, rec, &r)
			}
			return r, nil
		}
	}
}

// errNotYet is what Output's delivery says to a read with nothing to give yet: the reader does not move.
var errNotYet = errors.New("nothing new yet")

// Kill ends task id's tree, sig first; it returns once the tree is gone, or after the executor's KillLimit.
func (t taskOps) Kill(_ context.Context, id string, sig syscall.Signal) (result.Result, error) {
	rec, killed, err := t.e.taskStore().Kill(id, sig, t.e.c.KillLimit)
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	return tasks.KillResult(rec, killed), nil
}

// Wait is task id's final result, or its running status after timeout (0: none).
func (t taskOps) Wait(ctx context.Context, id string, timeout time.Duration) (result.Result, error) {
	store := t.e.taskStore()
	deadline := time.Now().Add(timeout)
	for {
		step := waitStep
		if timeout > 0 {
			step = min(step, max(0, time.Until(deadline))) // past the deadline: one look
		}
		rec, err := store.Wait(id, step)
		if err != nil {
			return tasks.ErrorResult(id, err), err
		}
		if !rec.Running() || (timeout > 0 && !time.Now().Before(deadline)) || ctx.Err() != nil {
			r := store.FinalResult(rec)
			if rec.Running() { // wait's own timeout: the screen now (an ended task's result has its last)
				withScreen(ctx, store, rec, &r)
			}
			return r, nil
		}
	}
}

// List is the rows of the recent tasks, or of every kept one.
func (t taskOps) List(_ context.Context, all bool) ([]tasks.Row, error) {
	recs, err := t.e.taskStore().List()
	if err != nil {
		return nil, err
	}
	return tasks.Rows(recs, all, time.Now()), nil
}

// Prune removes the ended tasks older than age.
func (t taskOps) Prune(_ context.Context, age time.Duration) ([]string, error) {
	return t.e.taskStore().Prune(age, time.Now())
}

// sessionOps is this machine's sessions (reference §7.1).
type sessionOps struct{ e *Executor }

var _ executor.Sessions = sessionOps{}

func (s sessionOps) List(context.Context) ([]session.Info, error) { return s.e.sessions().List() }

func (s sessionOps) Show(_ context.Context, name string, values bool) (session.Info, error) {
	return s.e.sessions().Show(name, values)
}

// Remove removes session name once its running command (if any) ended, waiting for it up to wait.
func (s sessionOps) Remove(_ context.Context, name string, wait time.Duration) error {
	return s.e.sessions().Remove(name, wait)
}

func (s sessionOps) Discard(_ context.Context, name string) error {
	return s.e.sessions().Discard(name)
}

// artifactOps is this machine's artifacts (reference §3.6).
type artifactOps struct{ e *Executor }

var _ executor.Artifacts = artifactOps{}

func (a artifactOps) store() artifact.Store { return artifact.Store{Dir: a.e.c.ArtifactDir} }

func (a artifactOps) Print(_ context.Context, w io.Writer, id string, raw bool) error {
	return a.store().Print(w, id, raw)
}

func (a artifactOps) Path(_ context.Context, id string) (string, error) { return a.store().Path(id) }

func (a artifactOps) List(context.Context) ([]artifact.Info, error) { return a.store().List() }

func (a artifactOps) Prune(_ context.Context, age time.Duration) ([]string, error) {
	return a.store().Prune(age, time.Now())
}
