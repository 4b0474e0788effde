package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/result"
)

// Exit statuses of agentbash itself (reference §3.11); otherwise the command's own status passes through.
const (
	exitTimedOut  = 124
	exitCannotRun = 125
	exitBlocked   = 126
	exitUsage     = 2
	exitSignal    = 128 // + N: the command died of signal N, or agentbash was cancelled by it
)

// resultExit is agentbash's exit status for a result (reference §3.11), from details.status: the command's own
// exit code when it exited; 128+N when it died of signal N; 124 timed out; 128+N when agentbash was
// cancelled by signal N (SIGINT's 130 when the signal is unknown); 126 blocked; 125 could not run, or no
// exit status. A task (reference §8) killed by signal N is 128+N; one still running (started, yielded) is 0.
// This is the one place a result becomes a process status; the task commands apply their own rules on top
// (cmd/tasks.go).
func resultExit(r result.Result) int {
	d := r.Details
	switch d.Status {
	case result.StatusExited:
		if d.ExitCode == nil {
			return exitCannotRun // "Command failed: missing exit status"
		}
		return *d.ExitCode
	case result.StatusSignaled:
		if n := signalNumber(d.Signal); n > 0 {
			return exitSignal + n
		}
		return exitCannotRun
	case result.StatusTimedOut:
		return exitTimedOut
	case result.StatusCancelled:
		if r.CancelSignal == 0 {
			return exitSignal + int(unix.SIGINT)
		}
		return exitSignal + int(r.CancelSignal)
	case result.StatusBlocked:
		return exitBlocked
	case result.StatusKilled:
		return exitSignal + int(r.KillSignal)
	case result.StatusRunning:
		return 0
	}
	return exitCannotRun // result.StatusError
}

// signalNumber is the number of a signal named as details.signal names it: "SIGKILL", or "SIG34" for one
// without a name (pkg/run); 0 when name is neither.
func signalNumber(name string) int {
	if n := unix.SignalNum(name); n > 0 {
		return int(n)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "SIG"))
	if err != nil || !strings.HasPrefix(name, "SIG") {
		return 0
	}
	return n
}

// exitError carries an exit status; the message, if any, was already printed (or is printed here).
type exitError struct {
	code int
	err  error // nil when everything was already said
}

func (e exitError) Unwrap() error { return e.err }

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

// usageError is a malformed command line: exit 2, message on stderr, no result (reference §3.11).
type usageError struct {
	err error
	cmd string // the command whose --help to point at; "" for agentbash
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// configError is a broken configuration: exit 125 (reference §4).
type configError struct{ err error }

func (e configError) Error() string {
	return "config: " + strings.ReplaceAll(e.err.Error(), "\n", "\nconfig: ") // one line per bad setting
}
func (e configError) Unwrap() error { return e.err }

// exitStatus is the status for what a command returned, saying err on stderr unless it was said already:
// an exitError's code, 125 for a broken config, 2 for a usage error, else 1.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if e, ok := errors.AsType[exitError](err); ok {
		if e.err != nil {
			fmt.Fprintln(stderr, "agentbash:", e.err)
		}
		return e.code
	}
	if _, ok := errors.AsType[configError](err); ok {
		fmt.Fprintln(stderr, "agentbash:", err)
		return exitCannotRun
	}
	if ue, isUsage := errors.AsType[usageError](err); isUsage {
		cmd := cmp.Or(ue.cmd, "agentbash")
		fmt.Fprintln(stderr, "agentbash:", err)
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd)
		return exitUsage
	}
	fmt.Fprintln(stderr, "agentbash:", err)
	return 1
}
