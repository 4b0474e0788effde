package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Local runs commands as local processes: `Shell -c Command` in a new session (SPEC §3.7).
type Local struct{}

var _ Executor = Local{}

// reapWait bounds the wait for a shell that was sent SIGKILL; only a process stuck in the kernel can take
// longer, and then the outcome has no exit status rather than a hung call.
const reapWait = 5 * time.Second

// running serializes Local runs: descendants are found from this process down (orphans are reparented
// to it as the subreaper), so two commands at once could not be told apart. A long-lived mode running
// commands side by side needs per-run attribution (a cgroup per run) first.
var running sync.Mutex

// prepare makes this process the subreaper and reserves spare threads, once.
var prepare = sync.OnceFunc(func() {
	becomeSubreaper()
	reserveThreads()
})

// Run starts spec.Command and supervises it to the end. See [Executor]. Runs in one process are
// serialized (see running).
func (Local) Run(ctx context.Context, spec Spec) (Outcome, error) {
	running.Lock()
	defer running.Unlock()
	start := time.Now()
	if spec.Timeout <= 0 {
		return Outcome{}, fmt.Errorf("run: timeout must be positive, got %v", spec.Timeout)
	}
	stdin, closeStdin, err := openStdin(spec.Stdin)
	if err != nil {
		return Outcome{}, err
	}
	defer closeStdin()
	pr, pw, err := os.Pipe()
	if err != nil {
		return Outcome{}, fmt.Errorf("create output pipe: %w", err)
	}

	args, cleanup, err := shellArgs(spec.Command)
	if err != nil {
		pr.Close()
		pw.Close()
		return Outcome{}, err
	}
	defer cleanup()
	cmd := exec.Command(spec.Shell, args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin = stdin
	cmd.Stdout = pw // one pipe for both streams keeps their order (SPEC §3.7)
	cmd.Stderr = pw
	cmd.SysProcAttr = sysProcAttr()
	prepare()

	started := make(chan error, 1)
	exited := make(chan *os.ProcessState, 1)
	go func() {
		// The parent-death signal fires when the thread that forked the child exits, and the runtime may
		// retire an unlocked thread at any time (golang/go#27505). Lock it and never unlock: the thread then
		// ends with this goroutine, after the shell has been reaped.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // the status is in ProcessState; Wait has no copy goroutines to wait for
		exited <- cmd.ProcessState
	}()
	if err := <-started; err != nil {
		pw.Close()
		pr.Close()
		return Outcome{}, startError(spec.Shell, err)
	}
	pw.Close() // the children hold the only write ends now, so EOF means they all closed it
	pid := cmd.Process.Pid

	rd := &drainer{r: pr, w: spec.Output, limitMet: spec.LimitMet, done: make(chan struct{})}
	go rd.loop()

	var out Outcome
	timer := time.NewTimer(spec.Timeout)
	defer timer.Stop()
	var state *os.ProcessState
	select {
	case state = <-exited:
	case <-timer.C:
		out.TimedOut = true
	case <-ctx.Done():
		out.Cancelled = true
	}
	if state == nil {
		grace := spec.KillGrace
		if g, ok := context.Cause(ctx).(interface{ KillGrace() time.Duration }); ok && out.Cancelled {
			grace = g.KillGrace() // the cancel says how long (a supervisor whose client died: SPEC §11)
		}
		state = terminate(pid, exited, grace)
	}
	rd.shellExited()
	<-rd.done
	out.OutputClosed, out.OutputIncomplete = rd.closed.Load(), rd.cut.Load()

	if out.TimedOut || out.Cancelled {
		// Spawned during the kill (a trap handler, a re-forking daemon): finish them too.
		killAll(pid)
	} else if !hasChildren() {
		// Nothing left behind (the usual case): no need to scan /proc.
	} else if live, zombies := descendants(); len(live) > 0 || len(zombies) > 0 {
		reap(zombies, pid)
		if len(live) > 0 {
			out.LeftoverPids = live
			out.Warnings = append(out.Warnings, leftoverWarning(live))
		}
	}
	setStatus(&out, state)
	out.Duration = time.Since(start)
	return out, nil
}

// MaxArgBytes is the longest command passed as `-c` argument; Linux refuses a single argument over
// 128 KiB (MAX_ARG_STRLEN). A longer script is written to a private temporary file that the shell runs.
const MaxArgBytes = 100_000

// shellArgs returns the shell's arguments for command and a function that removes what it created.
func shellArgs(command string) ([]string, func(), error) {
	if len(command) <= MaxArgBytes {
		return []string{"-c", command}, func() {}, nil
	}
	f, err := os.CreateTemp("", "agentbash-script-*.sh")
	if err != nil {
		return nil, nil, fmt.Errorf("write long script: %w", err)
	}
	_, werr := f.WriteString(command)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return nil, nil, fmt.Errorf("write long script: %w", errors.Join(werr, cerr))
	}
	return []string{f.Name()}, func() { os.Remove(f.Name()) }, nil
}

