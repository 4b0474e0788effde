package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// Loop is the supervision loop: it runs a [Spec] as a local process, `Shell -c Command` in a new session,
// and supervises it to its end in this process (reference §3.7).
type Loop struct{}

// reapWait bounds the wait for a shell that was sent SIGKILL; only a process stuck in the kernel can take
// longer, and then the outcome has no exit status rather than a hung call.
const reapWait = 5 * time.Second

// running guards the one Loop run of a process: descendants are found from this process down (orphans
// are reparented to it as the subreaper), so two commands at once could not be told apart. Runs side by
// side each get a process of their own instead — a supervisor (pkg/supervisor) — so nothing but a misuse
// ever waits here.
var running sync.Mutex

// Prepare does the one-time set-up of a process that runs commands (see prepare) now, so a supervisor can
// do it while it waits for its command; Loop.Run does it anyway.
func Prepare() {
	prepare()
	// os/exec checks once per process whether pidfds work, by forking a child; os.FindProcess does the
	// same check, so it is done here rather than when the command starts.
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

// prepare makes this process the subreaper and closes inherited descriptors to children, once.
var prepare = sync.OnceFunc(func() {
	CloseInheritedDescriptors()
	becomeSubreaper()
})

// reserve reserves spare threads (reserveThreads), once per process, after its first shell started, in
// the background: the command's start does not wait for their creation, and the threads held meanwhile
// must not be the ones the start needs (under a small process limit the fork of the shell then failed). A
// fork bomb needs far longer to reach a limit that binds than the shell takes to start.
var reserve = sync.OnceFunc(reserveThreads)

// CloseInheritedDescriptors makes sure that the processes this one starts see only the descriptors they
// are given (0, 1 and 2 for a command, reference §3.7): every descriptor from 3 up that agentbash inherited
// from its caller (a pipe the caller left open, say) is marked close-on-exec, so it is closed in every
// child. Go opens its own descriptors close-on-exec already, so they keep working, and descriptors a
// child is given on purpose (exec.Cmd's ExtraFiles) are set up after the mark. Call it before the first
// child is started (the shell snapshot included); calls after the first do nothing.
func CloseInheritedDescriptors() { closeInherited() }

var closeInherited = sync.OnceFunc(markInheritedCloseOnExec)

// markEachCloseOnExec sets FD_CLOEXEC on every descriptor from 3 up that dir (/proc/self/fd, /dev/fd)
// lists. The descriptor that reads dir is among them; it is closed anyway.
func markEachCloseOnExec(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
		}
	}
}

