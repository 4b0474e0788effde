// Package service is the one service under agentbash's three faces (`cmd`, `rpc`, `mcp`): each face only
// translates its wire format into a request.Command and renders the result; validation, defaults and the
// command's own half — the timeout clamp, normalization (docs/reference.md §3.2), interception (§3.3), the
// prefix, wrapper and limits — are settled here, once, and the command goes to the place it runs through an
// executor.Executor (docs/architecture.md, "The seam"). A behaviour fixed here is fixed in all three faces.
package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Config is the command's own settings (docs/reference.md §4), the same for every request of a process: the
// defaults of `run`, `rpc` and `mcp` requests. The place's settings (shell, snapshot, directories) are the
// executor's.
type Config struct {
	Timeout   float64 // default timeout of a request, seconds
	KillGrace float64 // seconds between SIGTERM and SIGKILL (§3.7)

	Prefix  string   // shell.prefix, shell text: the command becomes `<prefix> <command>`
	Wrapper []string // shell.wrapper, an argv before the shell: `nice -n 10 bash -c <command>`
	Env     []string // KEY=VALUE layers of the request (--env), over the place's shell.env

	MaxBytes         int   // in-memory output window, bytes; 0 is the default 51200 (§3.8)
	ArtifactMaxBytes int64 // cap on one artifact, bytes (§3.6); 0 is the place's default

	Intercept    bool             // run the interceptor (§3.3)
	Tools        []string         // the agent's active tools; a rule fires only for one of them
	Rules        []intercept.Rule // custom rules, tried before the built-ins
	DefaultRules bool             // keep the built-in rules

	NonZeroExit string  // result.NonZeroError or result.NonZeroReport (§3.9)
	MaxLifetime float64 // tasks.maxLifetime, seconds; 0 is no limit (§8)
	// Sandbox is the sandbox of every command (§13): the floor a request's own can only tighten.
	Sandbox sandbox.Policy
	// Server says the requests come from a caller of a server (rpc, mcp): a sandboxed request's cwd is then
	// writable in workspace-write only inside where the server starts its requests (request.Resolved.Workspace),
	// so naming a cwd cannot make any directory writable (reference §13). Off, the command's cwd is.
	Server   bool
	Warnings []string
	// Warn, when set, also receives the warnings that go to stderr (a broken rule, §3.3), once per Service.
	Warn func(string)
}

// Service runs requests on one executor with what is fixed per process: the config and the compiled
// interceptor. Its methods are safe for concurrent use.
type Service struct {
	c   Config
	exe executor.Executor
	// compiled is the interceptor rules of c compiled once, on first use, with the broken rules' warnings
	// (for every result); a request's tools select among them (intercept.WithTools), compiling nothing.
	compiled func() (*intercept.Interceptor, []string)
	rules    *intercept.Interceptor // compiled with c.Tools active, when c.Intercept
}

// New prepares a Service over exe: it compiles the interceptor rules once when interception is on (a broken
// rule is a warning, said once through c.Warn).
func New(c Config, exe executor.Executor) *Service {
	s := &Service{c: c, exe: exe}
	if s.c.MaxBytes <= 0 {
		s.c.MaxBytes = sink.DefaultMaxBytes
	}
	s.compiled = sync.OnceValues(s.compile)
	if c.Intercept {
		ic, _ := s.compiled()
		s.rules = ic.WithTools(c.Tools)
	}
	return s
}

// Executor is the place the service runs its commands.
func (s *Service) Executor() executor.Executor { return s.exe }

// MaxBytes is the output window of the service's results and reads, bytes (§3.8).
func (s *Service) MaxBytes() int { return s.c.MaxBytes }

// Timeout is the default timeout of a request, seconds (before the clamp).
func (s *Service) Timeout() float64 { return s.c.Timeout }

// Sandbox is the service's own sandbox policy (§13), the floor of its requests'.
func (s *Service) Sandbox() sandbox.Policy { return s.c.Sandbox }

// compile compiles the interceptor rules, saying broken rules through Warn.
func (s *Service) compile() (*intercept.Interceptor, []string) {
	ic, warnings := intercept.New(s.c.Rules, s.c.DefaultRules, nil)
	for _, w := range warnings {
		if s.c.Warn != nil {
			s.c.Warn(w) // a broken rule is also said on stderr (§3.3)
		}
	}
	return ic, warnings
}

