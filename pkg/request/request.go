// Package request is the one request type of agentbash: a [Command] goes from a face (the `run` flags, an rpc
// line, an MCP tool call) through the service (pkg/service) to the place it runs (an executor: pkg/local on
// this machine, pkg/target elsewhere), and over every wire between them, with one version ([Protocol]).
//
// A Command has two halves (docs/architecture.md, "The seam"). What the caller asked for (the fields with the
// JSON names of rpc and MCP arguments) is validated once ([Command.Validate]); the service then settles the
// command's own settings — the timeout clamp, normalization, interception, prefix, wrapper, limits — into
// [Resolved], which the place takes as it is. A target's agentbash that receives a Command with Resolved set
// normalizes and intercepts nothing again. Seconds are float64 on every wire; a duration is made once, where
// the command runs.
package request

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"syscall"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// Protocol is the version of the request and its wire (rpc lines, the target handshake). A change that an
// older agentbash would misread raises it; a target speaking another version is refused, naming both.
const Protocol = 1

// Timeouts (docs/reference.md §3.5), seconds.
const (
	DefaultTimeout = 300.0
	MinTimeout     = 1.0
	MaxTimeout     = 3600.0
)

// Limits of a command's settings, the same for every face and every wire.
const (
	// MaxWindowBytes bounds the in-memory window: memory stays small whatever a config or a sender says.
	MaxWindowBytes = 64 << 20
	// MaxKillGrace bounds the grace, seconds, so a command that ignores SIGTERM cannot outlive its timeout by
	// long.
	MaxKillGrace = 60.0
)

// ClampTimeout clamps a requested timeout (seconds) to [MinTimeout, MaxTimeout]; zero or negative values
// become MinTimeout (docs/reference.md §3.5). clamped reports whether the value changed.
func ClampTimeout(requested float64) (effective float64, clamped bool) {
	effective = min(max(requested, MinTimeout), MaxTimeout)
	return effective, effective != requested
}

// Command is one command and how to run it. The JSON names of the caller's fields are the arguments of rpc
// and MCP requests; a field left out takes the server's default.
type Command struct {
	Command     string            `json:"command"`               // as given (docs/reference.md §3.1)
	Cwd         string            `json:"cwd,omitempty"`         // "" is the place's current directory; ~ expands there
	Timeout     *float64          `json:"timeout,omitempty"`     // seconds; clamped to [1, 3600]
	Head        *int              `json:"head,omitempty"`        // explicit line limits; they win over extracted ones
	Tail        *int              `json:"tail,omitempty"`        //
	Env         map[string]string `json:"env,omitempty"`         // over the place's environment layers
	NoNormalize bool              `json:"noNormalize,omitempty"` // do not extract head/tail stages
	Intercept   *bool             `json:"intercept,omitempty"`   // run the interceptor
	Tools       []string          `json:"tools,omitempty"`       // the agent's active tools, for this request
	Session     string            `json:"session,omitempty"`     // the session whose state it runs in; "" is none
	// Sandbox is the sandbox the caller asks for (docs/reference.md §13): a mode string or an object with the
	// config keys; it can only tighten the server's own policy. nil is the server's.
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// StdinMode "pipe" gives a task a pipe as its stdin that `agentbash input` writes to (the JSON field
	// "stdin"); TTY a pseudo-terminal of Cols×Rows (0: 120×40) that is its stdin, stdout, stderr and
	// controlling terminal (docs/reference.md §14).
	StdinMode string `json:"stdin,omitempty"`
	TTY       bool   `json:"tty,omitempty"`
	Cols      int    `json:"cols,omitempty"`
	Rows      int    `json:"rows,omitempty"`
	// StartCwd is where the command runs when it names no cwd and its session has none yet: a server's --cwd is
	// the starting directory of its requests and sessions, not an explicit cwd of each. "" is the current
	// directory of the place.
	StartCwd string `json:"-"`
	// Stdin is the command's stdin; nil is /dev/null. It does not travel to a target.
	Stdin io.Reader `json:"-"`

	// Resolved is the command's own half as the service settled it; nil until then. On the wire to a target
	// it is the field "resolved".
	Resolved *Resolved `json:"resolved,omitempty"`
}