// Run starts spec.Command with s and supervises it to the end, in this process. Its environment is
// spec.Env over this process's own ([Environ]). It returns an error only when the command could not be run
// at all (shell not found, cannot fork); everything after the start is an [Outcome]. Runs in one process
// are serialized (see running).
func (Loop) Run(ctx context.Context, spec Spec, s Streams) (Outcome, error) {
	running.Lock()
	defer running.Unlock()
	start := time.Now()
	if spec.Timeout <= 0 {
		return Outcome{}, fmt.Errorf("run: timeout must be positive, got %v", spec.Timeout)
	}
	if err := checkCommand(string(spec.Command)); err != nil {
		return Outcome{}, err
	}
	var con *console.Console
	if spec.Interactive != nil {
		if s.Stdin != nil {
			return Outcome{}, errors.New("run: an interactive run has its own stdin")
		}
		var err error
		if con, err = console.Open(*spec.Interactive); err != nil {
			return Outcome{}, err
		}
		defer con.Close()
	}
	stdin, closeStdin, err := openInput(s.Stdin, con)
	if err != nil {
		return Outcome{}, err
	}
	defer closeStdin()
	pr, pw, err := outputEnds(con)
	dropNext() // what was made ahead for this run and not taken
	if err != nil {
		return Outcome{}, err
	}
	prepare()

	layers := spec.Env
	tty := con != nil && con.TTY()
	if tty {
		layers = append([]string{"TERM=xterm-256color"}, layers...) // under the request's own layers
	}
	cmd, stage, exited, err := spawnShell(spec, lastEnv.of(layers), stdin, pw)
	if err != nil {
		pw.Close()
		pr.Close()
		return Outcome{}, err
	}
	defer stage.End() // the sandbox's proxy ends with the run, whatever happens (End below, as a rule)
	stage.Notify(s.ProxyDenied)
	pw.Close() // the children hold the only write ends now, so EOF means they all closed it
	go reserve()
	pid := cmd.Process.Pid
	var output io.Writer = s.Out
	var hangup func()
	if con != nil {
		con.Started()
		if tty {
			output, hangup = io.MultiWriter(s.Out, con), con.Hangup // the emulator never refuses nor waits
		}
		if s.Console != nil {
			s.Console(con)
		}
	}
	if s.Started != nil {
		s.Started(pid)
	}

	rd := &drainer{r: pr, w: output, limitMet: s.LimitMet, tty: tty, hangup: hangup, done: make(chan struct{})}
	go rd.loop()

	var out Outcome
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var state *os.ProcessState
	select {
	case state = <-exited:
	case <-timer.C:
		if ended(pid) {
			state = <-exited // it ended before the timer was seen (this process was stopped): its end counts
		} else {
			out.TimedOut = true
		}
	case <-ctx.Done():
		out.Cancelled = true
	}
	if state == nil {
		grace, sig := spec.KillGrace, unix.SIGTERM
		if g, ok := errors.AsType[KillGraceCause](context.Cause(ctx)); ok && out.Cancelled {
			grace = g.KillGrace() // the cancel says how long (a supervisor whose client died: reference §11)
		}
		if k, ok := errors.AsType[KillSignalCause](context.Cause(ctx)); ok && out.Cancelled {
			sig = k.KillSignal() // `agentbash kill --signal` of a task (reference §8)
		}
		state = terminate(pid, exited, grace, sig)
	}
	rd.shellExited()
	<-rd.done
	out.OutputClosed, out.OutputIncomplete = rd.closed.Load(), rd.cut.Load()

	if out.TimedOut || out.Cancelled {
		// Spawned during the kill (a trap handler, a re-forking daemon): finish them too.
		killAll(pid)
	} else if !hasChildren() && len(rd.atCut) == 0 {
		// Nothing left behind (the usual case): no need to scan /proc.
	} else if live, zombies := descendants(); len(live) > 0 || len(zombies) > 0 || len(rd.atCut) > 0 {
		reap(zombies, pid)
		if live = union(rd.atCut, live); len(live) > 0 {
			out.LeftoverPids = live
			if spec.Task == nil { // a task's supervisor keeps them (see Spec.Task)
				out.Warnings = append(out.Warnings, leftoverWarning(live, tty))
			}
		}
	}
	out.ProxyDenied = stage.End()
	setStatus(&out, state)
	if con != nil {
		out.Screen = con.Screen()
	}
	out.Duration = time.Since(start)
	return out, nil
}

// openInput is the shell's stdin and what closes it here: the console's (a pipe or the terminal), else
// openStdin's.
func openInput(r io.Reader, con *console.Console) (io.Reader, func(), error) {
	if con != nil {
		return con.Stdin(), func() {}, nil
	}
	return openStdin(r)
}

// outputEnds are the ends of the command's output: what the drainer reads, and what the shell writes to
// (its stdout and stderr): a pipe, or with a terminal the terminal's master and the terminal itself.
func outputEnds(con *console.Console) (outputReader, *os.File, error) {
	if con != nil && con.TTY() {
		r, err := con.Output()
		if err != nil {
			return nil, nil, err
		}
		return fileReader{r}, con.Terminal(), nil
	}
	r, w := takePipe()
	if r == nil {
		var err error
		if r, w, err = outputPipe(); err != nil {
			return nil, nil, fmt.Errorf("create output pipe: %w", err)
		}
	}
	return newPipeReader(r), w, nil
}

// outputReader is the read end of the command's output, as the drainer reads it: an *os.File on the
// runtime's poller (fileReader), or on Linux a pipe that a large output moves off it (pipeReader).
type outputReader interface {
	io.ReadCloser
	SetReadDeadline(t time.Time) error
	// hasData reports whether bytes wait to be read (false when it cannot tell).
	hasData() bool
}

// fileReader is an *os.File as an outputReader.
type fileReader struct{ *os.File }

func (f fileReader) hasData() bool { return pipeHasData(f.File) }

// lastEnv is the environment of the last run, kept for the next: runs are serialized (running).
var lastEnv environ

