// Package run is the supervisor seam and the supervision of one command (reference §3.7, §11).
//
// [Starter] is the seam below an executor (docs/architecture.md, "The seam"): pkg/local only sees [Spec],
// [Streams], [Process] and [Outcome], so the supervisors that run its commands (pkg/supervisor, a
// supervisor process per run) can be replaced, by a test double or by another way of running them.
//
// A [Spec] is one command as plain data: it travels to the supervisor as it is, and the loop runs it there.
// What stays in a process (the command's stdin, where its output goes, the callbacks) is apart, in [Streams].
//
// [Loop] is the supervision loop itself, in the calling process: the shell in its own session and
// process group, one pipe for stdout and stderr, a wall-clock timeout with SIGTERM → grace → SIGKILL of
// every descendant, and a bounded drain after the shell exits. It finds descendants from its own process
// down, so it runs one command per process at a time: the supervisor process is where it runs.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/sink"
)

// Spec is one command as it travels from the client to its supervisor (JSON, as it is) and as the [Loop]
// runs it there. What may hold any bytes (the command, paths, the environment) is a [Raw]: it reaches the
// shell byte for byte. Durations are a time.Duration, nanoseconds on the wire.
type Spec struct {
	Command Raw `json:"command"` // the script given to `Shell -c`
	Shell   Raw `json:"shell"`   // the shell's absolute path, as [Starter.Resolve] found it
	Dir     Raw `json:"dir"`     // the absolute working directory, as Resolve found it; it must exist
	// Env holds KEY=VALUE layers put over the target's own base environment and the non-interactive
	// defaults ([Environ]), later entries winning; the caller's whole environment is not shipped.
	Env RawList `json:"env"`
	// Wrapper, when set, is an argv the shell runs under: Wrapper[0] (looked up in PATH) is started with
	// the rest of Wrapper, then the shell and its arguments (`nice -n 10 bash -c <command>`).
	Wrapper RawList `json:"wrapper,omitempty"`
	// Timeout is the wall-clock limit; it always applies and must be positive.
	Timeout time.Duration `json:"timeout"`
	// KillGrace is the time between SIGTERM and SIGKILL on timeout or cancel.
	KillGrace time.Duration `json:"killGrace"`
	// Output configures the sink that keeps what the command prints, and its artifact.
	Output Output `json:"output"`
	// Task, when set, runs the command as a background task (detached; see [Task]). The loop then keeps
	// what the shell leaves running: it is still listed in [Outcome.LeftoverPids], without the warning a
	// foreground run gets about it.
	Task *Task `json:"task,omitempty"`
	// Sandbox, when set, confines the shell and everything it starts (docs/architecture.md, "The sandbox"):
	// the shell starts through pkg/sandbox's stage. A stage that cannot confine runs nothing, and the run
	// fails with an error wrapping sandbox.ErrUnavailable.
	Sandbox *sandbox.Confinement `json:"sandbox,omitempty"`
	// Interactive, when set, gives the command an input end held by the loop (docs/reference.md §14): a
	// pipe as its stdin, or a pseudo-terminal as its stdin, stdout, stderr and controlling terminal, with
	// TERM=xterm-256color under the Env layers. [Streams.Console] gets it; [Outcome.Screen] is the
	// terminal's last screen. Streams.Stdin must be nil.
	Interactive *console.Options `json:"interactive,omitempty"`
}

// Streams are what goes with a [Spec] in one process and never travels: the command's input, where its
// output goes, and who hears of it. The client ([Starter.Start]) reads Stdin and Live; the loop in the
// supervisor ([Loop.Run]) reads Stdin, Out, LimitMet and Started.
type Streams struct {
	// Stdin is the command's standard input; nil means /dev/null (reference §3.1).
	Stdin io.Reader
	// Live, when set, receives the sanitized output as it arrives (text mode on a terminal, rpc stream
	// updates, MCP progress), from one goroutine; a slow Live never slows the command.
	Live func(LiveText)
	// Out receives the merged stdout and stderr stream in order. When a Write returns an error, the loop
	// stops reading and closes the pipe, as a reader such as `head` would: the writers get SIGPIPE
	// ([Outcome.OutputClosed]).
	Out io.Writer
	// LimitMet, if set, is asked after each Write to Out whether Out has met a limit (a head limit:
	// what is shown is settled). From the first true the loop reads on for at most [LimitReadOn] more —
	// so a finite command still ends by itself and its counts are exact — and then closes the pipe, as
	// `head` would (reference §3.2). Out bounds what it takes in bytes by refusing a Write.
	LimitMet func() bool
	// Started, if set, is called with the shell's pid once it runs.
	Started func(pid int)
	// Console, if set, is given the input end of an interactive run ([Spec.Interactive]) just before
	// Started, while the shell runs; the console ends with the run.
	Console func(*console.Console)
	// ProxyDenied, if set, is called after each refusal of the sandbox's proxy (network proxy) with
	// everything it refused so far, from the proxy's goroutines while the run lasts: it must not block.
	// [Outcome.ProxyDenied] has the whole list at the end.
	ProxyDenied func([]proxy.Denial)
}

