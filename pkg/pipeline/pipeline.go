// Package pipeline runs the stages of `agentbash run` in the order of SPEC §3 — normalize, intercept,
// working directory, timeout, execute into the sink, shape the result — for one command at a time or many
// at once: a [Runner] holds what is fixed per process and runs one [Request] per call.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

// Timeouts (SPEC §3.5), seconds.
const (
	DefaultTimeout = 300.0
	MinTimeout     = 1.0
	MaxTimeout     = 3600.0
)

// ClampTimeout clamps a requested timeout (seconds) to [MinTimeout, MaxTimeout]; zero or negative values
// become MinTimeout (SPEC §3.5). clamped reports whether the value changed.
func ClampTimeout(requested float64) (effective float64, clamped bool) {
	effective = min(max(requested, MinTimeout), MaxTimeout)
	return effective, effective != requested
}

// Config is what every run of a process shares: the settings of SPEC §4, resolved from flags and config
// (the defaults of `run`, `rpc` and `mcp` requests).
type Config struct {
	Timeout   float64 // default timeout of a request, seconds
	KillGrace float64 // seconds between SIGTERM and SIGKILL (§3.7)

	Shell    string   // shell path or name; "" for bash, else /bin/sh (§3.7)
	Prefix   string   // shell.prefix, shell text: the command becomes `<prefix> <command>`
	Wrapper  []string // shell.wrapper, an argv before the shell: `nice -n 10 bash -c <command>`
	Env      []string // KEY=VALUE layers after the defaults: shell.env, then --env
	Snapshot bool     // source the user's bash snapshot (§3.7)
	// SnapshotDir caches snapshots; "" turns them off.
	SnapshotDir string

	MaxBytes         int    // in-memory output window, bytes; 0 is the default 51200 (§3.8)
	ArtifactDir      string // where full outputs go; made absolute by New (§3.6)
	ArtifactMaxBytes int64  // cap on one artifact, bytes (§3.6)

	Intercept    bool             // run the interceptor (§3.3)
	Tools        []string         // the agent's active tools; a rule fires only for one of them
	Rules        []intercept.Rule // custom rules, tried before the built-ins
	DefaultRules bool             // keep the built-in rules

	NonZeroExit string       // result.NonZeroError or result.NonZeroReport (§3.9)
	SessionDir  string       // where sessions keep their state (§7.1): $XDG_STATE_HOME/agentbash/sessions
	Executor    run.Executor // nil is a supervisor process per run (supervisor.Local)
	Warnings    []string     // warnings from earlier steps (config), put in every result
	// Warn, when set, also receives the warnings that go to stderr (a broken rule, §3.3), once per Runner.
	Warn func(string)
}

// Request is one command. Its JSON names are the arguments of rpc and MCP requests; a field left out
// takes the Runner's value.
type Request struct {
	Command     string            `json:"command"`               // as given (§3.1)
	Cwd         string            `json:"cwd,omitempty"`         // "" is the current directory; ~ expands (§3.4)
	Timeout     *float64          `json:"timeout,omitempty"`     // seconds; clamped to [1, 3600] (§3.5)
	Head        *int              `json:"head,omitempty"`        // explicit line limits; they win over extracted ones (§3.2)
	Tail        *int              `json:"tail,omitempty"`        //
	Env         map[string]string `json:"env,omitempty"`         // over the Runner's environment layers
	NoNormalize bool              `json:"noNormalize,omitempty"` // do not extract head/tail stages
	Intercept   *bool             `json:"intercept,omitempty"`   // run the interceptor (§3.3)
	Tools       []string          `json:"tools,omitempty"`       // the agent's active tools, for this request
	Session     string            `json:"session,omitempty"`     // the session whose state it runs in (§7.1); "" is none
	// StartCwd is where the request runs when it names no cwd and its session has none yet (no session,
	// or a new one): a server's --cwd is the starting directory of its requests and sessions, not an
	// explicit cwd of each (README "Sessions"). "" is the current directory.
	StartCwd string `json:"-"`
	// Stdin is the command's stdin; nil is /dev/null (§3.1).
	Stdin io.Reader `json:"-"`
}

// Observer receives the sanitized output of a run as it arrives, with the exact counts of the whole stream
// at each piece's end (run.LiveText: a live terminal view, rpc stream updates, MCP progress), from one
// goroutine. A run with a head or tail limit streams nothing: the view would show what the limit hides.
type Observer func(run.LiveText)

// Runner runs requests with what is fixed per process: the config, the compiled interceptor, the
// executor. Its Run is safe for concurrent use; each run is supervised on its own (§11).
type Runner struct {
	c   Config
	exe run.Executor
	// compiled is the interceptor rules of c compiled once, on first use, with the broken rules' warnings
	// (for every result); a request's tools select among them (intercept.WithTools), compiling nothing.
	compiled func() (*intercept.Interceptor, []string)
	rules    *intercept.Interceptor // compiled with c.Tools active, when c.Intercept
}