// environ is the environment of a run, Environ(os.Environ(), layers), remembered for the last layers:
// this process's own environment does not change, and the runs of a long-lived client's supervisor mostly
// send the same layers (building it is a map of a hundred variables). The slice is shared by the runs that
// use it, and never changed.
type environ struct{ layers, env []string }

func (e *environ) of(layers []string) []string {
	if e.env == nil || !slices.Equal(e.layers, layers) {
		e.layers, e.env = slices.Clone(layers), Environ(os.Environ(), layers)
	}
	return e.env
}

// spawnShell starts the shell (startShell) from a thread that outlives it: the parent-death signal fires
// when the thread that forked the child exits, and the runtime ends a thread whose goroutine exits
// locked to it (golang/go#27505). The main thread never ends before the process (the runtime wedges it
// instead), so a caller on it — the supervisor, which runs from an init function, where the main
// goroutine is locked to the main thread — forks right there, with no goroutine or thread handed the
// work. Any other caller hands the start to the main thread when it serves them (ServeMainThread: a
// reused supervisor's later runs), else forks from a goroutine of its own, locked to its thread until the
// shell was reaped. exited receives the shell's status once it ended and was reaped (watchExit); stage is the sandbox
// stage the shell started through, nil without one.
func spawnShell(spec Spec, env []string, stdin io.Reader, out *os.File) (*exec.Cmd, *sandbox.Stage, <-chan *os.ProcessState, error) {
	runtime.LockOSThread()
	if onMainThread() {
		cmd, stage, err := startShell(spec, env, stdin, out)
		runtime.UnlockOSThread() // the main thread stays locked to the main goroutine during init
		if err != nil {
			return nil, nil, nil, err
		}
		return cmd, stage, watchExit(cmd), nil
	}
	runtime.UnlockOSThread()
	if m := mainThread.Load(); m != nil {
		var cmd *exec.Cmd
		var stage *sandbox.Stage
		var err error
		if m.do(func() { cmd, stage, err = startShell(spec, env, stdin, out) }) {
			if err != nil {
				return nil, nil, nil, err
			}
			return cmd, stage, watchExit(cmd), nil
		}
	}
	type start struct {
		cmd    *exec.Cmd
		stage  *sandbox.Stage
		exited <-chan *os.ProcessState
		err    error
	}
	started := make(chan start, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the reap
		cmd, stage, err := startShell(spec, env, stdin, out)
		if err != nil {
			started <- start{err: err}
			return
		}
		exited := make(chan *os.ProcessState, 1)
		started <- start{cmd: cmd, stage: stage, exited: exited}
		exited <- <-watchExit(cmd) // parked until the reap, holding the thread
	}()
	s := <-started
	return s.cmd, s.stage, s.exited, s.err
}

// mainThread is the main thread's loop while it serves (ServeMainThread), nil else.
var mainThread atomic.Pointer[mainLoop]

// mainLoop runs functions on the main thread for other goroutines (ServeMainThread).
type mainLoop struct {
	funcs chan func()
	ended chan struct{} // closed when the loop returned: nothing more runs there
}

// do runs f on the main thread and returns true once it ran, or false without running it when the
// loop has ended.
func (m *mainLoop) do(f func()) bool {
	ran := make(chan struct{})
	select {
	case m.funcs <- func() { f(); close(ran) }:
		<-ran
		return true
	case <-m.ended:
		return false
	}
}

// ServeMainThread makes the calling goroutine, when it runs on the main thread, locked to it (as in an
// init function), start the shells of the Loop runs of this process's other goroutines (see
// spawnShell), until result delivers a value, which it returns. Those runs' shells get the main thread's
// parent-death signal as a run on it would, without the thread being locked to the goroutine that
// serves them: a goroutine locked to a thread hands the thread's processor on each time it waits, and
// the thread is woken again to take it back. Called on another thread, it only waits for result (the
// runs then start their shells as any other caller's).
func ServeMainThread[T any](result <-chan T) T {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if !onMainThread() {
		return <-result
	}
	m := &mainLoop{funcs: make(chan func()), ended: make(chan struct{})}
	mainThread.Store(m)
	defer func() {
		mainThread.Store(nil)
		close(m.ended)
	}()
	for {
		select {
		case f := <-m.funcs:
			f()
		case v := <-result:
			return v
		}
	}
}