// Run runs c in the foreground and returns its result; it never fails: problems are results. Cancelling ctx
// kills the command's tree as a cancel; a ctx cancelled before it starts is a cancelled result, nothing run.
func (s *Service) Run(ctx context.Context, c request.Command, obs executor.Observer) result.Result {
	return s.exe.Run(ctx, s.resolve(c, nil), obs)
}

// Cancelled is the result of c cancelled before it ran (an rpc request aborted while it waited behind its
// session's running command): status cancelled, nothing started, with what the place would have run it with.
func (s *Service) Cancelled(c request.Command) result.Result {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.exe.Run(ctx, s.resolve(c, nil), nil)
}

// Start runs c as a background task and returns once it runs (§8): its own timeout applies when it names
// one, tasks.maxLifetime always. An executor without tasks gives an error result.
func (s *Service) Start(ctx context.Context, c request.Command) result.Result {
	return s.startTask(ctx, c, &request.TaskOptions{}, c.Timeout != nil)
}

// Yield runs c in the foreground for up to yield seconds; a command still running then goes on as a task
// (§8). The run's timeout (its own or the default) applies to the task.
func (s *Service) Yield(ctx context.Context, c request.Command, yield float64) result.Result {
	return s.startTask(ctx, c, &request.TaskOptions{Yield: yield}, true)
}

// startTask runs c as a task with t; timed says the run's effective timeout is the task's own.
func (s *Service) startTask(ctx context.Context, c request.Command, t *request.TaskOptions, timed bool) result.Result {
	t.MaxLifetime = s.c.MaxLifetime
	fresh := c.Resolved == nil
	c = s.resolve(c, t)
	if fresh && timed {
		c.Resolved.Task.Timeout = c.Resolved.Timeout
	}
	ops := s.exe.Tasks()
	switch {
	case ops == nil:
		return s.Refuse(c, errNoTasks)
	case ctx.Err() != nil:
		return s.exe.Run(ctx, c, nil) // cancelled before it started: nothing runs
	}
	return ops.Start(ctx, c)
}

var errNoTasks = errors.New("this target cannot run background tasks")

// Refuse is the error result of c that will not run because of err (a bad argument, a missing capability):
// status error (the CLI exits 125), nothing run, shaped by the place with the cwd and shell it would have had.
func (s *Service) Refuse(c request.Command, err error) result.Result {
	c = s.resolve(c, nil)
	c.Resolved.Refused = err.Error()
	return s.exe.Run(context.WithoutCancel(context.Background()), c, nil)
}

// Output is what task id printed since reader's previous read, waiting up to wait seconds for something new.
// deliver, when set, is given the result before the reader moves past it (see executor.Tasks).
func (s *Service) Output(ctx context.Context, id, reader string, wait float64, deliver func(result.Result) error) (result.Result, error) {
	ops, err := s.tasks()
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	return ops.Output(ctx, id, reader, run.Seconds(wait), s.c.MaxBytes, deliver)
}

// DefaultInputWait is how long an input waits for the output to settle unless told, seconds (§14): the
// default of `input --wait`, rpc input's wait and MCP bash_input's wait_seconds.
const DefaultInputWait = 0.5

// Input writes in to task id's input and returns what it printed once its output settled, waiting up to
// wait seconds (§14).
func (s *Service) Input(ctx context.Context, id string, in console.Request, wait float64) (result.Result, error) {
	ops, err := s.tasks()
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	return ops.Input(ctx, id, in, run.Seconds(wait), s.c.MaxBytes)
}

// Kill ends task id's tree, sig first (§8).
func (s *Service) Kill(ctx context.Context, id string, sig syscall.Signal) (result.Result, error) {
	ops, err := s.tasks()
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	return ops.Kill(ctx, id, sig)
}

// Wait is task id's final result, or its running status after timeout seconds (0: none).
func (s *Service) Wait(ctx context.Context, id string, timeout float64) (result.Result, error) {
	ops, err := s.tasks()
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	return ops.Wait(ctx, id, run.Seconds(timeout))
}

// Tasks is the rows `agentbash tasks --json` prints.
func (s *Service) Tasks(ctx context.Context, all bool) ([]tasks.Row, error) {
	ops, err := s.tasks()
	if err != nil {
		return nil, err
	}
	return ops.List(ctx, all)
}

// Prune removes the ended tasks older than age seconds and returns their ids.
func (s *Service) PruneTasks(ctx context.Context, age time.Duration) ([]string, error) {
	ops, err := s.tasks()
	if err != nil {
		return nil, err
	}
	return ops.Prune(ctx, age)
}

