// Package run executes one shell command to completion under supervision: its own session and process
// group, one pipe for stdout and stderr, a wall-clock timeout with SIGTERM → grace → SIGKILL of every
// descendant, and a bounded drain after the shell exits (SPEC §3.7).
//
// [Executor] is the backend seam from the executor design in the seeds: the pipeline and the result format
// only see [Spec] and [Outcome], so sandboxed, containerized or remote backends can replace [Local].
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Spec describes one command to run.
type Spec struct {
	// Command is the script given to `Shell -c`.
	Command string
	// Shell is the shell's path (absolute, or a name looked up in PATH).
	Shell string
	// Wrapper, when set, is an argv the shell runs under: Wrapper[0] (looked up in PATH) is started with
	// the rest of Wrapper, then the shell and its arguments (`nice -n 10 bash -c <command>`).
	Wrapper []string
	// Dir is the absolute working directory; it must exist.
	Dir string
	// Env is the whole environment of the command, as KEY=VALUE.
	Env []string
	// Stdin is the command's standard input; nil means /dev/null (SPEC §3.1).
	Stdin io.Reader
	// Timeout is the wall-clock limit; it always applies and must be positive.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL on timeout or cancel.
	KillGrace time.Duration
	// Output receives the merged stdout and stderr stream in order. When a Write returns an error, the runner
	// stops reading and closes the pipe, as a reader such as `head` would: the writers get SIGPIPE
	// ([Outcome.OutputClosed]).
	Output io.Writer
	// LimitMet, if set, is asked after each Write to Output whether Output has met a limit (a head limit:
	// what is shown is settled). From the first true the runner reads on for at most [LimitReadOn] more —
	// so a finite command still ends by itself and its counts are exact — and then closes the pipe, as
	// `head` would (SPEC §3.2). Output bounds what it takes in bytes by refusing a Write.
	LimitMet func() bool
}

// Outcome is how a run ended. Timeout and cancel are outcomes, not errors.
type Outcome struct {
	// ExitCode is the shell's exit status, or -1 when it died of a signal or has no status.
	ExitCode int
	// Signal names the signal that killed the shell ("SIGKILL"), or "" when it exited.
	Signal string
	// SignalNumber is the number of Signal, 0 when none.
	SignalNumber int
	// TimedOut is set when the timeout fired and the command was killed.
	TimedOut bool
	// Cancelled is set when the context was cancelled while the command ran and it was killed.
	Cancelled bool
	// OutputClosed is set when the runner closed the pipe while the shell still ran, because Output
	// refused a Write or LimitReadOn had passed since LimitMet: the writers get SIGPIPE, as under `| head`.
	OutputClosed bool
	// OutputIncomplete is set when reading stopped before the end of the stream (EOF): OutputClosed, or
	// the bounded drain after the shell exited stopped while a leftover process still held the pipe.
	// What Output received is then a prefix of what the command wrote, and counts over it are lower
	// bounds.
	OutputIncomplete bool
	// LeftoverPids lists processes the command started that were still running after a normal exit.
	// They are not killed (SPEC §3.7).
	LeftoverPids []int
	// Duration is the wall-clock time from start to the end of the drain.
	Duration time.Duration
	// Warnings are best-effort problems worth telling the caller (e.g. leftover processes).
	Warnings []string
}

// Executor runs a command to completion. Implementations return an error only when the command could not
// be run at all (shell not found, cannot fork); everything that happens after the start is an [Outcome].
type Executor interface {
	Run(ctx context.Context, spec Spec) (Outcome, error)
}

// Drain bounds, after the shell exits (SPEC §3.7): stop reading after DrainSilence without data, and after
// DrainMax in all cases, so a background job holding the pipe cannot hang the call.
const (
	DrainSilence = 250 * time.Millisecond
	DrainMax     = 2 * time.Second
)

// LimitReadOn is how long the runner goes on reading after [Spec.LimitMet] first says yes, before it
// closes the pipe (SPEC §3.2: 250 ms): long enough for a finite command to end by itself, short enough
// that a slow or endless producer (`yes`, a `sleep` loop) does not keep the call waiting.
const LimitReadOn = 250 * time.Millisecond

// ErrShellNotFound is returned (wrapped) when the shell cannot be found or executed.
var ErrShellNotFound = errors.New("shell not found")

// ErrWrapperNotFound is returned (wrapped) when the wrapper program (shell.wrapper) cannot be found or
// executed.
var ErrWrapperNotFound = errors.New("wrapper program not found")

// ExitStatus is the status bash would report for o: the exit code, or 128+N for death by signal N.
func (o Outcome) ExitStatus() int {
	if o.SignalNumber > 0 {
		return 128 + o.SignalNumber
	}
	return o.ExitCode
}

// openStdin returns the command's stdin and a function that closes what was opened here.
func openStdin(r io.Reader) (io.Reader, func(), error) {
	if r != nil {
		return r, func() {}, nil
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	return f, func() { f.Close() }, nil
}