// MaxArgBytes is the longest command passed to the shell as its `-c` argument: Linux refuses one argument
// of 32 pages or more (MAX_ARG_STRLEN, 128 KiB with 4 KiB pages). A longer command is passed on a
// descriptor instead (see [startShell]).
var MaxArgBytes = 32*os.Getpagesize() - 1

// Loaders: the `-c` script that runs a long command from descriptor 3, which it closes before the
// command runs, so the command sees only 0, 1 and 2 (reference §3.7). The loader is one line, so the command's
// lines are numbered from 1; its words are \-quoted (no alias of the user's snapshot applies) and bash's
// go through `builtin` (no function of the snapshot replaces them), but for `exec`, whose redirections
// would be undone after `builtin` (the snapshot leaves out functions named exec).
//
// bash reads the command into BASH_EXECUTION_STRING, which under `bash -c COMMAND` holds COMMAND itself,
// and runs it with eval. So the command behaves as the same text given to `-c`: the same $0 (the shell's
// argv[0]), no BASH_SOURCE, no positional parameters, the same $LINENO and `bash: line N:` in error
// messages, aliases it defines work on its later lines, `exit N` ends the shell with N. What differs,
// because no argument can be that long: a syntax error says `bash: eval: line N:` instead of
// `bash: -c: line N:`; before the command's first command ends, $_ is $0 (`: "$0"`; a short command
// sees what the snapshot's last line left there) and PIPESTATUS is already set; the shell's own command line (ps)
// shows the loader, not the command; and bash does not replace itself with the command's last program.
//
// Other shells (sh, dash, zsh) get a POSIX loader that reads the command with cat (from PATH) and runs it
// with eval (the same $0 and positional parameters); the shell keeps a close-on-exec copy of descriptor 3
// while the command runs, which its children do not get.
const (
	bashLoader = `IFS= \builtin read -r -d '' -u 3 BASH_EXECUTION_STRING 2>/dev/null; \exec 3<&-; ` +
		`if \builtin test -z "$BASH_EXECUTION_STRING"; then ` + loaderFailed + `; fi; ` +
		`\builtin : "$0"; \builtin eval "$BASH_EXECUTION_STRING"`
	posixLoader = `\eval "$(\command cat <&3 || \command echo '` + loaderFailed + `')" 3<&-`
	// loaderFailed reports a descriptor 3 that a wrapper closed (sudo closes every descriptor from 3 up).
	loaderFailed = `\command echo "agentbash: the command is too long for one argument and could not be read ` +
		`from descriptor 3 (a wrapper that closes descriptors, such as sudo, cannot run it)" >&2; \command exit 125`
)

// shellOptions are the options the shell gets before `-c`. bash gets --norc: Debian's and Ubuntu's bash
// read ~/.bashrc for a non-interactive `bash -c` when SSH_CLIENT is set and SHLVL is not (`ssh host
// agentbash …`), or when stdin is a socket, which costs every command the rc's time and its side effects;
// what the rc defines reaches commands only through the snapshot (README "A 30-second tour"). And it gets
// expand_aliases, so an alias works on the line after its definition in every run, with or without a
// snapshot or a session (README "Sessions"), at no cost: no start-up file is needed for it.
func shellOptions(shell string) []string {
	if filepath.Base(shell) == "bash" {
		return []string{"--norc", "-O", "expand_aliases"}
	}
	return nil
}

// checkCommand refuses a command that no shell can be given: one with a NUL byte (an argument cannot hold
// one, and a long command would be cut at it).
func checkCommand(command string) error {
	if i := strings.IndexByte(command, 0); i >= 0 {
		return fmt.Errorf("the command holds a NUL byte (at byte %d): a shell command cannot contain one", i)
	}
	return nil
}

