package cmd

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/memlimit"
	"github.com/agentbash/agentbash/pkg/pollable"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/rpc"
)

// rpcSpares is how many idle supervisors an rpc process keeps ready, so a request pays no exec of
// agentbash; a burst of concurrent requests beyond it spawns its own.
const rpcSpares = 2

// rpcMemoryLimit is the soft limit of the rpc process's Go heap (reference §12: peak RSS ≤ 16 MiB after 1000
// commands); the collector runs harder near it, it is not a cap. A backstop: the pacing of pkg/memlimit
// keeps the heap far below it.
const rpcMemoryLimit = 12 << 20

func newRPCCmd(info BuildInfo, ios IO) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "rpc [run flags]",
		Short: "Serve bash requests as JSON lines on stdin and stdout, for agents that keep a process open",
		Long: `Serve requests as JSON lines: one request per line on stdin, one response or event per line on stdout,
logs on stderr. Each command is a full supervised run with the result agentbash run prints, and pays no
agentbash start-up. Requests run concurrently, those of one session in the order they came.

Requests (every field but type is optional unless named):
  {"id":1,"type":"bash","command":"make test","cwd":"…","timeout":60,"head":N,"tail":N,"env":{…},
   "session":"…","noNormalize":true,"intercept":true,"tools":[…],"background":true,"yield":5,"stream":true,
   "sandbox":"workspace-write"}                sandbox: a mode or {"mode","network","writable","denyRead",…};
                                                 it can only tighten the server's (--sandbox and the config)
  {"id":2,"type":"abort_bash","target":1}      abort request 1 while it runs (no target: every one; "request" is
                                                 another name of target)
  {"type":"start",…the bash fields}             start a background task
  {"type":"output","taskId":"7","wait":10,"reader":"…"}   what the task printed since the last read
  {"type":"input","taskId":"7","text":"6*7\r","keys":["C-d"],"eof":false,"wait":0.5}   type into a task started
                                                 with "stdin":"pipe" or "tty":true; its answer, as output's
  {"type":"kill","taskId":"7","signal":"TERM"}  {"type":"wait","taskId":"7","timeout":30}
  {"type":"tasks","all":true}
  {"type":"hello","protocol":1}                 the handshake of a target's connection: protocol, version, os, arch
Every request but abort_bash and hello takes "target":"URI", the place it is for: left out, the server's
own (--target); another only when the config file's targets.allowed lists it, never cmd:// (README
"Targets"). Task ids, sessions and artifacts are per target: output, kill and wait name the start's.
Responses: {"id":…,"type":"response","command":"bash","success":true,"data":RESULT}, or
{"id":…,"type":"response","success":false,"error":"…"} for a bad line, an unknown type or a bad field.
With stream, {"id":…,"type":"update","text":TAIL,"totalBytes":N,"totalLines":N} while it runs (at most
10 a second). {"type":"task_done","taskId":"7","data":RESULT} when a task started here ends.

The flags of run given here are the defaults of every request; --cwd is where requests without a session
and new sessions start (a session's cd carries over). A task has no timeout unless its request
gives one. At the end of stdin (the caller gone) the running commands get SIGTERM and, 0.5 s later,
SIGKILL, and are answered; tasks keep running, and rpc exits 0. On SIGINT or SIGTERM the running
commands are cancelled with the kill grace and answered, then rpc exits 128+N.`,
		Example: `  agentbash rpc --timeout 120 --cwd ~/src/app
  { echo '{"id":1,"type":"bash","command":"echo hi"}'; sleep 1; } | agentbash rpc   # EOF would cancel it`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runRPC(c, ios, f, info.resolved().Version)
		},
	}
	addRequestFlags(c.Flags(), &f)
	c.Flags().String("task-dir", "", "task `DIR` for start and background requests (default $XDG_STATE_HOME/agentbash/tasks)")
	return c
}

func runRPC(c *cobra.Command, ios IO, f runFlags, version string) error {
	if err := checkEnvFlags(f.env); err != nil {
		return usageError{err: err, cmd: c.CommandPath()}
	}
	cfg, cfgWarnings, err := loadConfigWarn(c)
	_ = result.WriteWarnings(ios.Err, cfgWarnings) // and in every result
	if err != nil {
		return err
	}
	sv, err := newServer(c, ios, cfg, cfgWarnings, f.env, rpcSpares)
	if err != nil {
		return err
	}
	defer sv.close()
	ctx := sv.ctx

	defaults := f.serverDefaults()
	defaults.Session = cfg.Session // --session, AGENTBASH_SESSION or the file: requests naming none run there
	s := &rpc.Server{
		Service:  sv.svc,
		For:      sv.places.For,
		Defaults: defaults,
		Log:      ios.Err,
		Version:  version,
		Forwards: forwards(cfg),
	}
	// Everything start-up touched is done: from here on the process is lean (pkg/memlimit).
	memlimit.Apply(rpcMemoryLimit)
	in, closeIn := pollable.Stdin(ios.In)
	defer closeIn()
	if err := s.Serve(ctx, in, ios.Out); err != nil {
		return exitError{code: 1, err: err}
	}
	if sc, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
		return exitError{code: exitSignal + int(sc.Signal)} // the responses were written first
	}
	return nil
}

// serverDefaults are the defaults of a server's requests (rpc, mcp): the run flags, with --cwd the
// directory where requests and new sessions start rather than an explicit cwd of every request, so a
// session's cd carries over to its next request (README "Sessions").
func (f runFlags) serverDefaults() request.Command {
	req := f.request("")
	req.StartCwd, req.Cwd = req.Cwd, ""
	return req
}

// forwards is the target a server's commands run on when it is not this machine, "" when it is.
func forwards(cfg config.Config) string {
	if cfg.Target == "" || cfg.Target == "local" {
		return ""
	}
	return cfg.Target
}
