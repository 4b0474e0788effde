package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/raw"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/snapshot"
)

// Sessions (reference §7.1): a request that names a session runs in the state its session's last kept
// command left (see pkg/session), under the session's lock.

func (e *Executor) sessions() session.Store { return session.Store{Dir: e.c.SessionDir} }

// runInSession runs req in its session: the state kept when the command ended by itself (status
// exited), left as it was otherwise.
func (e *Executor) runInSession(ctx context.Context, req request.Command, obs executor.Observer) result.Result {
	p, lease := e.prepareInSession(ctx, req, true)
	if lease == nil {
		return withSession(req, p.finish())
	}
	defer lease.Release()
	res := e.execute(ctx, p, obs)
	cwd, kept, warning, err := lease.Commit(res.Details.Status == result.StatusExited)
	if warning != "" {
		res.Details.Warnings = append(res.Details.Warnings, warning)
	}
	if err != nil {
		res.Details.Warnings = append(res.Details.Warnings, err.Error())
	}
	if kept {
		res.Details.FinalCwd = cwd
	}
	return withSession(req, res)
}

// withSession names req's session in res (details.session, every result of a session's request but one
// whose name is not a session name).
func withSession(req request.Command, res result.Result) result.Result {
	if session.Valid(req.Session) {
		res.Details.Session = req.Session
	}
	return res
}

// prepareInSession takes the lock of req's session (waiting for its running command; a cancel meanwhile
// is a cancelled result, nothing run), starts from the session's cwd unless req names one, prepares req
// and makes its shell source the session's prelude: capture (a foreground run) sets the EXIT trap whose
// dump Commit keeps; a task does not capture. The lease is nil when p is settled already (done); else the
// caller releases it.
func (e *Executor) prepareInSession(ctx context.Context, req request.Command, capture bool) (prepared, *session.Lease) {
	acquire := e.acquire
	if !capture {
		acquire = e.peek // a task: it never writes the state back, so it never waits behind a command
	}
	lease, err := acquire(ctx, req)
	if err != nil {
		return e.notRun(ctx, req, err), nil
	}
	if lease.Cwd != "" {
		// The session's directory is where the command starts: its own cwd is taken from there when relative.
		// A removed directory gives the usual §3.4 error.
		req = req.Clone()
		req.Resolved.StartCwd = run.Raw(lease.Cwd)
	}
	// A sandboxed session writes where its first sandboxed command did, wherever it cd'd since.
	p := e.prepareIn(ctx, req, lease.SandboxWorkspace())
	if p.done {
		lease.Release()
		return p, nil
	}
	workspace := ""
	if p.spec.Sandbox != nil {
		workspace = string(p.spec.Sandbox.Workspace)
	}
	if err := lease.RunsUnder(req.Resolved.Sandbox, req.Resolved.SandboxFloor, workspace); err != nil {
		lease.Release()
		p.in.Err, p.done, p.in.Sandbox = err, true, nil // nothing ran: nothing was confined
		return p, nil
	}
	if base := filepath.Base(p.in.Shell); base != "bash" {
		lease.Release()
		p.in.Err, p.done = fmt.Errorf("session %s: sessions need bash; the shell is %s", req.Session, p.in.Shell), true
		return p, nil
	}
	if posixMode(p.explicit) {
		lease.Release()
		p.in.Err, p.done = fmt.Errorf("session %s: POSIXLY_CORRECT is set, and bash in POSIX mode reads no start-up file, so the session's state cannot be restored; unset it (or set it inside the command) or run without a session", req.Session), true
		return p, nil
	}
	// A command too long for one argument goes through pkg/run's loader, which must run before the
	// session's errexit or xtrace: its `set -o` options go on the command's first line instead.
	long := len(p.spec.Command) > run.MaxArgBytes
	var base session.Base
	baseUnknown := false
	if capture && p.bashEnv != "" && !p.keepBashEnv { // agentbash's snapshot: its definitions come fresh
		if defs, err := snapshot.ReadDefinitions(p.bashEnv); err == nil {
			base = session.Base{Functions: defs.Functions, Aliases: defs.Aliases}
		} else {
			baseUnknown = true
		}
	}
	path, err := lease.Prelude(session.Prelude{Env: p.explicit, BashEnv: p.bashEnv, KeepBashEnv: p.keepBashEnv,
		Capture: capture, Base: base, OptionsInCommand: long,
		Command: string(p.spec.Command), InSessionCwd: req.Resolved.Cwd == "", BaseUnknown: baseUnknown})
	if err != nil {
		lease.Release()
		p.in.Err, p.done = err, true
		return p, nil
	}
	if prefix := lease.OptionsPrefix(); long && prefix != "" {
		p.spec.Command = run.Raw(prefix) + " " + p.spec.Command
	}
	p.spec.Env = append(p.spec.Env, "BASH_ENV="+path) // last: it wins over every layer
	if c := p.spec.Sandbox; c != nil {
		// The state directory is hidden from a sandboxed command: its shell gets the session's own files only.
		read, write := lease.Files(path)
		for _, f := range read {
			c.Keep = append(c.Keep, sandbox.Bind{Path: raw.String(f)})
		}
		for _, f := range write {
			c.Keep = append(c.Keep, sandbox.Bind{Path: raw.String(f), Writable: true})
		}
	}
	return p, lease
}

// peek reads req's session's state without its lock (a task's start).
func (e *Executor) peek(_ context.Context, req request.Command) (*session.Lease, error) {
	if !session.Valid(req.Session) {
		return nil, fmt.Errorf("session %q: %w", req.Session, session.ErrBadName)
	}
	return e.sessions().Peek(req.Session)
}

// acquire takes the lock of req's session, in the order of arrival within this process.
func (e *Executor) acquire(ctx context.Context, req request.Command) (*session.Lease, error) {
	if !session.Valid(req.Session) {
		return nil, fmt.Errorf("session %q: %w", req.Session, session.ErrBadName)
	}
	return e.sessions().Acquire(ctx, req.Session)
}

// notRun is the result of a session request that never ran: cancelled while it waited for the session
// (status cancelled, the cancel's signal kept for the exit status), or an error.
func (e *Executor) notRun(ctx context.Context, req request.Command, err error) prepared {
	in := e.notRunInput(req)
	p := prepared{in: &in, done: true, start: time.Now()}
	if ctx.Err() == nil || errors.Is(err, session.ErrBadName) {
		p.in.Err = err
		return p
	}
	p.in.Outcome, p.in.Summary = &run.Outcome{ExitCode: -1, Cancelled: true}, &sink.Summary{}
	if c, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
		p.in.CancelSignal = c.Signal
	}
	return p
}

// posixMode reports whether the command's shell would start in POSIX mode (POSIXLY_CORRECT in the
// environment it inherits or in its explicit layers), where bash reads no BASH_ENV.
func posixMode(explicit []string) bool {
	_, set := os.LookupEnv("POSIXLY_CORRECT")
	for _, kv := range explicit {
		if k, _, _ := strings.Cut(kv, "="); k == "POSIXLY_CORRECT" {
			set = true
		}
	}
	return set
}
