// Package executor is the seam between what a command is and where it runs (docs/architecture.md, "The
// seam"). The service (pkg/service) settles a command's own half and hands a request.Command to an
// [Executor]; everything about the place — the shell, the working directory and `~`, the base environment and
// rc snapshot, sessions, artifacts, task records, process ids, liveness and kill — is the executor's. The
// local one is pkg/local; a target (ssh://, docker://, …) is pkg/target, registered by its URI scheme.
//
// Tasks, sessions and artifacts are capabilities an executor declares: nil means it has none, and the
// service says so as an error result. Task ids and session names are strings; nothing outside an executor
// sees a pid it could signal or a path it could open on the place's behalf.
package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// Observer receives the sanitized output of a run as it arrives, with the exact counts of the whole stream
// at each piece's end (a live terminal view, rpc stream updates, MCP progress), from one goroutine. A run
// with a head or tail limit streams nothing: the view would show what the limit hides.
type Observer func(run.LiveText)

// Executor runs commands at one place. Run never fails: every problem (a cwd that does not exist, no shell,
// a lost connection) is a result, status error, shaped by the executor with the place's facts (cwd, shell).
// c.Resolved is set (the service settled it). Cancelling ctx kills the command's tree as a cancel; a ctx
// already cancelled when Run is called starts nothing and gives a cancelled result.
type Executor interface {
	Run(ctx context.Context, c request.Command, obs Observer) result.Result
	// Tasks, Sessions and Artifacts are the executor's capabilities, nil when it has none.
	Tasks() Tasks
	Sessions() Sessions
	Artifacts() Artifacts
	// Close releases what the executor holds (spare supervisors, a connection); the tasks it started go on.
	Close() error
}

// Tasks runs commands in the background and reaches them again by id (docs/reference.md §8). The errors of
// Output, Kill and Wait come with the error result the CLI prints (an unknown id: tasks.ErrorResult).
type Tasks interface {
	// Start runs c (c.Resolved.Task set) as a task and returns once it runs: status running, the task id.
	// A task with Yield runs in the foreground until then, ctx's cancel reaching it.
	Start(ctx context.Context, c request.Command) result.Result
	// Output is what task id printed since reader's previous read, waiting up to wait for something new.
	// deliver, when set, is given the result before the reader moves past it: when it fails (a closed
	// stdout), the reader stays, and the next read gives the same text again; its error is returned.
	Output(ctx context.Context, id, reader string, wait time.Duration, maxBytes int,
		deliver func(result.Result) error) (result.Result, error)
	// Input writes in to task id's input (a task started with a stdin pipe or a terminal, docs/reference.md
	// §14), waits up to wait for its output to settle, and returns the default reader's read with the
	// terminal's screen. Input to an ended task, one without input, or a refusal (the 1 MiB bound, an unknown
	// key) is an error with its result.
	Input(ctx context.Context, id string, in console.Request, wait time.Duration, maxBytes int) (result.Result, error)
	// Kill sends sig to the task's tree, then ends it; it returns once the tree is gone (or after the
	// executor's limit), with killed saying whether it is.
	Kill(ctx context.Context, id string, sig syscall.Signal) (result.Result, error)
	// Wait is the task's final result, or its running status after timeout (0: no limit).
	Wait(ctx context.Context, id string, timeout time.Duration) (result.Result, error)
	// List is the rows `agentbash tasks --json` prints: recent tasks, or all kept ones.
	List(ctx context.Context, all bool) ([]tasks.Row, error)
	// Prune removes ended tasks older than age and returns their ids.
	Prune(ctx context.Context, age time.Duration) ([]string, error)
}

// Sessions lists, shows and removes the place's sessions (docs/reference.md §7.1).
type Sessions interface {
	List(ctx context.Context) ([]session.Info, error)
	Show(ctx context.Context, name string, values bool) (session.Info, error)
	// Remove waits up to wait for the session's running command, then removes it (session.ErrBusy if it
	// still runs).
	Remove(ctx context.Context, name string, wait time.Duration) error
	// Discard removes a session its owner (an MCP connection) is done with, without waiting.
	Discard(ctx context.Context, name string) error
}

// Artifacts reads the place's artifacts (docs/reference.md §3.6).
type Artifacts interface {
	// Print writes artifact id to w: sanitized text, or the raw bytes.
	Print(ctx context.Context, w io.Writer, id string, raw bool) error
	// Path is the artifact's absolute path at the place (details.artifactPath).
	Path(ctx context.Context, id string) (string, error)
	List(ctx context.Context) ([]artifact.Info, error)
	Prune(ctx context.Context, age time.Duration) ([]string, error)
}

// ErrUnreachable marks an error of an executor that could not reach its place (a target that refused or lost
// the connection): a face exits 125 for it, as for a run that could not start, not 1 as for an unknown id.
var ErrUnreachable = errors.New("the place cannot be reached")

// Opener makes the executor for a target URI of its scheme (the URI whole, as given). The error is a
// sentence naming the URI and what is wrong with it.
type Opener func(uri string) (Executor, error)

var (
	mu      sync.Mutex
	openers = map[string]Opener{}
)

// Register makes scheme ("ssh", "docker", …) open through o. The binary's main package registers the
// executors it links; registering a scheme twice panics.
func Register(scheme string, o Opener) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := openers[scheme]; dup {
		panic("executor: scheme registered twice: " + scheme)
	}
	openers[scheme] = o
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for s := range openers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Open makes the executor for uri through its scheme's Opener. The error names the URI: an unknown scheme
// lists the known ones.
func Open(uri string) (Executor, error) {
	scheme, _, ok := strings.Cut(uri, "://")
	mu.Lock()
	o := openers[scheme]
	mu.Unlock()
	if !ok || o == nil {
		kinds := []string{"local"}
		for _, s := range Schemes() {
			kinds = append(kinds, s+"://…")
		}
		return nil, fmt.Errorf("target %q: unknown kind of target (want %s)", uri, strings.Join(kinds, ", "))
	}
	return o(uri)
}
