package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/mcpserver"
	"github.com/agentbash/agentbash/pkg/memlimit"
	"github.com/agentbash/agentbash/pkg/pollable"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/session"
)

// mcpExitGrace is how long `agentbash mcp` waits, once its client went away, for the calls still running
// to end before it exits: their trees get SIGKILL 0.5 s after SIGTERM (reference §11), then the connection's
// session is removed, about 0.6 s in all, with room here for a loaded machine. Past it the supervisors
// finish the kill themselves, and the session is removed all the same (removeSession).
const mcpExitGrace = 1500 * time.Millisecond

// mcpSpares is how many idle supervisors the server keeps ready, so a call pays no exec of agentbash.
const mcpSpares = 2

// mcpMemoryLimit is the soft limit of the server's Go heap (peak RSS ≤ 16 MiB after 1000 calls), a backstop:
// the pacing of pkg/memlimit keeps the heap far below it.
const mcpMemoryLimit = 12 << 20

func newMCPCmd(info BuildInfo, ios IO) *cobra.Command {
	var f runFlags
	var noSession bool
	c := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve the bash tools to an MCP client (Claude Code, Codex, Cursor, …) on stdin and stdout",
		Long: `Run a Model Context Protocol server on stdin and stdout, so an MCP client (Claude Code, Codex, Cursor,
Gemini CLI, the MCP Inspector, an agent built on an MCP SDK) gets agentbash as its bash tool. It offers five
tools: bash runs a command (or starts it in the background), bash_output reads what a background task
printed since the last read, bash_input types into a task started with a terminal or a stdin pipe,
bash_kill stops a task and everything it started, bash_tasks lists the tasks.
Each result is the one agentbash run prints: the text the model reads, the details and that same text (as
output) as structured content, under each tool's declared output schema, and isError when the command
failed, timed out or was blocked.

The flags of run given here are the defaults of every call (--timeout 60, --cwd DIR, --max-bytes N, …);
a call's own arguments win. The output window is mcp.maxBytes (20480 bytes), not maxBytes: the text
travels twice, as content and as structuredContent.output; --max-bytes overrides it. By default each connection has a session of its own: cd and export carry over
between its bash calls, which run one after another, and the session is removed when the client goes away
(or, when the server was killed first, by the next server's start).
--session NAME uses a named session that outlives the server; --no-session runs every call afresh and in
parallel. Background tasks outlive the server.

Nothing but the protocol is written to stdout; warnings and logs go to stderr. When the client closes
stdin, the calls still running are killed with their process trees, tasks keep running, and the server
exits 0.`,
		Example: `  claude mcp add agentbash -- agentbash mcp
  agentbash mcp --timeout 120 --cwd ~/src/app
  agentbash mcp --no-session`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			return runMCP(c, ios, info, f, noSession)
		},
	}
	fs := c.Flags()
	addRequestFlags(fs, &f)
	fs.String("task-dir", "", "task `DIR` for background tasks (default $XDG_STATE_HOME/agentbash/tasks)")
	fs.BoolVar(&noSession, "no-session", false, "no session: every bash call starts afresh, and calls run in parallel")
	return c
}

