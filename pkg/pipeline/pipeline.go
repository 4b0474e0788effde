// Package pipeline runs the stages of `agentbash run` in the order of SPEC §3 — normalize, intercept,
// working directory, timeout, execute into the sink, shape the result — for one command.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

// Options is one run, fully resolved from flags and config (SPEC §3, §4).
type Options struct {
	Command     string    // as given by the user (§3.1)
	Cwd         string    // requested working directory; "" is the current directory; ~ expands (§3.4)
	Timeout     float64   // requested timeout, seconds; clamped to [1, 3600] here (§3.5)
	KillGrace   float64   // seconds between SIGTERM and SIGKILL (§3.7)
	Head, Tail  int       // explicit line limits, -1 when none; they win over extracted ones (§3.2)
	NoNormalize bool      // do not extract head/tail stages
	Stdin       io.Reader // the command's stdin; nil is /dev/null (§3.1)

	Shell    string   // shell path or name; "" for bash, else /bin/sh (§3.7)
	Prefix   string   // shell.prefix, shell text: the command becomes `<prefix> <command>`
	Wrapper  []string // shell.wrapper, an argv before the shell: `nice -n 10 bash -c <command>`
	Env      []string // KEY=VALUE layers after the defaults: shell.env, then --env
	Snapshot bool     // source the user's bash snapshot (§3.7)
	// SnapshotDir caches snapshots; "" turns them off.
	SnapshotDir string

	MaxBytes         int    // in-memory output window, bytes; 0 is the default 51200 (§3.8)
	ArtifactDir      string // where full outputs go; made absolute here (§3.6)
	ArtifactMaxBytes int64  // cap on one artifact, bytes (§3.6)

	Intercept    bool             // run the interceptor (§3.3)
	Tools        []string         // the agent's active tools; a rule fires only for one of them
	Rules        []intercept.Rule // custom rules, tried before the built-ins
	DefaultRules bool             // keep the built-in rules

	NonZeroExit string       // result.NonZeroError or result.NonZeroReport (§3.9)
	Live        io.Writer    // optional: sanitized output as it arrives (text mode on a terminal)
	Executor    run.Executor // nil is a supervisor process per run (supervisor.Local)
	Warnings    []string     // warnings from earlier steps (config)
	// Warn, when set, also receives the warnings that SPEC says go to stderr (a broken rule).
	Warn func(string)
}