// Sessions is the place's sessions, or an error saying it has none.
func (s *Service) Sessions() (executor.Sessions, error) {
	if ops := s.exe.Sessions(); ops != nil {
		return ops, nil
	}
	return nil, errors.New("this target keeps no sessions")
}

// Artifacts is the place's artifacts, or an error saying it has none.
func (s *Service) Artifacts() (executor.Artifacts, error) {
	if ops := s.exe.Artifacts(); ops != nil {
		return ops, nil
	}
	return nil, errors.New("this target keeps no artifacts")
}

func (s *Service) tasks() (executor.Tasks, error) {
	if ops := s.exe.Tasks(); ops != nil {
		return ops, nil
	}
	return nil, errNoTasks
}

// resolve settles c's own half (c.Resolved), unless a service before this one did (a command that came from
// another agentbash to run here: it is normalized and intercepted already). t, when set, makes it a task.
func (s *Service) resolve(c request.Command, t *request.TaskOptions) request.Command {
	if c.Resolved != nil {
		c = c.Clone()
		if t != nil && c.Resolved.Task == nil {
			c.Resolved.Task = t
		}
		if c.Resolved.StartCwd == "" {
			// Where requests start is the place's when the sender named none (a target's /dir, its rpc --cwd).
			c.Resolved.StartCwd = run.Raw(c.StartCwd)
		}
		// This service's own rules are a floor a sender cannot lower: a server started with interception
		// intercepts a settled command as it would its own (with the request's tools, else its own).
		if r := c.Resolved; r.Blocked == nil && r.Refused == "" && s.c.Intercept {
			floor := c
			floor.Intercept = nil // a request turns interception on here, never off
			if ic, warnings := s.interceptor(floor); ic != nil {
				r.Warnings = append(r.Warnings, warnings...)
				r.Blocked = ic.Check(string(r.Command))
			}
		}
		// So is its sandbox: the sender's policy (settled under the sender's own floor) must meet this one's.
		s.settledSandbox(c.Resolved)
		if r := c.Resolved; r.Sandbox != nil && r.Workspace != "" {
			// A sender's server workspace is a path of the sender's: here it is where this server starts.
			r.Workspace = cmp.Or(r.StartCwd, ".")
		}
		return c
	}
	command := normalize.Trim(c.Command)
	r := &request.Resolved{
		Protocol: request.Protocol,
		Command:  run.Raw(command),
		Cwd:      run.Raw(c.Cwd), StartCwd: run.Raw(c.StartCwd),
		Head: limit(c.Head), Tail: limit(c.Tail),
		KillGrace: s.c.KillGrace, MaxBytes: s.c.MaxBytes, ArtifactMaxBytes: s.c.ArtifactMaxBytes,
		NonZeroExit: s.c.NonZeroExit, Wrapper: s.c.Wrapper,
		Warnings: slices.Clone(s.c.Warnings),
		Task:     t,
	}
	// §3.5 first, so every result (even an early error) reports the effective timeout.
	requested := s.c.Timeout
	if c.Timeout != nil {
		requested = *c.Timeout
	}
	effective, clamped := request.ClampTimeout(requested)
	r.Timeout = effective
	if clamped {
		r.TimeoutRequested = new(requested)
		r.Warnings = append(r.Warnings, fmt.Sprintf("timeout %s s is out of range [1, 3600]; using %s s",
			result.FormatSeconds(requested), result.FormatSeconds(effective)))
	}
	// §3.2 normalization.
	toRun := command
	if !c.NoNormalize {
		n := normalize.Normalize(command)
		toRun = n.Command
		if c.Session != "" {
			// A session's shell outlives the command: what is left of the pipeline runs in a subshell, as
			// bash runs a pipeline's stages (`cd / | tail -5` leaves the session where it was).
			if toRun = n.Subshell; toRun == "" {
				toRun, n.Head, n.Tail = normalize.Trim(command), -1, -1
			}
		}
		if r.Head < 0 {
			r.Head = n.Head
		}
		if r.Tail < 0 {
			r.Tail = n.Tail
		}
	}
	r.NormalizedCommand = run.Raw(toRun)
	// §3.3 interception, on the command as given.
	if ic, warnings := s.interceptor(c); ic != nil {
		r.Warnings = append(r.Warnings, warnings...)
		r.Blocked = ic.Check(command)
	}
	if s.c.Prefix != "" {
		toRun = s.c.Prefix + " " + toRun
	}
	r.Run = run.Raw(toRun)
	r.Env = slices.Clone(s.c.Env)
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		r.Env = append(r.Env, k+"="+c.Env[k])
	}
	r.Sandbox, r.Refused = s.sandbox(c.Sandbox)
	if c.Sandbox != nil && r.Sandbox != nil && s.c.Sandbox.On() {
		r.SandboxFloor = s.c.Sandbox.Clone()
	}
	if r.Interactive = c.Interactive(); r.Interactive != nil && !r.Interactive.TTY && t == nil && r.Refused == "" {
		r.Refused = texts.StdinPipeNeedsTask
	}
	if r.Sandbox != nil && s.c.Server {
		r.Workspace = cmp.Or(run.Raw(c.StartCwd), ".")
	}
	c.Resolved = r
	return c
}