// Seconds is s seconds as a duration, the one conversion of the seconds that travel on every wire (a
// settled command, a task record, an rpc or MCP wait): not a number or ≤ 0 is 0, above 0 at least a
// nanosecond, and past a century is a century (the JSON numbers a caller sends may be huge).
func Seconds(s float64) time.Duration {
	const century = 100 * 365 * 24 * time.Hour
	switch {
	case !(s > 0):
		return 0
	case s >= century.Seconds():
		return century
	}
	// A positive wait below a nanosecond must not become 0, which is "no limit" to a task store's Wait.
	return max(time.Duration(s*float64(time.Second)), time.Nanosecond)
}

// ClientGoneGrace is the time between SIGTERM and SIGKILL of a run's tree once its client is gone (a
// supervisor's client that exited or was SIGKILLed, an rpc whose input ended, an MCP client that went
// away): the tree is gone within a second, one that ignores SIGTERM included (reference §11).
const ClientGoneGrace = 500 * time.Millisecond

// KillGraceCause is a cancel cause (context.Cause) that says how long its cancel's kill grace is, the time
// between SIGTERM and SIGKILL, instead of the run's [Spec.KillGrace]: a client that went away gets a
// short one (reference §11). It is found with errors.As, so a cause that wraps one keeps its grace.
type KillGraceCause interface {
	error
	KillGrace() time.Duration
}

// KillSignalCause is a cancel cause that names the signal the tree gets first instead of SIGTERM (`agentbash
// kill --signal` of a task, reference §8). It is found with errors.As.
type KillSignalCause interface {
	error
	KillSignal() unix.Signal
}

// Outcome is how a run ended. Timeout and cancel are outcomes, not errors. Its JSON (in every run's done
// event, in a task's record) leaves zero fields out, as [sink.Summary]'s does.
type Outcome struct {
	// ExitCode is the shell's exit status, or -1 when it died of a signal or has no status.
	ExitCode int `json:",omitempty"`
	// Signal names the signal that killed the shell ("SIGKILL"), or "" when it exited.
	Signal string `json:",omitempty"`
	// SignalNumber is the number of Signal, 0 when none.
	SignalNumber int `json:",omitempty"`
	// TimedOut is set when the timeout fired and the command was killed.
	TimedOut bool `json:",omitempty"`
	// Cancelled is set when the context was cancelled while the command ran and it was killed.
	Cancelled bool `json:",omitempty"`
	// OutputClosed is set when the loop closed the pipe while the shell still ran, because Streams.Out
	// refused a Write or LimitReadOn had passed since LimitMet: the writers get SIGPIPE, as under `| head`.
	OutputClosed bool `json:",omitempty"`
	// OutputIncomplete is set when reading stopped before the end of the stream (EOF): OutputClosed, or
	// the bounded drain after the shell exited stopped while a leftover process still held the pipe.
	// What Output received is then a prefix of what the command wrote, and counts over it are lower
	// bounds.
	OutputIncomplete bool `json:",omitempty"`
	// LeftoverPids lists processes the command started that were still running after a normal exit.
	// They are not killed (reference §3.7).
	LeftoverPids []int `json:",omitempty"`
	// Duration is the wall-clock time from start to the end of the drain.
	Duration time.Duration `json:",omitempty"`
	// Warnings are best-effort problems worth telling the caller (e.g. leftover processes).
	Warnings []string `json:",omitempty"`
	// Screen is what the terminal showed at the end, for a run with one ([Spec.Interactive] TTY).
	Screen *screen.Screen `json:"screen,omitempty"`
	// ProxyDenied is what the sandbox's proxy refused during the run (network proxy, [Spec.Sandbox]), in the
	// order first refused.
	ProxyDenied []proxy.Denial `json:"proxyDenied,omitempty"`
	// Summary is what the sink saw (set by a [Starter]'s Process; [Loop] leaves it to the caller's sink,
	// and the supervisor sends it apart, so it is left out of the JSON when empty).
	Summary sink.Summary `json:",omitzero"`
}

