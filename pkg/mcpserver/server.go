// Package mcpserver is agentbash's Model Context Protocol server (reference §9): the tools bash, bash_output,
// bash_input, bash_kill and bash_tasks over an MCP transport (stdio for `agentbash mcp`), built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). Each call runs through the same pipeline and task store as the
// command line, so a result is the one `agentbash run` prints: content the model-visible text,
// structuredContent its details with that text as output (and the truncation notice), under each tool's
// declared output schema, isError as the result says. The server checks the arguments itself, so a broken
// one gets a sentence naming it (args.go).
//
// Every call is supervised on its own (reference §11) and handled concurrently with the others: a running bash
// never holds up bash_output, bash_kill, bash_tasks or a background start. A call the client cancels
// (notifications/cancelled) or whose connection ends has its process tree killed, and gets no response.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/session"
)

// Options configures a [Server].
type Options struct {
	// Service runs every call (its executor is the place); its window (MaxBytes) is also a bash_output read's,
	// its default timeout the one the descriptions tell.
	Service *service.Service
	// For, when set, is the service of a call's target argument (README "Targets"): another target's when
	// the server allows it (service.Places.For), else an error naming the target, which is the call's error
	// result. Unset, a call naming a target is refused. Targets are the config's targets.allowed, which the
	// target argument's description lists.
	For     func(target string) (*service.Service, error)
	Targets []string
	// Defaults are the fields of a bash call that the call leaves out: the run flags the server was started
	// with (cwd, head, tail, noNormalize, env, …). Command, Session, Stdin and the input end (StdinMode, TTY,
	// Cols, Rows) are the call's own.
	Defaults request.Command

	// Session names the session (reference §7.1) every bash call of every connection runs in. When it is ""
	// and NoSession is false, each connection gets a session of its own, with a generated name, that
	// EndSession is given before Serve returns: once the connection ended and its calls returned, or,
	// when ExitGrace passed first, with calls still ending (it must then remove the session all the same:
	// the server exits, and the session may hold exported secrets).
	Session    string
	NoSession  bool
	EndSession func(name string)

	Version string       // the server's version in its initialize answer
	Logger  *slog.Logger // the SDK's log; nil discards it. Never stdout: stdout is the protocol's.
	// ExitGrace bounds how long Serve waits, once the client's input ended (EOF), for the calls still
	// running to return: they are cancelled at once, and a process that exits then leaves their trees to
	// their supervisors, which kill them as their client is gone (reference §11). 0 waits for them all.
	ExitGrace time.Duration
}

// Server is an MCP server with agentbash's tools. It may serve several connections at once ([Server.Serve]
// for each); it is safe for concurrent use.
type Server struct {
	o   Options
	mcp *mcp.Server
}

// New builds the server and registers its tools.
func New(o Options) *Server {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agentbash", Title: "agentbash", Version: o.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       logger,
			// Tools only: no logging capability (the log goes to stderr, not to the client).
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		})
	s.addTools()
	return s
}

// instructions is what the server tells a client about itself at initialize.
const instructions = `agentbash runs shell commands the way a coding agent's bash tool should: bounded output with the full
output saved to a file, a timeout that kills the whole process tree, no prompts or pagers, and background
tasks for servers, watchers and long builds. Use bash to run a command; bash with run_in_background for one
that does not end by itself, then bash_output to read it, bash_kill to stop it, bash_tasks to list tasks.
For a REPL or a prompt, bash with tty and yield_seconds, then bash_input to type into it.`

// conn is one connection as its calls see it: the context Serve was given (its cancel reaches every
// running call) and the session its bash calls run in.
type conn struct {
	ctx     context.Context
	session string
	used    atomic.Bool // a bash call named the session: only then can it exist anywhere
}

type connKey struct{}

// connOf is the connection a handler's context belongs to (the SDK derives request contexts from the one
// given to Connect, keeping its values), nil outside Serve.
func connOf(ctx context.Context) *conn {
	c, _ := ctx.Value(connKey{}).(*conn)
	return c
}

// Serve serves one connection over t until the client goes away or ctx is cancelled; cancelling ctx
// cancels the running calls with its cause (their trees are killed) and ends the connection. The
// connection's generated session, if any and a bash call ran in it, is handed to EndSession at the end. It returns nil when the
// client ended the connection (EOF).
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	c := &conn{ctx: ctx, session: s.o.Session}
	generated := false
	if c.session == "" && !s.o.NoSession {
		c.session, generated = SessionName(), true
	}
	tr := &transport{inner: t, inputDone: make(chan struct{}), stop: ctx.Done()}
	ss, err := s.mcp.Connect(context.WithValue(ctx, connKey{}, c), tr, nil)
	if err != nil {
		return fmt.Errorf("mcp: connect: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	var endOnce sync.Once
	endSession := func() {
		if generated && s.o.EndSession != nil && c.used.Load() {
			endOnce.Do(func() { s.o.EndSession(c.session) })
		}
	}
	defer endSession() // whatever state the calls are in (README "MCP server")
	done := make(chan error, 1)
	go func() {
		err := ss.Wait()
		endSession() // every call of the connection has returned
		done <- err
	}()
	select {
	case err = <-done:
	case <-tr.inputDone:
		// The client went away: the SDK cancels the running calls. Wait for them, within ExitGrace.
		var timeout <-chan time.Time
		if s.o.ExitGrace > 0 {
			timer := time.NewTimer(s.o.ExitGrace)
			defer timer.Stop()
			timeout = timer.C
		}
		select {
		case err = <-done:
		case <-timeout:
			s.o.logf("calls still ending %s after the client went away; leaving them to their supervisors", s.o.ExitGrace)
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		err = nil
	}
	return err
}

func (o Options) logf(format string, args ...any) {
	if o.Logger != nil {
		o.Logger.Warn(fmt.Sprintf(format, args...))
	}
}

// SessionName generates the name of a connection's own session: "mcp-", this process's pid, "-" and 12
// random hex digits, a valid session name (reference §7.1) that no other connection gets. The pid lets a later
// server find the sessions of a server that was killed before it could remove them
// ([RemoveOrphanSessions]).
func SessionName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return fmt.Sprintf("mcp-%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// generatedName matches a name SessionName makes; its group is the server's pid (at most 7 digits: Linux
// pids stay below 2^22, and a longer number would not fit the kernel's pid_t).
var generatedName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcp-([1-9][0-9]{0,6})-[0-9a-f]{12}$`) })

// ServerOf is the pid of the server that generated session name, 0 when name is not one SessionName makes.
func ServerOf(name string) int {
	m := generatedName().FindStringSubmatch(name)
	if m == nil {
		return 0
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return pid
}

// RemoveOrphanSessions removes the sessions of store that a server generated and whose server is gone
// (kill(pid, 0) fails with ESRCH): a server that was SIGKILLed never removed its own, which may hold
// exported secrets. Each removal waits up to wait for a command that still holds the session (then the
// session stays). It returns the names removed; err joins the failures.
func RemoveOrphanSessions(store session.Store, wait time.Duration) (removed []string, err error) {
	entries, err := os.ReadDir(store.Dir) // not List, which skips a session whose state it cannot read
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid := ServerOf(e.Name())
		if !e.IsDir() || pid == 0 || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue // not generated, or its server (or a process with its pid) lives
		}
		switch err := store.Remove(e.Name(), wait); {
		case err == nil:
			removed = append(removed, e.Name())
		case !errors.Is(err, session.ErrNotFound):
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}