// startShell starts spec's shell, under spec.Wrapper when set, with the environment env, with stdin and
// with out as stdout and stderr. A command up to [MaxArgBytes] is the `-c` argument (`bash -c COMMAND`). A longer one, or one the
// kernel refuses (E2BIG: a large environment leaves less room), is written to an in-memory file (memfd;
// a pipe where there is none) given to the shell as descriptor 3, and `-c` gets a loader that reads and
// closes it, then runs the command (see [bashLoader]); no temporary file, no dependence on $TMPDIR.
func startShell(spec Spec, env []string, stdin io.Reader, out *os.File) (*exec.Cmd, *sandbox.Stage, error) {
	shell, command := string(spec.Shell), string(spec.Command)
	program, sentinel := shell, ErrShellNotFound
	if len(spec.Wrapper) > 0 {
		program, sentinel = spec.Wrapper[0], ErrWrapperNotFound
		if _, err := exec.LookPath(program); err != nil {
			return nil, nil, startError(sentinel, program, err)
		}
	}
	viaFD := len(command) > MaxArgBytes
	for {
		script := command
		if viaFD {
			script = posixLoader
			if filepath.Base(shell) == "bash" {
				script = bashLoader
			}
		}
		// `--` ends the shell's options: a script that starts with - or + (`-x`) is script text.
		args := append(append(slices.Clone([]string(spec.Wrapper)), shell), shellOptions(shell)...)
		args = append(args, "-c", "--", script)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = string(spec.Dir)
		cmd.Env = withoutLastArg(env)
		cmd.Stdin = stdin
		cmd.Stdout = out // one pipe for both streams keeps their order (reference §3.7)
		cmd.Stderr = out
		cmd.SysProcAttr = sysProcAttr()
		if spec.Interactive != nil && spec.Interactive.TTY {
			// Its terminal (stdin, 0) becomes the controlling terminal of the new session: the one
			// exception to "no controlling terminal" (reference §14).
			cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
		}
		var err error
		if viaFD {
			f, err := commandFile(command)
			if err != nil {
				return nil, nil, err
			}
			cmd.ExtraFiles = []*os.File{f} // descriptor 3 (commandFD) in the shell
			defer f.Close()
		}
		var stage *sandbox.Stage
		if spec.Sandbox != nil {
			if stage, err = sandbox.Wrap(cmd, *spec.Sandbox); err != nil {
				return nil, nil, err
			}
		}
		err = cmd.Start()
		if stage != nil {
			if err = stage.Started(cmd, err); err != nil && cmd.Process != nil {
				_ = cmd.Wait() // the stage gave up: nothing of the command ran
			}
		}
		if err != nil && !viaFD && errors.Is(err, syscall.E2BIG) {
			viaFD = true
			continue
		}
		if err != nil && stage != nil {
			return nil, nil, err
		}
		if err != nil {
			return nil, nil, startError(sentinel, program, err)
		}
		return cmd, stage, nil
	}
}

// withoutLastArg is env without `_`. A shell sets `_` to the path of each program it runs; the value
// agentbash inherited is its caller's (usually agentbash's own path). Without it, the shell starts with
// $_ equal to $0 whether the command came as `-c` argument or through a loader.
func withoutLastArg(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "_=") })
}

// commandFile returns a file open for reading that holds command, to pass as a child's descriptor: an
// in-memory file, or the read end of a pipe that a goroutine fills.
func commandFile(command string) (*os.File, error) {
	if f, err := memFile("agentbash-command", command); err == nil {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pass the long command: %w", err)
	}
	go func() {
		_, _ = io.WriteString(pw, command) // fails with EPIPE if the shell is gone without reading it all
		pw.Close()
	}()
	return pr, nil
}

// terminate kills the process group of pid and every descendant: SIGTERM, then SIGKILL once grace has
// passed, unless everything is gone before. A process that appears during the grace gets the signal
// too: a shell that catches SIGTERM (bash does while an EXIT trap is set, as a session's is) may start
// its next command before it acts on the signal, and that child, which the first signal missed, would
// otherwise live on to the SIGKILL. It returns the shell's status, or nil when it could not be collected
// within reapWait.
func terminate(pid int, exited <-chan *os.ProcessState, grace time.Duration, sig unix.Signal) *os.ProcessState {
	signalled := signalTree(pid, sig)
	var state *os.ProcessState
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case state = <-exited:
			exited = nil
		case <-tick.C:
			live, zombies := descendants()
			reap(zombies, pid)
			if state != nil && len(live) == 0 {
				return state
			}
			signalled = signalNew(pid, live, signalled, sig)
		case <-deadline.C:
			break wait
		}
	}
	killAll(pid)
	if state == nil {
		select {
		case state = <-exited:
		case <-time.After(reapWait):
		}
	}
	return state
}

