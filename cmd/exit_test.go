package cmd

import (
	"errors"
	"io"
	"testing"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// TestResultExit maps a result of every status to agentbash's exit status (reference §3.11), the results built
// by result.Build as a run builds them.
func TestResultExit(t *testing.T) {
	exited := func(code int) *run.Outcome { return &run.Outcome{ExitCode: code} }
	for _, tc := range []struct {
		name   string
		in     func(*result.Input)
		status string
		exit   int
	}{
		{"ok", func(in *result.Input) { in.Outcome = exited(0) }, result.StatusExited, 0},
		{"non-zero", func(in *result.Input) { in.Outcome = exited(3) }, result.StatusExited, 3},
		{"non-zero reported", func(in *result.Input) { in.Outcome, in.NonZeroExit = exited(3), result.NonZeroReport },
			result.StatusExited, 3},
		{"missing status", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: -1} }, result.StatusExited, 125},
		{"head closed the pipe", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13, OutputClosed: true, OutputIncomplete: true}
			in.Head = 1
			in.Summary = &sink.Summary{Text: "y\n", HeadLimitReached: true}
		}, result.StatusExited, 0},
		{"head limit, ended by itself", func(in *result.Input) {
			in.Head = 5
			in.Outcome = exited(2)
			in.Summary = &sink.Summary{Text: "a\n", HeadLimitReached: true}
		}, result.StatusExited, 2},
		{"signal", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGSEGV", SignalNumber: 11} },
			result.StatusSignaled, 139},
		{"signal without a name", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIG40", SignalNumber: 40} },
			result.StatusSignaled, 168},
		{"timeout", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, TimedOut: true}
		}, result.StatusTimedOut, 124},
		{"cancel by SIGINT", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
			in.CancelSignal = 2
		}, result.StatusCancelled, 130},
		{"cancel by SIGTERM", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
			in.CancelSignal = 15
		}, result.StatusCancelled, 143},
		{"cancel, signal unknown", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
		}, result.StatusCancelled, 130},
		{"task killed by SIGTERM", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
			in.Killed, in.KillSignal = "[Task killed by SIGTERM]", 15
		}, result.StatusKilled, 143},
		{"task killed by SIGKILL", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGKILL", SignalNumber: 9, Cancelled: true}
			in.Killed, in.KillSignal = "[Task killed by SIGKILL]", 9
		}, result.StatusKilled, 137},
		{"task past its lifetime", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, TimedOut: true}
			in.Killed, in.KillSignal = "[Task killed after tasks.maxLifetime (60 seconds)]", 15
		}, result.StatusKilled, 143},
		{"blocked", func(in *result.Input) {
			in.Blocked = &intercept.Block{Tool: "read", Message: "Use read.", Pattern: "^cat"}
		}, result.StatusBlocked, 126},
		{"error", func(in *result.Input) { in.Err = errors.New("Working directory does not exist: /x") },
			result.StatusError, 125},
	} {
		in := result.Input{Command: "cmd", Cwd: "/w", Shell: "/bin/bash", TimeoutSeconds: 300, Head: -1, Tail: -1,
			MaxBytes: 51200, NonZeroExit: result.NonZeroError}
		tc.in(&in)
		r := result.Build(in)
		if r.Details.Status != tc.status {
			t.Fatalf("%s: status %s, want %s", tc.name, r.Details.Status, tc.status)
		}
		if got := resultExit(r); got != tc.exit {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.exit)
		}
	}
}

// A task still running (a start, a yield, a read) exits 0 (reference §8); wait's own timeout is its own rule.
func TestResultExitRunningTask(t *testing.T) {
	rec := tasks.Record{TaskID: "7", Status: tasks.StatusRunning, Pid: 4242, Command: "sleep 60", Head: -1, Tail: -1}
	for name, r := range map[string]result.Result{
		"started": tasks.Result(rec, true),
		"running": tasks.Result(rec, false),
		"read":    tasks.ReadResult(tasks.Read{Record: rec, Text: "partial\n"}),
	} {
		if r.Details.Status != result.StatusRunning {
			t.Fatalf("%s: status %s, want running", name, r.Details.Status)
		}
		if got := resultExit(r); got != 0 {
			t.Errorf("%s: exit %d, want 0", name, got)
		}
	}
}

// TestExitStatus maps the errors a command returns to exit statuses (reference §3.11).
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{exitError{code: 124}, 124},
		{configError{errors.New("bad")}, 125},
		{usageError{err: errors.New("bad flag")}, 2},
		{errors.New("other"), 1},
	} {
		if got := exitStatus(tc.err, io.Discard); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
	}
}
