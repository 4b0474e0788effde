// Package local is the executor of this machine (docs/architecture.md, "The seam"): the place half of a
// command. It resolves the shell and the working directory (docs/reference.md §3.4), builds the environment
// from this machine's own (the non-interactive defaults, shell.env, the user's rc snapshot through BASH_ENV,
// §3.7), keeps sessions (§7.1), artifacts (§3.6) and task records (§8) in this machine's directories, and runs
// each command under a supervisor process (pkg/supervisor) that owns its tree. It takes a request.Command
// whose own half the service settled (Resolved) and shapes the result with the place's facts.
package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/raw"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Config is the place's settings (docs/reference.md §4): what this machine's config says about where and how
// commands run here.
type Config struct {
	Shell    string   // shell path or name; "" for bash, else /bin/sh (§3.7)
	ShellEnv []string // shell.env: KEY=VALUE layers over the base environment, under the request's
	Snapshot bool     // source the user's bash snapshot (§3.7)
	// SnapshotDir caches snapshots; "" turns them off.
	SnapshotDir string

	ArtifactDir string // where full outputs go; made absolute by New (§3.6)
	SessionDir  string // where sessions keep their state (§7.1): $XDG_STATE_HOME/agentbash/sessions
	TaskDir     string // where task records live (§8)
	// KillLimit bounds how long a task's kill waits for its tree to be gone.
	KillLimit time.Duration
	// Supervisors starts the supervisor of each run; nil is a supervisor process per run (supervisor.Pool).
	Supervisors run.Starter
	// OwnDirs are agentbash's own config, cache and state directories, never writable in a sandbox; StateDir
	// is hidden from a sandboxed command (reference §13).
	OwnDirs  []string
	StateDir string
}

// Executor runs commands on this machine. Its methods are safe for concurrent use; each run is supervised on
// its own (§11).
type Executor struct {
	c     Config
	sup   run.Starter
	owned bool // sup was made here, so Close ends it
}

var _ executor.Executor = (*Executor)(nil)

// New prepares the executor: it makes the directories absolute, so $ARTIFACTS holds wherever a command cds.
func New(c Config) *Executor {
	e := &Executor{c: c, sup: c.Supervisors}
	if e.sup == nil {
		e.sup, e.owned = &supervisor.Pool{}, true
	}
	for _, d := range []*string{&e.c.ArtifactDir, &e.c.SessionDir, &e.c.TaskDir} {
		if abs, err := filepath.Abs(*d); err == nil && *d != "" {
			*d = abs
		}
	}
	return e
}

// Close ends the spare supervisors the executor made itself (Config.Supervisors is its giver's to close);
// running tasks go on.
func (e *Executor) Close() error {
	if c, ok := e.sup.(io.Closer); ok && e.owned {
		return c.Close()
	}
	return nil
}

// Tasks, Sessions and Artifacts: this machine has all three.
// Sessions is nil when the config names no session directory.
func (e *Executor) Tasks() executor.Tasks { return taskOps{e} }
func (e *Executor) Sessions() executor.Sessions {
	if e.c.SessionDir == "" {
		return nil
	}
	return sessionOps{e}
}
func (e *Executor) Artifacts() executor.Artifacts { return artifactOps{e} }

func (e *Executor) taskStore() tasks.Store { return tasks.Store{Dir: e.c.TaskDir} }