// Starter starts commands on one place: the local one starts a supervisor process per run
// (supervisor.Pool); a test double runs the place's stages without processes. It is named for what it
// does, below an executor (pkg/executor's Executor, which runs a whole request.Command on a place).
type Starter interface {
	// Resolve finds, on the starter's own place, the shell and the working directory a request names:
	// shell "" is the place's default shell (bash, else /bin/sh), dir "" its current directory, `~`
	// its home. The errors are *DirError (with the texts of reference §3.4) and ErrShellNotFound; the Target
	// is filled as far as it could be resolved, for the result.
	Resolve(shell, dir string) (Target, error)
	// Start starts spec with s and returns once the command really runs, or the error that kept it from
	// starting (ErrShellNotFound, ErrWrapperNotFound, a command no shell can take). Cancelling ctx while
	// the command runs kills its tree as a cancel (TERM → KillGrace → KILL, or what a [KillGraceCause] or
	// [KillSignalCause] says); the Process still reports how it ended.
	Start(ctx context.Context, spec Spec, s Streams) (Process, error)
}

// Target is where a command runs, as the starter resolved it.
type Target struct {
	Shell string // the shell's absolute path on the target
	Dir   string // the absolute working directory, cleaned, not symlink-resolved (reference §3.4)
}

// LiveText is a piece of a run's live output (Streams.Live): sanitized text as the sink passes it on (a '\r'
// where a CR discarded the line's text: sink.LiveTail applies those marks), with the sink's exact counts of
// the whole stream at the text's end. The relay to a slow client drops the oldest text when its queue is
// full: Skipped is then the bytes left out just before Text, which does not continue the text before it.
type LiveText struct {
	Text                   string
	TotalBytes, TotalLines int64
	Skipped                int64
}

// Output configures a run's sink and artifact (reference §3.6, §3.8).
type Output struct {
	MaxBytes         int   `json:"maxBytes"`         // the shown window, bytes; 0 is the default
	Head             int   `json:"head"`             // line limit on the whole stream, -1 for none
	Tail             int   `json:"tail"`             // line limit on the whole stream, -1 for none
	ArtifactDir      Raw   `json:"artifactDir"`      // absolute
	ArtifactMaxBytes int64 `json:"artifactMaxBytes"` // cap on one artifact, bytes; 0 is the default
	// Command and Cwd are recorded in the artifact's metadata (`artifact list`).
	Command string `json:"command"`
	Cwd     string `json:"cwd"`
	// Keep opens the artifact at the start and keeps it: the whole stream, growing (a task's output).
	Keep bool `json:"keep,omitempty"`
}

// Task makes a run a background task (reference §8): its supervisor is detached — it ignores the end of its
// client, runs the command to its end and records it under ID in the task store at Dir (pkg/tasks),
// whose record the client created.
type Task struct {
	Dir Raw    `json:"dir"` // absolute
	ID  string `json:"id"`
	// Attached keeps the run in the foreground until the client detaches it (`run --yield`): until then
	// the client's end (a Ctrl-C, a SIGKILL) kills the tree as for any run (reference §11).
	Attached bool `json:"attached,omitempty"`
}

// Process is a started command, as a [Starter] returns it.
type Process interface {
	// Pid is the shell's process id on the target.
	Pid() int
	// Wait blocks until the command ended and its output was read, and returns how it ended, with the
	// sink's summary. The error is non-nil only when the backend lost the command (a supervisor that
	// died): the outcome is then unknown.
	Wait() (Outcome, error)
}

// Runner is a [Starter] that can also run a command to its end in one call, cheaper than Start and Wait
// when nobody needs the process meanwhile (a supervisor then need not report the shell's start).
type Runner interface {
	Starter
	// Run is Start then Wait: the outcome, or the error of a run that could not start or was lost.
	Run(ctx context.Context, spec Spec, s Streams) (Outcome, error)
}

// Run starts spec with s on st and waits for it: a run to completion (in one call when st is a [Runner]).
func Run(ctx context.Context, st Starter, spec Spec, s Streams) (Outcome, error) {
	if r, ok := st.(Runner); ok {
		return r.Run(ctx, spec, s)
	}
	p, err := st.Start(ctx, spec, s)
	if err != nil {
		return Outcome{}, err
	}
	return p.Wait()
}

