// Package supervisor runs one command per supervisor process, so that what the command started ends with
// its run even when the agentbash process that asked for it dies (reference §11).
//
// A supervisor is agentbash re-executed as `agentbash __supervise` ([Command]) with one end of a unix
// socket pair as file descriptor 3. It becomes the child subreaper of its own subtree, so "every descendant
// of this process" is exactly the run's tree: setsid and double-fork escapees reparent to it, and several
// runs of one client (rpc, mcp) are supervised apart without a process-wide lock. It owns the output pipe,
// the sink and the artifact, enforces the timeout, and when the client's end of the socket closes — the
// client exited or was SIGKILLed — it sends SIGTERM to the whole tree and SIGKILL [ClientGoneGrace] later.
//
// The protocol is JSON, one object a line, on the socket (written and read by hand as encoding/json
// would: codec.go): the client sends a [Request] with Op "start" first, carrying the [run.Spec] as it is
// (its file descriptors, such as the command's stdin, travel in one SCM_RIGHTS message just before it),
// then "cancel" when it wants the run killed (with the grace its context's cancel cause names, a
// [run.KillGraceCause], as [run.Loop] takes it); the supervisor sends "output" events (only when live
// output was asked for) and one "done" [Event] with the outcome and the sink's summary. Then it exits,
// or — when the client offered reuse in its start request and the run left nothing behind (the done event
// says reusable) — waits for the client's next "start" (no descriptor byte before it) or EOF, so a
// long-lived client's runs pay no exec each ([MaxRuns] at most). A task whose shell ended while processes
// it started run on keeps its supervisor until they are gone (the task owns them: see pkg/tasks).
// The command's text travels on the socket, never on a command line, so `pgrep -f` never finds agentbash.
package supervisor

import (
	"time"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/supervisor/early"
)

// Command is the hidden subcommand that turns agentbash into a supervisor (argv[1]).
const Command = early.Command

// controlFD is the supervisor's end of the socket pair.
const controlFD = 3

// ClientGoneGrace is run.ClientGoneGrace: the grace of a tree whose client is gone.
const ClientGoneGrace = run.ClientGoneGrace

// Operations of the protocol.
const (
	OpStart   = "start"   // client → supervisor: the run; first, and again after a reusable done
	OpCancel  = "cancel"  // client → supervisor: kill the tree as a cancel (TERM → grace → KILL)
	OpDetach  = "detach"  // client → supervisor: an attached task goes on without its client
	OpStarted = "started" // supervisor → client: the shell runs, with its pid (unless the start was Quiet)
	OpOutput  = "output"  // supervisor → client: sanitized text as it arrives (Request.Live)
	OpDone    = "done"    // supervisor → client: how the run ended; the supervisor then exits, unless reusable
)

// Request is a message from the client.
type Request struct {
	Op string `json:"op"`
	// Spec is the run of a "start", as pkg/local made it.
	Spec *run.Spec `json:"spec,omitempty"`
	// Stdin (start): the command's stdin is the descriptor sent with the request; false is /dev/null.
	Stdin bool `json:"stdin,omitempty"`
	// Live (start) asks for "output" events with the sanitized text as it arrives.
	Live bool `json:"live,omitempty"`
	// Reuse (start) offers the supervisor for another run after this one: the client takes it back if the
	// done event says reusable. Only without Stdin and a task.
	Reuse bool `json:"reuse,omitempty"`
	// Quiet (start): the client waits for the run's end only ([Pool.Run]), so no "started" event is sent:
	// one wake of the client fewer, while the command runs.
	Quiet bool `json:"quiet,omitempty"`
	// KillGrace of a "cancel", nanoseconds: the time between SIGTERM and SIGKILL for this cancel when
	// the client's cancel says how long (its own caller went away: [ClientGoneGrace], reference §11); absent,
	// the spec's.
	KillGrace *time.Duration `json:"killGrace,omitempty"`
}

// Event is a message from the supervisor.
type Event struct {
	Op   string `json:"op"`
	Pid  int    `json:"pid,omitempty"`  // started
	Text string `json:"text,omitempty"` // output
	// Output: the sink's counts of the whole stream at Text's end, and the live text the relay's queue
	// dropped just before Text (run.LiveText).
	TotalBytes int64         `json:"totalBytes,omitempty"`
	TotalLines int64         `json:"totalLines,omitempty"`
	Skipped    int64         `json:"skipped,omitempty"`
	Outcome    *run.Outcome  `json:"outcome,omitempty"` // done
	Summary    *sink.Summary `json:"summary,omitempty"` // done
	Error      string        `json:"error,omitempty"`   // done: the command could not run at all
	// Kind names the sentinel the error wraps: "shell" (run.ErrShellNotFound), "wrapper"
	// (run.ErrWrapperNotFound), "sandbox" (sandbox.ErrUnavailable: the stage could not confine, nothing
	// ran), "retired" (a reused supervisor that runs nothing more: nothing ran, the
	// client starts the run on a new one), or "".
	Kind string `json:"kind,omitempty"`
	// Reusable (done): the supervisor waits for the client's next start request instead of exiting.
	Reusable bool `json:"reusable,omitempty"`
}