// terminate kills the process group of pid and every descendant: SIGTERM, then SIGKILL once grace has
// passed, unless everything is gone before. It returns the shell's status, or nil when it could not be
// collected within reapWait.
func terminate(pid int, exited <-chan *os.ProcessState, grace time.Duration) *os.ProcessState {
	signalTree(pid, unix.SIGTERM)
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
			if state != nil {
				live, zombies := descendants()
				reap(zombies, pid)
				if len(live) == 0 {
					return state
				}
			}
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

// killSweepMax bounds killAll against a fork bomb that outruns it; past it the remaining processes are
// reported as survivors by the next sweep's caller, which cannot do better.
const killSweepMax = 2 * time.Second

// killAll SIGKILLs the process group of pid and every descendant, again and again until none is left: a
// process that forks (or setsid-forks) between two sweeps leaves an orphan that is reparented to us and
// found by the next sweep. Descendants are stopped (SIGSTOP) before they are killed, so a fork loop is
// frozen in place while the sweep finishes.
func killAll(pid int) {
	deadline := time.Now().Add(killSweepMax)
	for empty := 0; ; {
		_ = unix.Kill(-pid, unix.SIGKILL)
		live, zombies := descendants()
		reap(zombies, pid)
		if len(live) == 0 {
			// Confirm: a fork in flight during this look shows up in the next one.
			if empty++; empty == 3 {
				return
			}
			time.Sleep(time.Millisecond)
			continue
		}
		empty = 0
		if time.Now().After(deadline) {
			return
		}
		signalAll(live, unix.SIGSTOP)
		signalGroups(pid, live, unix.SIGKILL)
		time.Sleep(time.Millisecond) // let the kernel finish the kills before the next look
	}
}

// signalTree sends sig to the process group led by pid and to every descendant of this process, which
// catches those that left the group with setsid or a double fork (we are their subreaper on Linux).
func signalTree(pid int, sig unix.Signal) {
	live, _ := descendants()
	signalGroups(pid, live, sig)
}

// signalGroups sends sig to the process group led by pid, to each of live, and to the groups that those
// of live lead (a descendant may have moved to a group of its own).
func signalGroups(pid int, live []int, sig unix.Signal) {
	_ = unix.Kill(-pid, sig)
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

func leftoverWarning(pids []int) string {
	return fmt.Sprintf("%d process(es) the command started are still running (pids %v); one that writes to the "+
		"closed output pipe will get SIGPIPE: redirect its output (`server > log 2>&1 &`)", len(pids), pids)
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

// startError turns a failed start into a clear error; a missing shell wraps [ErrShellNotFound].
func startError(shell string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w: %s: %v", ErrShellNotFound, shell, err)
	}
	return fmt.Errorf("start %s: %w", shell, err)
}

// drainer copies the pipe into the output until EOF, until the output refuses data, until LimitReadOn has
// passed since the output met its limit, or — once the shell has exited — until the pipe has been silent
// for DrainSilence or DrainMax has passed. Each bound is a read deadline on the pipe.
type drainer struct {
	r        *os.File
	w        io.Writer
	limitMet func() bool // nil: no limit
	done     chan struct{}
	exitedAt atomic.Int64 // unix nanoseconds; 0 while the shell runs
	metAt    atomic.Int64 // unix nanoseconds when limitMet first said yes; 0 before
	closed   atomic.Bool  // stopped before EOF while the shell ran (Outcome.OutputClosed)
	cut      atomic.Bool  // stopped before EOF (Outcome.OutputIncomplete)
}

func (d *drainer) loop() {
	defer close(d.done)
	defer d.r.Close()
	buf := make([]byte, 64<<10)
	last := time.Now()
	for {
		n, err := d.r.Read(buf)
		if n > 0 {
			last = time.Now()
			if _, werr := d.w.Write(buf[:n]); werr != nil {
				d.stop()
				return
			}
			if d.limitMet != nil && d.metAt.Load() == 0 && d.limitMet() {
				d.metAt.Store(last.UnixNano())
			}
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return // EOF: every writer is gone
		}
		if dl, ok := d.deadline(last); ok {
			if !time.Now().Before(dl) {
				d.stop()
				return
			}
			_ = d.r.SetReadDeadline(dl)
		}
	}
}

// stop records that reading ends before EOF; while the shell runs, closing the pipe is what ends it.
func (d *drainer) stop() {
	d.cut.Store(true)
	if d.exitedAt.Load() == 0 {
		d.closed.Store(true)
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