// KillTree ends the process group led by pid and every descendant of this process: SIGTERM, then, once
// they are all gone or grace has passed, SIGKILL until none is left ([killAll]). On Linux, in a process
// that called [BecomeSubreaper], the descendants include the orphans of the tree (setsid, double forks);
// elsewhere only the process group is signalled. It is for a process that owns one tree, such as the
// shell snapshot's helper (pkg/snapshot). It does not collect pid's own status, which belongs to its
// exec.Cmd.
func KillTree(pid int, grace time.Duration) {
	signalTree(pid, unix.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		live, zombies := descendants()
		reap(zombies, pid)
		if len(live) == 0 {
			break
		}
	}
	killAll(pid)
}

// Leftovers returns the live descendants of this process and collects those that ended: after a run
// whose shell ended, what it left running (orphans reparented to this process, the subreaper). Linux;
// elsewhere it is empty (see [BecomeSubreaper]).
func Leftovers() []int {
	live, zombies := descendants()
	reap(zombies, 0)
	return live
}

// EndLeftovers ends every descendant of this process as a kill ends a tree: sig (and SIGCONT), then
// SIGKILL once they are gone or grace has passed, again and again until none is left. It is for a
// supervisor whose command's shell has ended (its process group is not signalled: once the shell is
// collected its id may be another process's), and returns how many processes it ended.
func EndLeftovers(sig unix.Signal, grace time.Duration) (ended int) {
	live := Leftovers()
	for _, s := range withCont(sig) {
		signalLeaders(0, live, s)
	}
	seen := live
	for deadline := time.Now().Add(grace); len(live) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		live = Leftovers()
		seen = signalNew(0, live, seen, sig)
	}
	return len(union(seen, killAll(0)))
}

// BecomeSubreaper makes this process the child subreaper of its descendants (Linux; elsewhere it does
// nothing): an orphan of its tree is reparented to it, not to init, so [KillTree] finds it. A process that
// runs other trees too must not call it.
func BecomeSubreaper() { becomeSubreaper() }

// killSweepMax bounds killAll against a fork bomb that outruns it; past it the remaining processes are
// reported as survivors by the next sweep's caller, which cannot do better.
const killSweepMax = 2 * time.Second

// killAll SIGKILLs the process group of pid (none when pid is 0) and every descendant, again and again
// until none is left: a process that forks (or setsid-forks) between two sweeps leaves an orphan that is
// reparented to us and found by the next sweep. Descendants are stopped (SIGSTOP) before they are
// killed, so a fork loop is frozen in place while the sweep finishes. It returns the descendants it
// found alive.
func killAll(pid int) (seen []int) {
	deadline := time.Now().Add(killSweepMax)
	for empty := 0; ; {
		if pid > 0 {
			_ = unix.Kill(-pid, unix.SIGKILL)
		}
		live, zombies := descendants()
		reap(zombies, pid)
		seen = union(seen, live)
		if len(live) == 0 {
			// Confirm: a fork in flight during this look shows up in the next one.
			if empty++; empty == 3 {
				return seen
			}
			time.Sleep(time.Millisecond)
			continue
		}
		empty = 0
		if time.Now().After(deadline) {
			return seen
		}
		signalAll(live, unix.SIGSTOP)
		signalGroups(pid, live, unix.SIGKILL)
		time.Sleep(time.Millisecond) // let the kernel finish the kills before the next look
	}
}

// signalTree sends sig to the process group led by pid and to every descendant of this process, which
// catches those that left the group with setsid or a double fork (we are their subreaper on Linux).
// A stopped process cannot act on SIGTERM until it is continued, so SIGCONT follows (as timeout(1) does):
// a stopped child no longer makes every timeout wait the whole grace.
// It returns the descendants it signalled.
func signalTree(pid int, sig unix.Signal) (signalled []int) {
	live, _ := descendants()
	for _, s := range withCont(sig) {
		signalGroups(pid, live, s)
	}
	return live
}

// withCont is sig followed by SIGCONT, so that a stopped process acts on it (signalTree); SIGKILL and
// SIGCONT alone.
func withCont(sig unix.Signal) []unix.Signal {
	if sig == unix.SIGKILL || sig == unix.SIGCONT {
		return []unix.Signal{sig}
	}
	return []unix.Signal{sig, unix.SIGCONT}
}