// New prepares a Runner: it compiles the interceptor rules once (a broken rule is a warning, said once
// through c.Warn) and makes the artifact directory absolute, so $ARTIFACTS holds wherever a command cds.
func New(c Config) *Runner {
	r := &Runner{c: c, exe: c.Executor}
	if r.exe == nil {
		r.exe = &supervisor.Local{}
	}
	if abs, err := filepath.Abs(c.ArtifactDir); err == nil && c.ArtifactDir != "" {
		r.c.ArtifactDir = abs
	}
	if r.c.MaxBytes <= 0 {
		r.c.MaxBytes = sink.DefaultMaxBytes
	}
	r.compiled = sync.OnceValues(r.compile)
	if c.Intercept {
		ic, _ := r.compiled()
		r.rules = ic.WithTools(c.Tools)
	}
	return r
}

// compile compiles the interceptor rules, saying broken rules through Warn.
func (r *Runner) compile() (*intercept.Interceptor, []string) {
	ic, warnings := intercept.New(r.c.Rules, r.c.DefaultRules, nil)
	for _, w := range warnings {
		if r.c.Warn != nil {
			r.c.Warn(w) // a broken rule is also said on stderr (§3.3)
		}
	}
	return ic, warnings
}

// Failed is the result for a run that could not start because of err (a broken config, say): status
// error (the CLI exits 125), with the working directory and shell that would have been used (SPEC §3.11: every
// outcome but a usage error prints a result).
func Failed(command, cwd string, err error) result.Result {
	in := result.Input{Command: normalize.Trim(command), Err: err, TimeoutSeconds: DefaultTimeout,
		Head: -1, Tail: -1}
	in.Cwd, _ = run.ResolveDir(cwd, homeDir())
	in.Shell, _ = run.FindShell("")
	return result.Build(in)
}

// homeDir is the user's home directory, or "" when it is unknown.
func homeDir() string {
	home, _ := os.UserHomeDir()
	return home
}

// SignalCause is the cancel cause the CLI attaches to the context when agentbash itself gets a signal;
// the result then says cancelled and the exit status is 128+N (SPEC §3.11).
type SignalCause struct{ Signal syscall.Signal }

func (c SignalCause) Error() string { return "cancelled by " + c.Signal.String() }

// Run runs req through every stage and returns the result; it never fails: problems are results.
// Cancelling ctx kills the command's tree as a cancel.
func (r *Runner) Run(ctx context.Context, req Request, obs Observer) result.Result {
	if req.Session != "" {
		return r.runInSession(ctx, req, obs)
	}
	return r.execute(ctx, r.prepare(ctx, req, nil), obs)
}

// execute runs a prepared request and shapes its result.
func (r *Runner) execute(ctx context.Context, p prepared, obs Observer) result.Result {
	if p.done {
		return p.finish()
	}
	in, rr := p.in, p.rr
	streamed := obs != nil && in.Head < 0 && in.Tail < 0
	if streamed {
		rr.Live = obs
	}
	outcome, err := run.Run(ctx, r.exe, rr)
	if err != nil {
		in.Err = err
		return p.finish()
	}
	in.Outcome, in.Summary = &outcome, &outcome.Summary
	if id := outcome.Summary.ArtifactID; id != "" {
		in.ArtifactPath, _ = artifact.Store{Dir: r.c.ArtifactDir}.Path(id) // absolute: the dir is (§3.6)
	}
	in.Duration = outcome.Duration
	if outcome.Cancelled {
		if c, ok := errors.AsType[SignalCause](context.Cause(ctx)); ok {
			in.CancelSignal = c.Signal
		}
	}
	res := p.finish()
	res.Streamed = streamed
	return res
}

// prepared is a request through the stages before execution: the result's input so far and the run
// request, or done when the result is settled already (blocked, bad cwd, no shell).
type prepared struct {
	in    *result.Input
	rr    run.Request
	done  bool
	start time.Time
	// For a session's prelude: the explicit environment (shell.env, --env, the request's), and the file
	// BASH_ENV names without a session (the snapshot, or the user's own, which is kept for children).
	explicit    []string
	bashEnv     string
	keepBashEnv bool
}

func (p prepared) finish() result.Result {
	if p.in.Duration == 0 {
		p.in.Duration = time.Since(p.start)
	}
	return result.Build(*p.in)
}