// Resolved is what the service settled for one command where the caller is: everything about the command
// itself, nothing about the place. Strings that may hold any bytes (the command, paths, environment entries)
// are run.Raw, so they cross JSON byte for byte.
type Resolved struct {
	Protocol int `json:"protocol"`
	// Command is the command as given, outer whitespace trimmed (the result's details.command); Run is what the
	// shell runs: normalized, with shell.prefix before it.
	Command run.Raw `json:"command"`
	Run     run.Raw `json:"run"`
	// NormalizedCommand is the command after normalization, without the prefix (details.normalizedCommand).
	NormalizedCommand run.Raw `json:"normalizedCommand"`
	Cwd               run.Raw `json:"cwd,omitempty"`      // the request's cwd, "" for none
	StartCwd          run.Raw `json:"startCwd,omitempty"` // see Command.StartCwd
	// Env is the request's own KEY=VALUE layers (--env, then the request's env), put over the place's base
	// environment and its shell.env; the caller's own environment never travels.
	Env     run.RawList `json:"env,omitempty"`
	Wrapper run.RawList `json:"wrapper,omitempty"` // shell.wrapper: an argv before the shell
	// Timeout is the effective wall-clock limit, seconds; TimeoutRequested the request's when it was clamped.
	Timeout          float64  `json:"timeout"`
	TimeoutRequested *float64 `json:"timeoutRequested,omitempty"`
	KillGrace        float64  `json:"killGrace"` // seconds between SIGTERM and SIGKILL
	Head             int      `json:"head"`      // effective line limits, -1 for none
	Tail             int      `json:"tail"`
	MaxBytes         int      `json:"maxBytes"`         // the shown window, bytes
	ArtifactMaxBytes int64    `json:"artifactMaxBytes"` // cap on one artifact, bytes; 0 is the place's default
	NonZeroExit      string   `json:"nonZeroExit"`      // result.NonZeroError or result.NonZeroReport
	Warnings         []string `json:"warnings,omitempty"`
	// Blocked is the interceptor's verdict: the place shapes the blocked result and runs nothing.
	Blocked *intercept.Block `json:"blocked,omitempty"`
	// Refused is why the service will not run the command (a bad argument): the place shapes the error
	// result with its facts (cwd, shell) and runs nothing.
	Refused string `json:"refused,omitempty"`
	// Task, when set, makes the command a background task.
	Task *TaskOptions `json:"task,omitempty"`
	// Interactive, when set, gives the command an input end (a stdin pipe or a terminal, docs/reference.md §14).
	Interactive *console.Options `json:"interactive,omitempty"`
	// Sandbox is the policy the command runs under, the server's tightened by the request's, paths as written
	// (the place resolves them: `~` is its home); nil when the command is not sandboxed.
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// SandboxFloor is the server's own sandbox when the request tightened it (nil otherwise): what the
	// request could have run under anyway. A session's first command confined more than it keeps no state
	// (session.Lease.RunsUnder).
	SandboxFloor *sandbox.Policy `json:"sandboxFloor,omitempty"`
	// Workspace bounds where a workspace-write command's working directory is writable as its workspace:
	// "" for no bound (a command line's --cwd is its workspace); a server's requests get where the server
	// starts them ("." is the place's current directory), so a request's cwd outside it is not writable and a
	// model cannot make any directory writable by naming it as its cwd (docs/reference.md §13).
	Workspace run.Raw `json:"workspace,omitempty"`
}

// TaskOptions is how a command runs as a background task (docs/reference.md §8).
type TaskOptions struct {
	// Timeout is the task's own timeout, seconds (already clamped); 0 is none.
	Timeout float64 `json:"timeout,omitempty"`
	// MaxLifetime is tasks.maxLifetime, seconds; 0 is no limit.
	MaxLifetime float64 `json:"maxLifetime,omitempty"`
	// Yield, when positive, runs the command in the foreground for that many seconds first: one that ends
	// within them is a plain run, one still running goes on as a task.
	Yield float64 `json:"yield,omitempty"`
}

// Validate checks what JSON types cannot say about a command: a command to run, a session name, line limits
// ≥ 0, environment names and values an environment can carry. validName is the session-name rule (the place
// owns sessions, the name's form is everyone's). The error names every bad field, joined.
func (c *Command) Validate(validName func(string) bool, nameRule string) error {
	var errs []error
	if normalize.Trim(c.Command) == "" {
		errs = append(errs, errors.New("command: required, a non-empty string of shell text"))
	}
	if c.Session != "" && !validName(c.Session) {
		errs = append(errs, fmt.Errorf("session %q: %s", c.Session, nameRule))
	}
	for _, f := range []struct {
		name string
		n    *int
	}{{"head", c.Head}, {"tail", c.Tail}} {
		if f.n != nil && *f.n < 0 {
			errs = append(errs, fmt.Errorf("%s: want a line count ≥ 0, got %d", f.name, *f.n))
		}
	}
	if c.StdinMode != "" && c.StdinMode != StdinPipe {
		errs = append(errs, fmt.Errorf("stdin: want %q (a pipe that `input` writes to) or nothing, got %q", StdinPipe, c.StdinMode))
	}
	if c.TTY && c.StdinMode != "" {
		errs = append(errs, errors.New("stdin: a terminal (tty) is the command's stdin already: give tty or stdin \"pipe\", not both"))
	}
	if err := c.Interactive().Check(); err != nil {
		errs = append(errs, err)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			errs = append(errs, fmt.Errorf("env: bad variable name %q (no '=', not empty)", k))
		}
		if strings.ContainsRune(c.Env[k], 0) {
			errs = append(errs, fmt.Errorf("env: the value of %s holds a NUL byte, which no environment can carry", k))
		}
	}
	return errors.Join(errs...)
}