// signalNew sends sig (and SIGCONT, as signalTree does) to those of live that are not in signalled, and
// to the groups they lead but pid's (which got it already); it returns signalled with them added.
func signalNew(pid int, live, signalled []int, sig unix.Signal) []int {
	var fresh []int
	for _, p := range live {
		if !slices.Contains(signalled, p) {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) == 0 {
		return signalled
	}
	for _, s := range withCont(sig) {
		signalLeaders(pid, fresh, s)
	}
	return append(signalled, fresh...)
}

// signalGroups sends sig to the process group led by pid (none when pid is 0), to each of live, and to
// the groups that those of live lead (a descendant may have moved to a group of its own).
func signalGroups(pid int, live []int, sig unix.Signal) {
	if pid > 0 {
		_ = unix.Kill(-pid, sig)
	}
	signalLeaders(pid, live, sig)
}

// signalLeaders sends sig to each of live and to the groups that those of live lead, but pid's.
func signalLeaders(pid int, live []int, sig unix.Signal) {
	signalAll(live, sig)
	for _, p := range live {
		if pg, err := unix.Getpgid(p); err == nil && pg == p && pg != pid {
			_ = unix.Kill(-pg, sig)
		}
	}
}

func signalAll(pids []int, sig unix.Signal) {
	for _, p := range pids {
		_ = unix.Kill(p, sig)
	}
}

// union is a's pids, then b's that a does not hold.
func union(a, b []int) []int {
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// leftoverWarning is the warning of a run that left pids running after a normal exit (README: processes
// left running are not killed).
func leftoverWarning(pids []int, tty bool) string {
	if tty {
		return fmt.Sprintf("%d process(es) the command started are still running (pids %s); the terminal closed with "+
			"the shell, so their writes to it fail: redirect their output (`server > log 2>&1 &`)", len(pids), PidsText(pids))
	}
	return fmt.Sprintf("%d process(es) the command started are still running (pids %s); one that writes to the "+
		"closed output pipe will get SIGPIPE: redirect its output (`server > log 2>&1 &`)", len(pids), PidsText(pids))
}

// PidsText is a list of process ids as a warning shows one: "4086 4090".
func PidsText(pids []int) string {
	b := make([]byte, 0, 8*len(pids))
	for i, p := range pids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return string(b)
}

// setStatus records how the shell ended.
func setStatus(out *Outcome, state *os.ProcessState) {
	out.ExitCode = -1
	if state == nil {
		return
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		sig := unix.Signal(ws.Signal())
		out.Signal = unix.SignalName(sig)
		if out.Signal == "" {
			out.Signal = fmt.Sprintf("SIG%d", int(sig))
		}
		out.SignalNumber = int(sig)
	case state.Exited():
		out.ExitCode = state.ExitCode()
	}
}

// startError turns a failed start of program into a clear error; a program that is missing or cannot be
// executed wraps notFound ([ErrShellNotFound], [ErrWrapperNotFound]).
func startError(notFound error, program string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		if ee, ok := errors.AsType[*exec.Error](err); ok {
			err = ee.Err // its text repeats the program's name
		}
		return fmt.Errorf("%w: %s: %v", notFound, program, err)
	}
	return fmt.Errorf("start %s: %w", program, err)
}

// The output pipe's capacity (asked for; the kernel may give less) and the size of one read from it. A
// pipe larger than the default 64 KiB lets a fast command run ahead while the sink works, and reads of
// up to 256 KiB hand the sink (and the artifact file) large pieces: per call costs shrink, not memory
// (the pipe's buffer is the kernel's).
const (
	pipeBytes = 1 << 20
	readBytes = 256 << 10
)

// readBuf is the drainer's buffer, kept from one run to the next: runs of one process are serialized
// (running) and the drainer ends before Run returns, so one buffer serves them all. A supervisor that
// serves many runs would otherwise allocate 256 KiB per run, and the collections that follow (which
// scan the whole binary's data) cost more than the run's own work.
var readBuf []byte

// drainer copies the pipe into the output until EOF, until the output refuses data, until LimitReadOn has
// passed since the output met its limit, or — once the shell has exited — until the pipe has been silent
// for DrainSilence or DrainMax has passed. Each bound is a read deadline on the pipe.
type drainer struct {
	r        outputReader
	w        io.Writer
	limitMet func() bool // nil: no limit
	tty      bool        // r is a terminal's master: EIO while the shell runs is not the end (loop)
	hangup   func()      // nil, or what ends a terminal's writers when reading stops early (their writes would block)
	done     chan struct{}
	exitedAt atomic.Int64 // unix nanoseconds; 0 while the shell runs
	metAt    atomic.Int64 // unix nanoseconds when limitMet first said yes; 0 before
	closed   atomic.Bool  // stopped before EOF while the shell ran (Outcome.OutputClosed)
	cut      atomic.Bool  // stopped before EOF (Outcome.OutputIncomplete)
	// atCut are the live descendants when a drain after the shell's exit gave up, read before the pipe
	// closes: a leftover that still writes dies of SIGPIPE once it is closed, so a later look could miss
	// the very process that held the output open. Read after done is closed.
	atCut []int
}

func (d *drainer) loop() {
	defer close(d.done)
	defer d.r.Close()
	if readBuf == nil {
		readBuf = make([]byte, readBytes)
	}
	buf := readBuf // running is held
	last := time.Now()
	for {
		if testHookBeforeRead != nil {
			testHookBeforeRead(d)
		}
		n, err := d.r.Read(buf)
		if n > 0 {
			if _, werr := d.w.Write(buf[:n]); werr != nil {
				d.stop()
				return
			}
			// Silence is counted from here: the time the output took to take the data was no silence.
			last = time.Now()
			if d.limitMet != nil && d.metAt.Load() == 0 && d.limitMet() {
				d.metAt.Store(last.UnixNano())
			}
		}
		if err != nil && d.tty && errors.Is(err, syscall.EIO) && d.exitedAt.Load() == 0 {
			// A terminal reads EIO while no process holds it open; the shell runs, and may open it again
			// (`exec >/dev/tty`): look again shortly, until the shell has ended.
			time.Sleep(ttyReopenLook)
			continue
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return // EOF: every writer is gone
		}
		if dl, ok := d.deadline(last); ok {
			if now := time.Now(); !now.Before(dl) {
				// Data waiting in the pipe is never silence: a reader the scheduler held up past the bound
				// reads on (only DrainMax and LimitReadOn end the reading with data waiting).
				if d.r.hasData() {
					last = now
					if dl, ok = d.deadline(last); !ok || now.Before(dl) {
						_ = d.r.SetReadDeadline(dl)
						continue
					}
				}
				d.stop()
				return
			}
			_ = d.r.SetReadDeadline(dl)
		}
	}
}

// ttyReopenLook is how often a terminal that no process holds open is read again while the shell runs.
const ttyReopenLook = 10 * time.Millisecond

// testHookBeforeRead, when set (tests only), is called by the drain loop before each read.
var testHookBeforeRead func(d *drainer)

// stop records that reading ends before EOF; while the shell runs, closing the pipe is what ends it.
func (d *drainer) stop() {
	d.cut.Store(true)
	if d.hangup != nil {
		d.hangup()
	}
	if d.exitedAt.Load() == 0 {
		d.closed.Store(true)
	} else if hasChildren() {
		d.atCut, _ = descendants()
	}
}

// deadline is when reading must stop, given the last data at last: LimitReadOn after the limit was met,
// and once the shell has exited the drain bounds, whichever is first. ok is false while neither applies.
func (d *drainer) deadline(last time.Time) (dl time.Time, ok bool) {
	if m := d.metAt.Load(); m != 0 {
		dl, ok = time.Unix(0, m).Add(LimitReadOn), true
	}
	if ex := d.exitedAt.Load(); ex != 0 {
		if dd := drainDeadline(time.Unix(0, ex), last); !ok || dd.Before(dl) {
			dl, ok = dd, true
		}
	}
	return dl, ok
}

// shellExited starts the bounded drain.
func (d *drainer) shellExited() {
	now := time.Now()
	d.exitedAt.Store(now.UnixNano())
	dl, _ := d.deadline(now)
	_ = d.r.SetReadDeadline(dl)
}

func drainDeadline(exited, last time.Time) time.Time {
	from := exited
	if last.After(from) {
		from = last
	}
	dl := from.Add(DrainSilence)
	if limit := exited.Add(DrainMax); limit.Before(dl) {
		return limit
	}
	return dl
}