func runMCP(c *cobra.Command, ios IO, info BuildInfo, f runFlags, noSession bool) error {
	if err := checkEnvFlags(f.env); err != nil {
		return usageError{err: err, cmd: c.CommandPath()}
	}
	if c.Flags().Changed("session") && noSession {
		return usageError{err: errors.New("--session and --no-session do not go together"), cmd: c.CommandPath()}
	}
	cfg, cfgWarnings, err := loadConfigWarn(c) // a bad --session is a usage error there
	if err != nil {
		return err
	}
	name := cfg.Session // --session, AGENTBASH_SESSION or the file
	if noSession {
		name = ""
	}
	_ = result.WriteWarnings(ios.Err, cfgWarnings)
	if !c.Flags().Changed("max-bytes") {
		// The server's own window (README "MCP server"): the text travels twice and clients
		// cut large results, so maxBytes is for the other commands; --max-bytes still wins.
		cfg.MaxBytes = cfg.MCP.MaxBytes
	}

	sv, err := newServer(c, ios, cfg, cfgWarnings, f.env, mcpSpares)
	if err != nil {
		return err
	}
	defer sv.close()
	ctx := sv.ctx
	removeOrphanSessions(config.SessionDir(), ios)

	srv := mcpserver.New(mcpserver.Options{
		Service:    sv.svc,
		For:        sv.places.For,
		Targets:    cfg.Targets.Allowed,
		Defaults:   f.serverDefaults(),
		Session:    name,
		NoSession:  noSession,
		EndSession: func(name string) { removeSessions(sv.places, name, ios) },
		Version:    info.resolved().Version,
		Logger:     slog.New(slog.NewTextHandler(ios.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ExitGrace:  mcpExitGrace,
	})
	// Everything start-up touched is done: from here on the process is lean (pkg/memlimit).
	memlimit.Apply(mcpMemoryLimit)
	in, closeIn := pollable.Stdin(ios.In)
	defer closeIn()
	err = srv.Serve(ctx, mcpserver.Stdio(in, ios.Out))
	if sc, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
		return exitError{code: exitSignal + int(sc.Signal)} // SIGINT, SIGTERM: 128+N, as rpc
	}
	if err != nil {
		return exitError{code: 1, err: fmt.Errorf("mcp: %w", err)}
	}
	return nil
}

// orphanWait is how long the start of `agentbash mcp` waits for a command still holding a session of a
// server that is gone (a call its supervisor is still killing) before it leaves that session.
const orphanWait = 200 * time.Millisecond

// removeOrphanSessions removes the sessions that servers killed before they could remove their own left
// behind (they may hold exported secrets), warning of those it could not remove.
func removeOrphanSessions(dir string, ios IO) {
	if dir == "" {
		return
	}
	if _, err := mcpserver.RemoveOrphanSessions(session.Store{Dir: dir}, orphanWait); err != nil {
		_ = result.WriteWarnings(ios.Err, []string{fmt.Sprintf("remove the sessions of servers gone: %v", err)})
	}
}

// removeSession removes the state of a connection's own session once the connection ended: at once when
// its calls returned, else after waiting up to sessionWait for the calls still ending (they were
// cancelled: none of them keeps a state). A session still held then is removed all the same, lock or not,
// since the server is exiting and the session may hold exported secrets.
func removeSession(svc *service.Service, name string, ios IO) {
	sessions, err := svc.Sessions()
	if err != nil {
		return
	}
	ctx := context.Background()
	err = sessions.Remove(ctx, name, sessionWait)
	if errors.Is(err, session.ErrBusy) {
		err = sessions.Discard(ctx, name)
	}
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		_ = result.WriteWarnings(ios.Err, []string{fmt.Sprintf("remove session %s: %v", name, err)})
	}
}

// removeSessions removes a connection's own session on every place the server's calls used (its own and the
// other targets opened) that holds one of that name: a connection that ran nothing there has none, and a
// target's errors do not say "not found" apart from others.
func removeSessions(places *service.Places, name string, ios IO) {
	for _, svc := range places.Opened() {
		if !hasSession(svc, name) {
			continue
		}
		removeSession(svc, name, ios)
	}
}

// hasSession says whether svc's place holds session name (false when it cannot tell).
func hasSession(svc *service.Service, name string) bool {
	sessions, err := svc.Sessions()
	if err != nil {
		return false
	}
	infos, err := sessions.List(context.Background())
	return err == nil && slices.ContainsFunc(infos, func(i session.Info) bool { return i.Name == name })
}

// sessionWait is how long the end of `agentbash mcp` waits for a call still holding the connection's
// session before it removes the session regardless.
var sessionWait = 2 * time.Second