// prepare runs the stages before execution. timeout, when set, replaces the request's and the Runner's
// (a task's, SPEC §8).
func (r *Runner) prepare(ctx context.Context, req Request, timeout *float64) prepared {
	start := time.Now()
	run.CloseInheritedDescriptors() // before the snapshot starts its shell, too (SPEC §3.7)
	command := normalize.Trim(req.Command)
	in := result.Input{
		Command:     command,
		Head:        limit(req.Head),
		Tail:        limit(req.Tail),
		MaxBytes:    r.c.MaxBytes,
		NonZeroExit: r.c.NonZeroExit,
		Warnings:    slices.Clone(r.c.Warnings),
	}
	p := prepared{in: &in, start: start}

	// §3.5 first, so every result (even an early error) reports the effective timeout.
	requested := r.c.Timeout
	if req.Timeout != nil {
		requested = *req.Timeout
	}
	if timeout != nil {
		requested = *timeout
	}
	effective, clamped := ClampTimeout(requested)
	in.TimeoutSeconds = effective
	if clamped {
		in.TimeoutRequested = new(requested)
		in.Warnings = append(in.Warnings, fmt.Sprintf("timeout %s s is out of range [1, 3600]; using %s s",
			result.FormatSeconds(requested), result.FormatSeconds(effective)))
	}
	// The backend resolves the shell and the working directory on its own target; the answer is reported
	// even when it fails (§3.4 is checked after interception).
	target, targetErr := r.exe.Resolve(r.c.Shell, cmp.Or(req.Cwd, req.StartCwd))
	in.Shell, in.Cwd = target.Shell, target.Dir

	// §3.2 normalization.
	toRun := command
	if !req.NoNormalize {
		n := normalize.Normalize(command)
		toRun = n.Command
		if in.Head < 0 {
			in.Head = n.Head
		}
		if in.Tail < 0 {
			in.Tail = n.Tail
		}
	}
	in.NormalizedCommand = toRun

	// §3.3 interception, on the command as given.
	if ic, warnings := r.requestInterceptor(req); ic != nil {
		in.Warnings = append(in.Warnings, warnings...)
		if b := ic.Check(command); b != nil {
			in.Blocked = b
			p.done = true
			return p
		}
	}

	// §3.4 working directory, then the shell.
	if targetErr != nil {
		in.Err = targetErr
		p.done = true
		return p
	}

	if r.c.Prefix != "" {
		toRun = r.c.Prefix + " " + toRun
	}
	env := []string{"PWD=" + target.Dir, "ARTIFACTS=" + r.c.ArtifactDir}
	p.bashEnv, p.keepBashEnv = os.Getenv("BASH_ENV"), true
	if path := r.userSnapshot(ctx, target.Shell, &in); path != "" {
		env = append(env, "BASH_ENV="+path)
		p.bashEnv, p.keepBashEnv = path, false
	}
	p.explicit = slices.Clone(r.c.Env)
	for _, k := range slices.Sorted(maps.Keys(req.Env)) {
		p.explicit = append(p.explicit, k+"="+req.Env[k])
	}
	for _, kv := range p.explicit {
		if v, ok := strings.CutPrefix(kv, "BASH_ENV="); ok {
			p.bashEnv, p.keepBashEnv = v, true
		}
	}
	env = append(env, p.explicit...)
	rr := run.Request{
		Command:   toRun,
		Target:    target,
		Env:       env,
		Wrapper:   r.c.Wrapper,
		Timeout:   time.Duration(effective * float64(time.Second)),
		KillGrace: time.Duration(r.c.KillGrace * float64(time.Second)),
		// §3.6 artifacts: the backend's sink spills the whole stream to one, lazily.
		Output: run.Output{MaxBytes: in.MaxBytes, Head: in.Head, Tail: in.Tail, ArtifactDir: run.Raw(r.c.ArtifactDir),
			ArtifactMaxBytes: r.c.ArtifactMaxBytes, Command: command, Cwd: target.Dir},
	}
	if req.Stdin != nil {
		rr.Stdin = req.Stdin
	}
	p.rr = rr
	return p
}

// requestInterceptor is the interceptor for req (nil when interception is off), with the warnings of
// the rules' compile: the Runner's rules, with the request's tools active when it names them.
func (r *Runner) requestInterceptor(req Request) (*intercept.Interceptor, []string) {
	on := r.c.Intercept
	if req.Intercept != nil {
		on = *req.Intercept
	}
	if !on {
		return nil, nil
	}
	ic, warnings := r.compiled()
	switch {
	case req.Tools != nil:
		return ic.WithTools(req.Tools), warnings
	case r.rules != nil:
		return r.rules, warnings
	}
	return ic.WithTools(r.c.Tools), warnings
}

// limit is a line limit from a request: -1 when none.
func limit(n *int) int {
	if n == nil {
		return -1
	}
	return *n
}

// userSnapshot returns the path of the bash snapshot to source through BASH_ENV, or "" (SPEC §3.7). A user
// who set BASH_ENV keeps it: no snapshot then.
func (r *Runner) userSnapshot(ctx context.Context, shell string, in *result.Input) string {
	home := homeDir()
	if !r.c.Snapshot || r.c.SnapshotDir == "" || home == "" || filepath.Base(shell) != "bash" || os.Getenv("BASH_ENV") != "" {
		return ""
	}
	path, warning := snapshot.Ensure(ctx, snapshot.Options{
		Shell: shell, RCFile: filepath.Join(home, ".bashrc"), CacheDir: r.c.SnapshotDir, Env: os.Environ(),
	})
	if warning != "" {
		in.Warnings = append(in.Warnings, warning)
	}
	return path
}