// Failed is the result for a run that could not start because of err (a broken config, say): status
// error (the CLI exits 125), with the working directory and shell that would have been used (reference
// §3.11: every outcome but a usage error prints a result).
func Failed(command, cwd string, err error) result.Result {
	in := result.Input{Command: normalize.Trim(command), Err: err, TimeoutSeconds: request.DefaultTimeout,
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

// Run runs c (its own half settled) and returns the result; it never fails: problems are results.
// Cancelling ctx kills the command's tree as a cancel; a ctx cancelled already starts nothing.
func (e *Executor) Run(ctx context.Context, c request.Command, obs executor.Observer) result.Result {
	switch {
	case c.Resolved == nil:
		return Failed(c.Command, cmp.Or(c.Cwd, c.StartCwd), errors.New("agentbash: a command reached the executor unsettled"))
	case ctx.Err() != nil:
		return e.cancelled(c)
	case c.Session != "":
		return e.runInSession(ctx, c, obs)
	}
	return e.execute(ctx, e.prepare(ctx, c), obs)
}

// execute runs a prepared request and shapes its result.
func (e *Executor) execute(ctx context.Context, p prepared, obs executor.Observer) result.Result {
	if p.done {
		return p.finish()
	}
	in, streams := p.in, p.streams
	streamed := obs != nil && in.Head < 0 && in.Tail < 0
	if streamed {
		streams.Live = obs
	}
	outcome, err := run.Run(ctx, e.sup, p.spec, streams)
	if err != nil {
		in.Err = err
		return p.finish()
	}
	in.Outcome, in.Summary = &outcome, &outcome.Summary
	if id := outcome.Summary.ArtifactID; id != "" {
		in.ArtifactPath, _ = artifact.Store{Dir: e.c.ArtifactDir}.Path(id) // absolute: the dir is (§3.6)
	}
	in.Duration = outcome.Duration
	if outcome.Cancelled {
		if c, ok := errors.AsType[request.SignalCause](context.Cause(ctx)); ok {
			in.CancelSignal = c.Signal
		}
	}
	res := p.finish()
	res.Streamed = streamed
	if s := outcome.Screen; s != nil && s.Showing() && outcome.TimedOut {
		// It asked for input nobody could give: say how to give it (reference §14).
		res.Footer = append(res.Footer, texts.ScreenTimedOut)
		res.Retext()
	}
	return res
}

// prepared is a request through the stages before execution: the result's input so far and the run (its
// spec and streams), or done when the result is settled already (blocked, bad cwd, no shell).
type prepared struct {
	in      *result.Input
	spec    run.Spec
	streams run.Streams
	done    bool
	start   time.Time
	// For a session's prelude: the explicit environment (shell.env, the request's layers), and the file
	// BASH_ENV names without a session (the snapshot, or the user's own, which is kept for children).
	explicit    []string
	bashEnv     string
	keepBashEnv bool
}

func (p prepared) finish() result.Result {
	if p.in.Duration == 0 {
		p.in.Duration = time.Since(p.start)
	}
	res := result.Build(*p.in)
	if p.spec.Sandbox != nil && res.Details.Sandbox != nil && len(res.Details.Sandbox.Denied) == 0 &&
		res.Details.ExitCode != nil && *res.Details.ExitCode != 0 {
		// What the sandbox refused, said to whoever reads only the text too (an MCP client's model); the
		// proxy's refusals have their own lines.
		if hint := p.spec.Sandbox.Hint(res.Output); hint != "" {
			res.Details.Sandbox.Hint = hint
			res.Footer = append(res.Footer, "[Sandbox: "+hint+"]")
			res.Retext()
		}
	}
	return res
}

// input is the result's input from c's settled half, before the place adds its facts.
func input(c request.Command) result.Input {
	r := c.Resolved
	return result.Input{
		Command:           string(r.Command),
		NormalizedCommand: string(r.NormalizedCommand),
		Head:              r.Head,
		Tail:              r.Tail,
		MaxBytes:          r.MaxBytes,
		NonZeroExit:       r.NonZeroExit,
		TimeoutSeconds:    r.Timeout,
		TimeoutRequested:  r.TimeoutRequested,
		Warnings:          slices.Clone(r.Warnings),
	}
}

// prepare runs the place's stages before execution: the shell and the working directory, the environment
// and the snapshot.
func (e *Executor) prepare(ctx context.Context, c request.Command) prepared {
	return e.prepareIn(ctx, c, "")
}

// prepareIn is prepare with the sandboxed workspace given (a session's), "" for the command's own.
func (e *Executor) prepareIn(ctx context.Context, c request.Command, workspace string) prepared {
	start := time.Now()
	run.CloseInheritedDescriptors() // before the snapshot starts its shell, too (§3.7)
	r := c.Resolved
	in := input(c)
	p := prepared{in: &in, start: start}

	// The shell and the working directory on this machine; the answer is reported even when it fails (§3.4
	// is checked after interception).
	target, targetErr := e.sup.Resolve(e.c.Shell, workDir(string(r.Cwd), string(r.StartCwd)))
	in.Shell, in.Cwd = target.Shell, target.Dir
	if r.Refused != "" {
		in.Err = errors.New(r.Refused)
		p.done = true
		return p
	}
	if r.Blocked != nil {
		in.Blocked = r.Blocked
		p.done = true
		return p
	}
	// §3.4 working directory, then the shell.
	if targetErr != nil {
		in.Err = targetErr
		p.done = true
		return p
	}

	env := []string{"PWD=" + target.Dir, "ARTIFACTS=" + e.c.ArtifactDir}
	p.bashEnv, p.keepBashEnv = os.Getenv("BASH_ENV"), true
	if path := e.userSnapshot(ctx, target.Shell, &in); path != "" {
		env = append(env, "BASH_ENV="+path)
		p.bashEnv, p.keepBashEnv = path, false
	}
	p.explicit = append(slices.Clone(e.c.ShellEnv), r.Env...)
	for _, kv := range p.explicit {
		if v, ok := strings.CutPrefix(kv, "BASH_ENV="); ok {
			p.bashEnv, p.keepBashEnv = v, true
		}
	}
	env = append(env, p.explicit...)
	p.spec = run.Spec{
		Command:   r.Run,
		Shell:     run.Raw(target.Shell),
		Dir:       run.Raw(target.Dir),
		Env:       env,
		Wrapper:   r.Wrapper,
		Timeout:   run.Seconds(r.Timeout),
		KillGrace: run.Seconds(r.KillGrace),
		// §3.6 artifacts: the backend's sink spills the whole stream to one, lazily.
		Output: run.Output{MaxBytes: in.MaxBytes, Head: in.Head, Tail: in.Tail, ArtifactDir: run.Raw(e.c.ArtifactDir),
			ArtifactMaxBytes: r.ArtifactMaxBytes, Command: in.Command, Cwd: target.Dir},
	}
	p.streams.Stdin = c.Stdin
	if p.spec.Interactive = r.Interactive; r.Interactive != nil {
		p.streams.Stdin = nil // the command reads its own input end (reference §14)
	}
	if r.Sandbox != nil && r.Sandbox.On() {
		p.spec.Sandbox, in.Sandbox, in.Err = e.confinement(*r.Sandbox, target.Dir, r.Workspace, workspace)
		p.done = in.Err != nil
		if c := p.spec.Sandbox; c != nil && p.bashEnv != "" && !p.keepBashEnv {
			p.keepSnapshot(c)
		}
		if c := p.spec.Sandbox; c != nil && c.Network == sandbox.NetworkProxy {
			if len(c.AllowHosts) == 0 {
				in.Warnings = append(in.Warnings, texts.SandboxNoHosts)
			}
			if names := proxyNames(r.Env); names != "" {
				in.Warnings = append(in.Warnings, fmt.Sprintf(texts.SandboxProxyEnv, names))
			}
		}
	}
	return p
}

// keepSnapshot makes the user's snapshot, which BASH_ENV names, visible to the sandboxed shell c confines:
// read-only, at its real path (a cache directory under /tmp lies in the host's /tmp, which the sandbox
// replaces by a private one; one under the state directory is hidden with it), and BASH_ENV names that
// path. Without it the shell would start without the user's functions and aliases.
func (p *prepared) keepSnapshot(c *sandbox.Confinement) {
	real, err := filepath.EvalSymlinks(p.bashEnv)
	if err != nil {
		return // gone meanwhile: the shell says so, as without a sandbox
	}
	c.Keep = append(c.Keep, sandbox.Bind{Path: raw.String(real)})
	for i, kv := range p.spec.Env {
		if kv == "BASH_ENV="+p.bashEnv {
			p.spec.Env[i] = "BASH_ENV=" + real
		}
	}
	p.bashEnv = real
}

// proxyNames is the proxy variables that env (the request's own layers) sets and network proxy replaces
// (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY in any case), as "A", "A and B" or "A, B and C"; "" for
// none. Such a request meant them for the command, which never sees them.
func proxyNames(env []string) string {
	var names []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// userSnapshot returns the path of the bash snapshot to source through BASH_ENV, or "" (§3.7). A user
// who set BASH_ENV keeps it: no snapshot then.
func (e *Executor) userSnapshot(ctx context.Context, shell string, in *result.Input) string {
	home := homeDir()
	if !e.c.Snapshot || e.c.SnapshotDir == "" || home == "" || filepath.Base(shell) != "bash" || os.Getenv("BASH_ENV") != "" {
		return ""
	}
	path, warning := snapshot.Ensure(ctx, snapshot.Options{
		Shell: shell, RCFile: filepath.Join(home, ".bashrc"), CacheDir: e.c.SnapshotDir, Env: os.Environ(),
	})
	if warning != "" {
		in.Warnings = append(in.Warnings, warning)
	}
	return path
}

// workDir is the directory a command asks for: cwd, where a relative one resolves against base (the
// session's directory or the server's start directory: where the command would otherwise start), else base
// (reference §3.4). ~ in either expands later, on resolving.
func workDir(cwd, base string) string {
	if cwd == "" || base == "" || filepath.IsAbs(cwd) || cwd == "~" || strings.HasPrefix(cwd, "~/") {
		return cmp.Or(cwd, base)
	}
	if b, err := run.ExpandHome(base, homeDir()); err == nil {
		base = b
	}
	return filepath.Join(base, cwd)
}
