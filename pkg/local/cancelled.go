package local

import (
	"cmp"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
)

// cancelled is the result of c cancelled before it ran (an rpc request aborted while it waited behind its
// session's running command, reference §7.2): status cancelled, the text `[Command cancelled]` and `(no
// output)`, no exit code, and the working directory, shell and timeout it would have run with. Nothing is
// started.
func (e *Executor) cancelled(c request.Command) result.Result {
	in := e.notRunInput(c)
	in.Head, in.Tail = c.Resolved.Head, c.Resolved.Tail
	in.Outcome = &run.Outcome{ExitCode: -1, Cancelled: true}
	return withSession(c, result.Build(in))
}

// notRunInput is the result's input for c when it never ran: the command as given, and the working
// directory, shell and timeout it would have run with.
func (e *Executor) notRunInput(c request.Command) result.Input {
	in := input(c)
	in.Head, in.Tail, in.NormalizedCommand = -1, -1, ""
	target, _ := e.sup.Resolve(e.c.Shell, e.notRunCwd(c))
	in.Cwd, in.Shell = target.Dir, target.Shell
	return in
}

// notRunCwd is the working directory a request that never ran would have had: its own, else its
// session's, else where requests start.
func (e *Executor) notRunCwd(c request.Command) string {
	base := string(c.Resolved.StartCwd)
	if c.Session != "" {
		base = cmp.Or(e.sessions().Cwd(c.Session), base)
	}
	return workDir(string(c.Resolved.Cwd), base)
}
