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
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/snapshot"
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
	Executor    run.Executor // nil is run.Local
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
	shell, shellErr := run.FindShell(o.Shell)
	in.Shell = shell
	if shellErr != nil {
		in.Shell = o.Shell
	}
	home := homeDir()
	cwd, cwdErr := run.ResolveDir(o.Cwd, home)
	in.Cwd = cwd // reported even when it fails below (§3.4 runs after interception)

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

	// §3.4 working directory.
	if cwdErr != nil {
		in.Err = cwdErr
		return finish()
	}
	if shellErr != nil {
		in.Err = shellErr
		return finish()
	}

	live := o.Live
	if in.Head >= 0 || in.Tail >= 0 {
		live = nil // a live view would show what the limit hides
	}

	// §3.6 artifacts, allocated lazily by the sink.
	dir := o.ArtifactDir
	if abs, err := filepath.Abs(dir); err == nil && dir != "" {
		dir = abs // $ARTIFACTS must hold wherever the command cds
	}
	store := artifact.Store{Dir: dir}
	_ = store.Mkdir()  // $ARTIFACTS should exist; a failure is reported if an artifact is needed
	var created string // the artifact allocated, even if writing it failed later
	s := sink.New(sink.Options{
		MaxBytes:         in.MaxBytes,
		Head:             in.Head,
		Tail:             in.Tail,
		ArtifactMaxBytes: o.ArtifactMaxBytes,
		Live:             live,
		OpenArtifact: func() (io.WriteCloser, string, error) {
			f, id, err := store.Create(artifact.Meta{Command: command, Cwd: cwd, Created: time.Now()})
			if err != nil {
				return nil, "", fmt.Errorf("artifact not saved: %w", err)
			}
			created = id
			return f, id, nil
		},
	})

	if o.Prefix != "" {
		toRun = o.Prefix + " " + toRun
	}
	layer := []string{"PWD=" + cwd, "ARTIFACTS=" + dir}
	if path := userSnapshot(ctx, o, shell, home, &in); path != "" {
		layer = append(layer, "BASH_ENV="+path)
	}
	env := run.Environ(os.Environ(), layer, o.Env)
	exe := o.Executor
	if exe == nil {
		exe = run.Local{}
	}
	outcome, err := exe.Run(ctx, run.Spec{
		Command:   toRun,
		Shell:     shell,
		Wrapper:   o.Wrapper,
		Dir:       cwd,
		Env:       env,
		Stdin:     o.Stdin,
		Timeout:   time.Duration(timeout * float64(time.Second)),
		KillGrace: time.Duration(o.KillGrace * float64(time.Second)),
		Output:    s,
		LimitMet:  s.LimitMet, // a met head limit: the runner reads on briefly, then closes the pipe (§3.2)
	})
	summary := s.Close()
	if created != "" && summary.ArtifactID == "" {
		_ = store.Remove(created) // a partial artifact the result does not name would only mislead
	}
	if err != nil {
		in.Err = err
		return finish()
	}
	if summary.ArtifactID != "" && (summary.ArtifactCapped || summary.Binary) {
		// Best effort: `artifact list` and `artifact ID` read these.
		meta := artifact.Meta{ID: summary.ArtifactID, Command: command, Cwd: cwd, Created: start,
			Capped: summary.ArtifactCapped, Omitted: summary.ArtifactOmitted, Binary: summary.Binary}
		if err := store.UpdateMeta(meta); err != nil {
			in.Warnings = append(in.Warnings, fmt.Sprintf("artifact %s metadata not updated: %v", summary.ArtifactID, err))
		}
	}
	if summary.ArtifactID != "" && summary.ArtifactCapped {
		in.Warnings = append(in.Warnings, fmt.Sprintf("artifact %s was capped at %s (artifacts.maxBytes); %s left out",
			summary.ArtifactID, sink.FormatSize(o.ArtifactMaxBytes), sink.FormatSize(summary.ArtifactOmitted)))
	}
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