// StdinPipe is the one value of the "stdin" field: a pipe that `agentbash input` writes to.
const StdinPipe = "pipe"

// Interactive is the input end c asks for: nil without one (no tty, no stdin pipe, no size).
func (c *Command) Interactive() *console.Options {
	if !c.TTY && c.StdinMode == "" && c.Cols == 0 && c.Rows == 0 {
		return nil
	}
	return &console.Options{TTY: c.TTY, Cols: c.Cols, Rows: c.Rows}
}

// Validate checks a settled half that came from another agentbash (rpc's "resolved"): the sender is trusted
// no more than any caller, so every value must be one this agentbash's own service could have settled —
// the protocol, the timeout within [MinTimeout, MaxTimeout], the grace, window and limits within their
// bounds, a known non-zero-exit style, a command to run unless it is blocked or refused, and a sandbox policy
// that passes its check.
func (r *Resolved) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("resolved."+format, a...)) }
	if r.Protocol != Protocol {
		bad("protocol: this agentbash speaks %d, got %d", Protocol, r.Protocol)
	}
	if !(r.Timeout >= MinTimeout && r.Timeout <= MaxTimeout) {
		bad("timeout: want seconds from %v to %v, got %v", MinTimeout, MaxTimeout, r.Timeout)
	}
	if !(r.KillGrace >= 0 && r.KillGrace <= MaxKillGrace) {
		bad("killGrace: want seconds from 0 to %v, got %v", MaxKillGrace, r.KillGrace)
	}
	if r.MaxBytes < 1 || r.MaxBytes > MaxWindowBytes {
		bad("maxBytes: want 1 to %d bytes, got %d", MaxWindowBytes, r.MaxBytes)
	}
	if r.ArtifactMaxBytes < 0 {
		bad("artifactMaxBytes: want bytes ≥ 0, got %d", r.ArtifactMaxBytes)
	}
	if r.Head < -1 || r.Tail < -1 {
		bad("head, tail: want a line count ≥ 0, or -1 for none")
	}
	if r.NonZeroExit != "error" && r.NonZeroExit != "report" {
		bad("nonZeroExit: want error or report, got %q", r.NonZeroExit)
	}
	if normalize.Trim(string(r.Command)) == "" || (r.Run == "" && r.Blocked == nil && r.Refused == "") {
		bad("command, run: required, the command as given and what the shell runs")
	}
	if t := r.Task; t != nil && !(t.Timeout >= 0 && t.Timeout <= MaxTimeout && t.MaxLifetime >= 0 && t.Yield >= 0) {
		bad("task: want a timeout from 0 to %v seconds, a maxLifetime and a yield ≥ 0", MaxTimeout)
	}
	if err := r.Interactive.Check(); err != nil {
		bad("interactive: %v", err)
	}
	if r.Sandbox != nil {
		if err := r.Sandbox.Check(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				bad("%s", line) // each names its key: resolved.sandbox.mode: …
			}
		}
	}
	return errors.Join(errs...)
}

// Clone copies c deeply, so a request decoded over a clone of the defaults cannot change them.
func (c Command) Clone() Command {
	out := c
	if c.Timeout != nil {
		out.Timeout = new(*c.Timeout)
	}
	if c.Head != nil {
		out.Head = new(*c.Head)
	}
	if c.Tail != nil {
		out.Tail = new(*c.Tail)
	}
	if c.Intercept != nil {
		out.Intercept = new(*c.Intercept)
	}
	out.Env = maps.Clone(c.Env)
	out.Tools = slices.Clone(c.Tools)
	out.Sandbox = c.Sandbox.Clone()
	if c.Resolved != nil {
		r := *c.Resolved
		r.Env, r.Wrapper, r.Warnings = slices.Clone(r.Env), slices.Clone(r.Wrapper), slices.Clone(r.Warnings)
		if r.Task != nil {
			r.Task = new(*r.Task)
		}
		r.Sandbox, r.SandboxFloor = r.Sandbox.Clone(), r.SandboxFloor.Clone()
		if r.Interactive != nil {
			r.Interactive = new(*r.Interactive)
		}
		out.Resolved = &r
	}
	return out
}

// SignalCause is the cancel cause a face attaches to the context when agentbash itself gets a signal; the
// result then says cancelled and the exit status is 128+N (docs/reference.md §3.11).
type SignalCause struct{ Signal syscall.Signal }

func (c SignalCause) Error() string { return "cancelled by " + c.Signal.String() }