// Drain bounds, after the shell exits (README, "A 30-second tour"): stop reading after DrainSilence without data
// (the pipe empty for that long: data waiting in it is never silence, however late the reader comes back to
// it), and after DrainMax in all cases, so a background job holding the pipe cannot hang the call.
const (
	DrainSilence = 250 * time.Millisecond
	DrainMax     = 2 * time.Second
)

// LimitReadOn is how long the loop goes on reading after [Streams.LimitMet] first says yes, before it
// closes the pipe (reference §3.2: 250 ms): long enough for a finite command to end by itself, short enough
// that a slow or endless producer (`yes`, a `sleep` loop) does not keep the call waiting.
const LimitReadOn = 250 * time.Millisecond

// ErrShellNotFound is returned (wrapped) when the shell cannot be found or executed.
var ErrShellNotFound = errors.New("shell not found")

// ErrWrapperNotFound is returned (wrapped) when the wrapper program (shell.wrapper) cannot be found or
// executed.
var ErrWrapperNotFound = errors.New("wrapper program not found")

// openStdin returns the command's stdin and a function that closes what was opened here. Without one it
// is /dev/null, opened for each run: an open file description carries state a command can set and that
// outlives it while another holds the description (a flock or OFD lock on its stdin, O_NONBLOCK), so one
// shared by the runs of a process would pass that on to the next command, and keep /dev/null locked for
// every program on the machine while the process lives.
func openStdin(r io.Reader) (io.Reader, func(), error) {
	if r != nil {
		return r, func() {}, nil
	}
	f := takeNull()
	if f == nil {
		var err error
		if f, err = openDevNull(); err != nil {
			return nil, nil, err
		}
	}
	return f, func() { f.Close() }, nil
}

// openDevNull opens /dev/null for reading as a plain blocking descriptor: os.Open would try the runtime's
// poller (which refuses /dev/null) and set and clear O_NONBLOCK on the way, five system calls more for a
// file only the shell reads.
func openDevNull() (*os.File, error) {
	for {
		fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue // as os.Open
		}
		if err != nil { // the error os.Open gave, wrapped as before
			return nil, fmt.Errorf("open %s: %w", os.DevNull, &os.PathError{Op: "open", Path: os.DevNull, Err: err})
		}
		return os.NewFile(uintptr(fd), os.DevNull), nil
	}
}

// next holds what PrepareNext made for the next run: its stdin (/dev/null) and the two ends of its output
// pipe, each nil until made and again once a run took it.
var next struct {
	sync.Mutex
	null, r, w *os.File
}

// PrepareNext makes the next run's /dev/null and output pipe now, so that run does not make them on its
// way to its shell: a reused supervisor calls it after a run's done, while its client reads the result
// (some 45 µs of a start, docs/benchmarks.md "rpc per command"). They are the same as a run makes for
// itself — a fresh open file description of /dev/null (see openStdin) and a fresh pipe — made earlier,
// and each is taken by the next run only: one that needs neither (a terminal, stdin of its own, a task's
// console) has them closed as it starts (dropNext), so nothing made ahead outlives the run after it. What
// cannot be made is left to the run, which then makes its own and reports the error.
func PrepareNext() {
	next.Lock()
	defer next.Unlock()
	if next.null == nil {
		next.null, _ = openDevNull()
	}
	if next.r == nil {
		if r, w, err := outputPipe(); err == nil {
			next.r, next.w = r, w
		}
	}
}

// takeNull takes the /dev/null PrepareNext made, nil when there is none.
func takeNull() *os.File {
	next.Lock()
	defer next.Unlock()
	f := next.null
	next.null = nil
	return f
}

// takePipe takes the output pipe PrepareNext made, nil ends when there is none.
func takePipe() (r, w *os.File) {
	next.Lock()
	defer next.Unlock()
	r, w = next.r, next.w
	next.r, next.w = nil, nil
	return r, w
}

// dropNext closes what PrepareNext made that the run starting now did not take.
func dropNext() {
	next.Lock()
	defer next.Unlock()
	for _, f := range []*os.File{next.null, next.r, next.w} {
		if f != nil {
			f.Close()
		}
	}
	next.null, next.r, next.w = nil, nil, nil
}
