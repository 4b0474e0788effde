package pipeline

import (
	"cmp"

	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
)

// Cancelled is the result of req cancelled before it ran (an rpc request aborted while it waited behind
// its session's running command, SPEC §7.2): status cancelled, the text `[Command cancelled]` and
// `(no output)`, no exit code, and the working directory, shell and timeout it would have run with.
// Nothing is started.
func (r *Runner) Cancelled(req Request) result.Result {
	in := r.notRunInput(req)
	in.Head, in.Tail = limit(req.Head), limit(req.Tail)
	in.Outcome = &run.Outcome{ExitCode: -1, Cancelled: true}
	return withSession(req, result.Build(in))
}

// notRunInput is the result's input for req when it never ran: the command as given, and the working
// directory, shell and timeout it would have run with.
func (r *Runner) notRunInput(req Request) result.Input {
	requested := r.c.Timeout
	if req.Timeout != nil {
		requested = *req.Timeout
	}
	effective, _ := ClampTimeout(requested)
	target, _ := r.exe.Resolve(r.c.Shell, r.notRunCwd(req))
	return result.Input{Command: normalize.Trim(req.Command), Cwd: target.Dir, Shell: target.Shell,
		TimeoutSeconds: effective, Head: -1, Tail: -1, MaxBytes: r.c.MaxBytes, NonZeroExit: r.c.NonZeroExit}
}

// notRunCwd is the working directory a request that never ran would have had: its own, else its
// session's, else where requests start.
func (r *Runner) notRunCwd(req Request) string {
	if req.Cwd == "" && req.Session != "" {
		req.Cwd = r.sessions().Cwd(req.Session)
	}
	return cmp.Or(req.Cwd, req.StartCwd)
}

// MaxBytes is the output window of the Runner's results and reads, bytes (SPEC §3.8).
func (r *Runner) MaxBytes() int { return r.c.MaxBytes }