// Failed is the result for a run that could not start because of err (a broken config, say): status
// error, exit 125, with the working directory and shell that would have been used (SPEC §3.11: every
// outcome but a usage error prints a result).
func Failed(command, cwd string, err error) result.Result {
	in := result.Input{Command: normalize.Trim(command), Err: err, TimeoutSeconds: config.DefaultTimeout,
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

// Run runs o through every stage and returns the result; it never fails: problems are results.
func Run(ctx context.Context, o Options) result.Result {
	start := time.Now()
	run.CloseInheritedDescriptors() // before the snapshot starts its shell, too (SPEC §3.7)
	command := normalize.Trim(o.Command)
	in := result.Input{
		Command:     command,
		Head:        o.Head,
		Tail:        o.Tail,
		MaxBytes:    o.MaxBytes,
		NonZeroExit: o.NonZeroExit,
		Warnings:    append([]string(nil), o.Warnings...),
	}
	if in.MaxBytes <= 0 {
		in.MaxBytes = config.DefaultMaxBytes
	}
	finish := func() result.Result {
		if in.Duration == 0 {
			in.Duration = time.Since(start)
		}
		return result.Build(in)
	}

	// §3.5 first, so every result (even an early error) reports the effective timeout.
	timeout, clamped := config.ClampTimeout(o.Timeout)
	in.TimeoutSeconds = timeout
	if clamped {
		in.TimeoutRequested = new(o.Timeout)
		in.Warnings = append(in.Warnings, fmt.Sprintf("timeout %s s is out of range [1, 3600]; using %s s",
			result.FormatSeconds(o.Timeout), result.FormatSeconds(timeout)))
	}
	exe := o.Executor
	if exe == nil {
		local := &supervisor.Local{}
		defer local.Close()
		exe = local
	}
	// The backend resolves the shell and the working directory on its own target; the answer is reported
	// even when it fails (§3.4 is checked after interception).
	target, targetErr := exe.Resolve(o.Shell, o.Cwd)
	shell, cwd := target.Shell, target.Dir
	in.Shell, in.Cwd = shell, cwd
	home := homeDir()

	// §3.2 normalization.
	toRun := command
	if !o.NoNormalize {
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
	if o.Intercept {
		ic, warnings := intercept.New(o.Rules, o.DefaultRules, o.Tools)
		for _, w := range warnings {
			if o.Warn != nil {
				o.Warn(w) // SPEC §3.3: a broken rule is also said on stderr
			}
		}
		in.Warnings = append(in.Warnings, warnings...)
		if b := ic.Check(command); b != nil {
			in.Blocked = b
			return finish()
		}
	}

	// §3.4 working directory, then the shell.
	if targetErr != nil {
		in.Err = targetErr
		return finish()
	}

	live := o.Live
	if in.Head >= 0 || in.Tail >= 0 {
		live = nil // a live view would show what the limit hides
	}

	// §3.6 artifacts: the backend's sink spills the whole stream to one, lazily.
	dir := o.ArtifactDir
	if abs, err := filepath.Abs(dir); err == nil && dir != "" {
		dir = abs // $ARTIFACTS must hold wherever the command cds
	}
	store := artifact.Store{Dir: dir}

	if o.Prefix != "" {
		toRun = o.Prefix + " " + toRun
	}
	env := []string{"PWD=" + cwd, "ARTIFACTS=" + dir}
	if path := userSnapshot(ctx, o, shell, home, &in); path != "" {
		env = append(env, "BASH_ENV="+path)
	}
	req := run.Request{
		Command:   toRun,
		Target:    target,
		Env:       append(env, o.Env...),
		Wrapper:   o.Wrapper,
		Stdin:     o.Stdin,
		Timeout:   time.Duration(timeout * float64(time.Second)),
		KillGrace: time.Duration(o.KillGrace * float64(time.Second)),
		Output: run.Output{MaxBytes: in.MaxBytes, Head: in.Head, Tail: in.Tail, ArtifactDir: dir,
			ArtifactMaxBytes: o.ArtifactMaxBytes, Command: command, Cwd: cwd},
	}
	if live != nil {
		req.Live = func(text string) { _, _ = io.WriteString(live, text) }
	}
	outcome, err := run.Run(ctx, exe, req)
	if err != nil {
		in.Err = err
		return finish()
	}
	summary := outcome.Summary
	in.Outcome = &outcome
	in.Summary = &summary
	if summary.ArtifactID != "" {
		in.ArtifactPath, _ = store.Path(summary.ArtifactID) // absolute: dir is (§3.6)
	}
	in.Duration = outcome.Duration
	if outcome.Cancelled {
		if c, ok := errors.AsType[SignalCause](context.Cause(ctx)); ok {
			in.CancelSignal = int(c.Signal)
		}
	}
	r := finish()
	r.Streamed = live != nil
	return r
}

// userSnapshot returns the path of the bash snapshot to source through BASH_ENV, or "" (SPEC §3.7). A user
// who set BASH_ENV keeps it: no snapshot then.
func userSnapshot(ctx context.Context, o Options, shell, home string, in *result.Input) string {
	if !o.Snapshot || o.SnapshotDir == "" || home == "" || filepath.Base(shell) != "bash" || os.Getenv("BASH_ENV") != "" {
		return ""
	}
	path, warning := snapshot.Ensure(ctx, snapshot.Options{
		Shell: shell, RCFile: filepath.Join(home, ".bashrc"), CacheDir: o.SnapshotDir, Env: os.Environ(),
	})
	if warning != "" {
		in.Warnings = append(in.Warnings, warning)
	}
	return path
}