// sandbox is the policy a request runs under (§13, "a request can only tighten"): the service's own, tightened
// by the request's when it gives one, nil when that confines nothing. A request that would loosen the
// service's policy, or names a mode or network there is none of, is refused: refused says why, naming the field.
func (s *Service) sandbox(req *sandbox.Policy) (policy *sandbox.Policy, refused string) {
	p := s.c.Sandbox
	if req != nil && req.Mode == "" && !p.On() && (req.Network != "" || req.Writable != nil || req.DenyRead != nil ||
		req.CacheDirs != nil || req.AllowHosts != nil) {
		// Silently running unconfined would be the worst answer to a request that asked for a confinement.
		return nil, "sandbox: a network, writable, denyRead, cacheDirs or allowHosts setting confines nothing " +
			"without a mode: give sandbox.mode (workspace-write or read-only)"
	}
	if req != nil {
		// The request's own values first: an unknown mode is that, not a loosening of the server's.
		own := sandbox.Policy{Mode: req.Mode, Network: req.Network}
		if err := own.Check(); err != nil {
			return nil, refusal(err)
		}
		var err error
		if p, err = sandbox.Tighten(p, *req); err != nil {
			return nil, refusal(err)
		}
	}
	return on(p)
}

// settledSandbox makes r's sandbox, settled by another agentbash, meet this service's own (§13): the sent
// policy, complete as it is (a list it leaves out is empty, a network it leaves out is off), tightened by
// nothing looser than this service's policy; a sent policy this one's is stricter than is refused, as a
// request's would be. A service without a sandbox takes the sent policy as it is.
func (s *Service) settledSandbox(r *request.Resolved) {
	floor, sent := s.c.Sandbox, r.Sandbox
	var p sandbox.Policy
	switch {
	case r.Refused != "":
		return // nothing runs
	case sent == nil:
		p = floor
	case !floor.On():
		p = *sent
	default:
		complete := *sent.Clone()
		// The floor's denied paths are added back by Tighten: a policy settled here before keeps one of each.
		complete.DenyRead = slices.DeleteFunc(complete.DenyRead, func(d string) bool { return slices.Contains(floor.DenyRead, d) })
		for _, l := range []*[]string{&complete.Writable, &complete.DenyRead, &complete.CacheDirs, &complete.AllowHosts} {
			if *l == nil {
				*l = []string{}
			}
		}
		if complete.Network == "" {
			complete.Network = sandbox.NetworkOff
		}
		var err error
		if p, err = sandbox.Tighten(floor, complete); err != nil {
			r.Sandbox, r.Refused = nil, refusal(err)
			return
		}
	}
	r.Sandbox, r.Refused = on(p)
}

// on is p when it confines something and passes its check (refused says why not), else nil: a policy that
// is off costs nothing more.
func on(p sandbox.Policy) (*sandbox.Policy, string) {
	if !p.On() {
		return nil, ""
	}
	if err := p.Check(); err != nil {
		return nil, refusal(err)
	}
	return &p, ""
}

// refusal is the text of a sandbox error as a refused command's: its lines (one per field) joined.
func refusal(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// interceptor is the interceptor for c (nil when interception is off), with the warnings of the rules'
// compile: the Service's rules, with the request's tools active when it names them.
func (s *Service) interceptor(c request.Command) (*intercept.Interceptor, []string) {
	on := s.c.Intercept
	if c.Intercept != nil {
		on = *c.Intercept
	}
	if !on {
		return nil, nil
	}
	ic, warnings := s.compiled()
	switch {
	case c.Tools != nil:
		return ic.WithTools(c.Tools), warnings
	case s.rules != nil:
		return s.rules, warnings
	}
	return ic.WithTools(s.c.Tools), warnings
}

// limit is a line limit from a request: -1 when none.
func limit(n *int) int {
	if n == nil {
		return -1
	}
	return *n
}
