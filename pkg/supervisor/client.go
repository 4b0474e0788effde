package supervisor

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/supervisor/early"
)

// ErrDied is returned (wrapped) when a supervisor ended without reporting how its run ended.
var ErrDied = errors.New("supervisor exited without a result")

// Pool starts this machine's commands ([run.Starter]): each run gets a supervisor process of its own while
// it runs. It may keep supervisors started ahead, so a run does not wait for a supervisor's exec: one for the
// next run ([Pool.Prewarm], what `run` does), or a pool of Spares (a long-lived client: rpc, mcp), whose
// supervisors also serve the next run after one that left nothing behind (reuse: the supervisor says so in
// its done event), and are refilled in the background when fewer than Spares would be idle or coming
// back. An idle supervisor waits for its start request; it exits by itself when its socket closes, so
// none outlives this process. Its methods are safe for concurrent use; after Close, runs still work but
// no supervisor is kept.
type Pool struct {
	// Spares is how many idle supervisors to keep ready, reused after runs; 0 keeps only what Prewarm
	// started, and reuses none.
	Spares int

	mu      sync.Mutex
	spares  []*child
	out     int  // runs under way whose supervisor may come back (reuse offered)
	filling bool // a refill goroutine runs
	closed  bool
	fill    sync.WaitGroup
	shells  map[string]string // shell as configured → the path found, for Resolve
	cwd     cwdSeen           // this process's working directory as Resolve found it last
}

// cwdSeen is the path run.ResolveDir gave for this process's working directory, and that directory's
// identity then.
type cwdSeen struct {
	path     string
	dev, ino uint64
}

var (
	_ run.Starter = (*Pool)(nil)
	_ run.Runner  = (*Pool)(nil)
)

// Prewarm starts a supervisor now for the next Start to take, unless one is ready; with Spares set it
// fills the pool in the background instead. A failure is left for Start to report.
func (pool *Pool) Prewarm() {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.closed {
		return
	}
	if pool.Spares > 0 {
		pool.refill()
		return
	}
	if len(pool.spares) == 0 {
		if p, err := spawn(); err == nil {
			pool.spares = append(pool.spares, p)
		}
	}
}

// want is how many idle supervisors the pool should hold now: Spares, less the runs whose supervisor may
// come back (so a client that runs one command after another never spawns one). pool.mu is held.
func (pool *Pool) want() int { return pool.Spares - pool.out }

// refill starts the goroutine that spawns spares up to want, unless it runs. pool.mu is held.
func (pool *Pool) refill() {
	if pool.filling || pool.closed || pool.Spares == 0 || len(pool.spares) >= pool.want() {
		return
	}
	pool.filling = true
	pool.fill.Add(1)
	go func() {
		defer pool.fill.Done()
		for {
			p, err := spawn()
			pool.mu.Lock()
			if err != nil || pool.closed || len(pool.spares) >= pool.want() {
				pool.filling = false
				pool.mu.Unlock()
				if p != nil {
					p.Close()
				}
				return // a failed spawn is retried by the next take; Start reports its own
			}
			pool.spares = append(pool.spares, p)
			full := len(pool.spares) >= pool.want()
			if full {
				pool.filling = false
			}
			pool.mu.Unlock()
			if full {
				return
			}
		}
	}()
}

// take returns an idle supervisor (the one that went idle last), or nil, and refills the pool if fewer
// than Spares would be idle or coming back. fresh takes only one that never ran a command (stdin goes
// only with a first run); reuse counts the run as one whose supervisor may come back.
func (pool *Pool) take(fresh, reuse bool) *child {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	var p *child
	for i := len(pool.spares) - 1; i >= 0; i-- {
		if q := pool.spares[i]; !fresh || !q.opened {
			p = q
			pool.spares = slices.Delete(pool.spares, i, i+1)
			break
		}
	}
	if reuse {
		pool.out++
	}
	pool.refill()
	return p
}

// ended is told how a run that offered reuse ended: back, its supervisor p waits for the next run and
// joins the pool (unless the pool is closed or full: then it is let go); else p (if any: nil when none
// could be started) is gone or going, and the pool is refilled.
func (pool *Pool) ended(p *child, back bool) {
	pool.mu.Lock()
	pool.out--
	keep := back && p != nil && !pool.closed && len(pool.spares) < pool.Spares
	if keep {
		pool.spares = append(pool.spares, p)
	}
	pool.refill()
	pool.mu.Unlock()
	if !keep && p != nil {
		p.release()
	}
}

// Close ends the idle supervisors and keeps no more: each exits at once (EOF before a start request)
// and is reaped. It waits for a refill under way. A run under way goes on; its supervisor is let go when
// it ends.
func (pool *Pool) Close() error {
	pool.mu.Lock()
	pool.closed = true
	spares := pool.spares
	pool.spares = nil
	pool.mu.Unlock()
	pool.fill.Wait()
	var errs []error
	for _, p := range spares {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Resolve resolves the shell and working directory on this machine (run.FindShell, run.ResolveDir).
func (pool *Pool) Resolve(shell, dir string) (run.Target, error) {
	t := run.Target{Shell: shell}
	sh, shErr := pool.findShell(shell)
	if shErr == nil {
		t.Shell = sh
	}
	home, _ := os.UserHomeDir()
	d, dirErr := pool.resolveDir(dir, home)
	t.Dir = d
	if dirErr != nil {
		return t, dirErr // the working directory is checked first (reference §3.4)
	}
	return t, shErr
}

// resolveDir is run.ResolveDir, with this process's own working directory (dir "") remembered: a
// long-lived client resolves it for most requests, and ResolveDir's way to it ($PWD against ".", getcwd
// when they differ, then the stat and access of the result) is up to eight system calls on each
// request's path. The path found is reused while "." is still the directory it named, the path still
// names that directory and it can still be entered (two stats and an access); anything else goes the
// whole way again, errors included.
func (pool *Pool) resolveDir(dir, home string) (string, error) {
	if dir != "" {
		return run.ResolveDir(dir, home)
	}
	var dot unix.Stat_t
	dotErr := unix.Stat(".", &dot)
	if dotErr == nil {
		pool.mu.Lock()
		seen := pool.cwd
		pool.mu.Unlock()
		var st unix.Stat_t
		if seen.path != "" && seen.dev == uint64(dot.Dev) && seen.ino == uint64(dot.Ino) &&
			unix.Stat(seen.path, &st) == nil && st.Dev == dot.Dev && st.Ino == dot.Ino &&
			unix.Access(seen.path, unix.X_OK) == nil {
			return seen.path, nil
		}
	}
	path, err := run.ResolveDir(dir, home)
	if err == nil && dotErr == nil {
		pool.mu.Lock()
		pool.cwd = cwdSeen{path: path, dev: uint64(dot.Dev), ino: uint64(dot.Ino)}
		pool.mu.Unlock()
	}
	return path, err
}

// findShell is run.FindShell, remembered: a long-lived client looks the shell up in PATH once, and
// after that only checks that the file found is still an executable (a removed or replaced shell is
// looked up again). PATH of this process does not change, so the answer does not either.
func (pool *Pool) findShell(shell string) (string, error) {
	pool.mu.Lock()
	sh, ok := pool.shells[shell]
	pool.mu.Unlock()
	if ok {
		if fi, err := os.Stat(sh); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return sh, nil
		}
	}
	sh, err := run.FindShell(shell)
	if err != nil {
		return sh, err
	}
	pool.mu.Lock()
	if pool.shells == nil {
		pool.shells = map[string]string{}
	}
	pool.shells[shell] = sh
	pool.mu.Unlock()
	return sh, nil
}

// Start hands spec to a supervisor (an idle one, or a new one) and returns once the shell runs. The
// [run.Process] is an *Attached.
func (pool *Pool) Start(ctx context.Context, spec run.Spec, s run.Streams) (run.Process, error) {
	var rn *Attached
	err := pool.try(spec, s, func(p *child, home *Pool) (err error) {
		rn, err = p.start(ctx, spec, s, home, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rn, nil
}

// Run runs spec to its end on a supervisor ([run.Runner]): Start and Wait, but the start request is quiet
// (the supervisor reports only the end, not the shell's start, so the client is not woken while the
// command runs). A run that could not start fails as Start's does.
func (pool *Pool) Run(ctx context.Context, spec run.Spec, s run.Streams) (run.Outcome, error) {
	var o run.Outcome
	err := pool.try(spec, s, func(p *child, home *Pool) error {
		rn, err := p.start(ctx, spec, s, home, true)
		if err != nil {
			return err
		}
		o, err = rn.Wait()
		return err
	})
	return o, err
}

// try gives a run to a supervisor (an idle one, or a new one) with give. An idle supervisor that was gone
// before it got the run (killed while it waited), or that retired (a reused one whose earlier command
// changed it), ran nothing: the run goes to another, a few times at most. A run with stdin is not retried
// (its stdin may have been read from).
func (pool *Pool) try(spec run.Spec, s run.Streams, give func(p *child, home *Pool) error) error {
	// Reuse is offered only by a pool, and not for stdin (its descriptor opens a supervisor's stream) or a
	// task (the supervisor belongs to the task).
	reuse := pool.Spares > 0 && s.Stdin == nil && spec.Task == nil
	home := pool
	if !reuse {
		home = nil
	}
	for attempt := 0; ; attempt++ {
		p := pool.take(s.Stdin != nil, reuse)
		idle := p != nil
		if p == nil {
			var err error
			if p, err = spawn(); err != nil {
				if reuse {
					pool.ended(nil, false)
				}
				return err
			}
		}
		err := give(p, home) // a failed start has ended the run: the pool counted it back
		if err == nil {
			return nil
		}
		if !idle || s.Stdin != nil || attempt > pool.Spares || !(errors.Is(err, errNotSent) || errors.Is(err, errRetired)) {
			return err
		}
	}
}

// clientWarmed is set once the process began warming a client's codecs (warmClient).
var clientWarmed atomic.Bool

// warmClient decodes a done event through encoding/json (what decodeEvent leaves to it: a terminal's
// screen) and encodes an empty result, once per process, on a goroutine of their own, from the first start
// request sent on: encoding/json's reflection on a type's first use (0.2 to 0.5 ms for the two, cold) then
// runs while the supervisor starts the command, on a CPU the client leaves idle, rather than after the
// command ended, when the run waits for it to read the event and print.
func warmClient() {
	if clientWarmed.Swap(true) {
		return
	}
	go func() { _ = warmClientCodecs() }()
}

// warmClientCodecs is warmClient's work: what it returns is only for a test (a panic here would end the
// client).
func warmClientCodecs() error {
	_, err := decodeEvent([]byte(`{"op":"done","outcome":{"screen":{}},"summary":{}}`))
	return errors.Join(err, result.Result{}.WriteJSON(io.Discard))
}

// errNotSent marks a start that failed before any of the start request reached the supervisor.
var errNotSent = errors.New("start request not sent")

// errRetired is the answer of a reused supervisor that runs no more commands (kind "retired"): nothing
// ran.
var errRetired = errors.New("supervisor retired")

// child is a supervisor process this client started (spawn) or adopted: idle, or running a command
// ([Attached]). It is not a [run.Process], which is a command.
type child struct {
	spid     int // the supervisor's
	conn     *net.UnixConn
	opened   bool       // the descriptor byte was sent: later start requests are JSON only
	mu       sync.Mutex // guards the requests written to conn once a run started, and gen
	gen      uint64     // counts the done events read: a cancel of an earlier run is never sent
	in       *lines     // the events, once a run started
	waitOnce sync.Once
	waitErr  error
	reapMu   sync.Mutex // guards reaped
	reaped   bool       // the pid is collected (and may be another process's): no more signals
}

// Attached is one command on a supervisor; it implements [run.Process].
type Attached struct {
	p       *child
	home    *Pool // gets the supervisor back when reusable; nil when reuse was not offered
	pid     int   // the shell's
	quiet   bool  // the start was quiet: the shell's start is not reported (pid stays 0)
	live    func(run.LiveText)
	stop    func() bool // ends the cancel watch
	closeIn func()      // ends the stdin copy, if any
	dog     *watchdog   // nil for a task
	endOnce sync.Once
}

// spawn starts a supervisor process: this executable (/proc/self/exe on Linux) as `agentbash
// __supervise`. It has its own session (no terminal signals reach it), /dev/null for its standard streams,
// and the other end of a socket pair as descriptor 3. It waits for its run; if the caller drops it
// instead, its Close ends it.
func spawn() (*child, error) {
	run.CloseInheritedDescriptors() // the supervisor, like the command, never holds its caller's pipes
	fds, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("supervisor: socket pair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "control")
	defer theirs.Close()
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	// syscall.ForkExec rather than os/exec: the supervisor needs nothing os/exec adds, and os/exec's first
	// start in a process checks pidfd support by forking a child, time a run waits for.
	null, err := os.Open(os.DevNull)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	defer null.Close()
	pid, err := syscall.ForkExec(executable(), []string{early.Argv0(), Command}, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd(), theirs.Fd()}, // descriptor 3: the socket
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("supervisor: start: %w", err)
	}
	return &child{spid: pid, conn: c.(*net.UnixConn)}, nil
}

// start sends spec and waits for the shell to run (or for the error that kept it from running); quiet, it
// returns once the request is sent, and the run's Wait reads whatever comes (the pid stays 0). With home
// set, it offers the supervisor for reuse, and the run hands it back to home when it ended.
func (p *child) start(ctx context.Context, spec run.Spec, s run.Streams, home *Pool, quiet bool) (*Attached, error) {
	rn := &Attached{p: p, home: home, live: s.Live}
	req := Request{Op: OpStart, Spec: &spec, Live: s.Live != nil, Reuse: home != nil, Quiet: quiet}
	var rights []byte
	if s.Stdin != nil {
		if p.opened {
			rn.end(false)
			return nil, errors.New("supervisor: stdin goes only to a supervisor's first run")
		}
		f, closeIn, err := stdinFile(s.Stdin)
		if err != nil {
			p.Close()
			rn.end(false)
			return nil, err
		}
		defer f.Close() // the supervisor has its own copy once it is sent
		rn.closeIn = closeIn
		req.Stdin, rights = true, unix.UnixRights(int(f.Fd()))
	}
	// The first message opens the stream: a byte carrying the descriptors, then the start request, so the
	// supervisor wakes once for both (a stream socket may take less than all of it: the rest follows).
	// A reused supervisor gets the request alone.
	var msg []byte
	if !p.opened {
		msg = append(msg, 0)
	}
	msg, err := req.appendJSON(msg)
	if err != nil {
		p.Close()
		rn.end(false)
		return nil, fmt.Errorf("supervisor: encode start request: %w", err)
	}
	p.mu.Lock()
	var n int
	if p.opened {
		n, err = p.conn.Write(msg)
	} else {
		p.opened = true
		n, _, err = p.conn.WriteMsgUnix(msg, rights, nil)
		if err == nil && n < len(msg) {
			var m int
			m, err = p.conn.Write(msg[n:])
			n += m
		}
	}
	if p.in == nil {
		p.in = newLines(p.conn)
	}
	gen := p.gen
	p.mu.Unlock()
	if err != nil {
		if n == 0 {
			err = fmt.Errorf("%w: %w", errNotSent, err)
		}
		err = p.died(fmt.Errorf("send start request: %w", err))
		rn.end(false)
		return nil, err
	}
	warmClient()
	if spec.Task == nil {
		rn.dog = p.watch(spec.Timeout, spec.KillGrace)
	}
	rn.stop = context.AfterFunc(ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.gen == gen { // this run's done not read yet
			_ = p.send(cancelRequest(context.Cause(ctx)))
			p.signal(unix.SIGCONT) // a stopped supervisor reads no cancel
			if rn.dog != nil {
				rn.dog.cancelled(spec.KillGrace)
			}
		}
	})
	if quiet {
		rn.quiet = true
		return rn, nil
	}
	for {
		ev, err := rn.next()
		if err != nil {
			return nil, err
		}
		switch ev.Op {
		case OpStarted:
			rn.pid = ev.Pid
			return rn, nil
		case OpDone:
			rn.end(ev.Reusable)
			return nil, doneError(ev)
		}
	}
}

// stdinFile is r as a file whose descriptor can be sent: r itself, or the read end of a pipe that a
// goroutine fills from r (closeIn stops it).
func stdinFile(r io.Reader) (f *os.File, closeIn func(), err error) {
	if f, ok := r.(*os.File); ok {
		dup, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("supervisor: stdin: %w", err)
		}
		return os.NewFile(uintptr(dup), "stdin"), func() {}, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor: stdin pipe: %w", err)
	}
	go func() {
		_, _ = io.Copy(pw, r)
		pw.Close()
	}()
	return pr, func() { pw.Close() }, nil
}

// next reads the next event, passing output events to live. A done event ends the run's cancels; a
// broken stream ends the run.
func (rn *Attached) next() (Event, error) {
	p := rn.p
	for {
		line, err := p.in.next()
		var ev Event
		if err == nil {
			ev, err = decodeEvent(line)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errSocketClosed // not "EOF" in the result's text
			}
			if rn.dog.wedged() {
				err = fmt.Errorf("%w; %s", err, wedgedText)
			}
			err = p.died(err)
			if rn.pid > 0 || rn.quiet { // the shell started, or may have
				err = fmt.Errorf("%w; %s", err, orphansText)
			}
			rn.end(false)
			return Event{}, err
		}
		switch ev.Op {
		case OpOutput:
			if rn.live != nil {
				rn.live(run.LiveText{Text: ev.Text, TotalBytes: ev.TotalBytes, TotalLines: ev.TotalLines, Skipped: ev.Skipped})
			}
			continue
		case OpDone:
			p.mu.Lock()
			p.gen++
			p.mu.Unlock()
		}
		return ev, nil
	}
}

// end lets the supervisor go, once: back to its pool when it said it is reusable and the run offered
// reuse, else its socket is closed and it is reaped in the background.
func (rn *Attached) end(back bool) {
	rn.endOnce.Do(func() {
		rn.unwatch()
		if rn.home != nil {
			rn.home.ended(rn.p, back)
			return
		}
		rn.p.release()
	})
}

// doneError is the error a done event without an outcome carries.
func doneError(ev Event) error {
	switch {
	case ev.Error == "":
		return fmt.Errorf("%w (done without an outcome)", ErrDied)
	case ev.Kind == "shell":
		return remoteError{ev.Error, run.ErrShellNotFound}
	case ev.Kind == "wrapper":
		return remoteError{ev.Error, run.ErrWrapperNotFound}
	case ev.Kind == kindSandbox:
		return remoteError{ev.Error, sandbox.ErrUnavailable}
	case ev.Kind == kindRetired:
		return remoteError{ev.Error, errRetired}
	}
	return errors.New(ev.Error)
}

// remoteError is an error the supervisor reported: its text as it was, and the sentinel it wrapped.
type remoteError struct {
	text     string
	sentinel error
}

func (e remoteError) Error() string { return e.text }
func (e remoteError) Unwrap() error { return e.sentinel }

// Pid is the shell's process id.
func (rn *Attached) Pid() int { return rn.pid }

// SupervisorPid is the process id of the run's supervisor.
func (rn *Attached) SupervisorPid() int { return rn.p.spid }

// SupervisorPid is the supervisor's own process id.
func (p *child) SupervisorPid() int { return p.spid }

// Wait reads the run to its end (see [run.Process]). Then the supervisor goes back to the pool, or exits
// by itself and is reaped in the background rather than waited for.
func (rn *Attached) Wait() (run.Outcome, error) {
	for {
		ev, err := rn.next()
		if err != nil {
			return run.Outcome{}, err
		}
		if ev.Op != OpDone {
			continue
		}
		rn.end(ev.Reusable)
		if ev.Outcome == nil || ev.Summary == nil {
			return run.Outcome{}, doneError(ev)
		}
		o := *ev.Outcome
		o.Summary = *ev.Summary
		return o, nil
	}
}

// died describes a supervisor that stopped talking: how it exited, if it did.
func (p *child) died(cause error) error {
	p.conn.Close()
	if err := p.wait(); err != nil {
		return fmt.Errorf("%w (%v; %w)", ErrDied, err, cause)
	}
	return fmt.Errorf("%w (%w)", ErrDied, cause)
}

// wait reaps the supervisor once. The error is how it ended when that was not exit status 0 (an
// *EndedError), or the failure of the wait itself.
func (p *child) wait() error {
	p.waitOnce.Do(func() {
		// Marked reaped before its status is collected, where the end can be waited for without
		// collecting it: a signal (signal) then never reaches a reused pid. Elsewhere after, so that a
		// supervisor still running can be signalled while it is waited for.
		markReaped := func() {
			p.reapMu.Lock()
			p.reaped = true
			p.reapMu.Unlock()
		}
		ended := awaitExit(p.spid)
		if ended {
			markReaped()
		}
		var ws syscall.WaitStatus
		var err error
		for {
			if _, err = syscall.Wait4(p.spid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		if !ended {
			markReaped()
		}
		switch {
		case err != nil:
			p.waitErr = fmt.Errorf("supervisor %d: wait: %w", p.spid, err)
		case !ws.Exited() || ws.ExitStatus() != 0:
			p.waitErr = &EndedError{Pid: p.spid, Status: ws}
		}
	})
	return p.waitErr
}

// EndedError is a supervisor that ended other than with exit status 0.
type EndedError struct {
	Pid    int
	Status syscall.WaitStatus
}

func (e *EndedError) Error() string {
	return fmt.Sprintf("supervisor %d ended: %s", e.Pid, waitText(e.Status))
}

// waitText says how a process ended: `killed by SIGKILL` (the signal's name, not its description, which
// read "killed by killed"), or `exit status N`.
func waitText(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		if name := unix.SignalName(ws.Signal()); name != "" {
			return "killed by " + name
		}
		return fmt.Sprintf("killed by signal %d", int(ws.Signal()))
	}
	return fmt.Sprintf("exit status %d", ws.ExitStatus())
}

// Detach makes an attached task (run.Task.Attached) a detached one — it goes on without this client —
// and lets it go: after Detach neither a cancel of the start's context nor this process's end reaches it.
func (rn *Attached) Detach() error {
	if rn.stop != nil {
		rn.stop() // no cancel after this
	}
	rn.dog.stop()
	p := rn.p
	p.mu.Lock()
	err := p.send(Request{Op: OpDetach})
	p.mu.Unlock()
	rn.end(false)
	return err
}

// unwatch ends what watches the run from this side: the cancel watch, the watchdog, the stdin copy.
func (rn *Attached) unwatch() {
	if rn.stop != nil {
		rn.stop()
	}
	rn.dog.stop()
	if rn.closeIn != nil {
		rn.closeIn()
	}
}

// Release lets a started task go: the client stops listening and closes its end of the socket, which a
// detached supervisor ignores; the supervisor is reaped in the background if this process lives on.
// After Wait it does nothing.
func (rn *Attached) Release() { rn.end(false) }

// Close ends the run: its supervisor kills the tree (reference §11) and exits; Close waits for it. After Wait
// it does nothing (the supervisor may serve another run by then).
func (rn *Attached) Close() error {
	var err error
	rn.endOnce.Do(func() {
		rn.unwatch()
		err = rn.p.Close()
		if rn.home != nil {
			rn.home.ended(nil, false) // the pool counts it back; the supervisor is closed already
		}
	})
	return err
}

// release closes the socket and reaps the supervisor in the background.
func (p *child) release() {
	p.conn.Close()
	p.signal(unix.SIGCONT) // a stopped supervisor would never see the EOF
	go p.wait()
}

// signal sends sig to the supervisor, unless it was reaped (then its pid may be another process's).
func (p *child) signal(sig unix.Signal) {
	p.reapMu.Lock()
	defer p.reapMu.Unlock()
	if !p.reaped {
		_ = unix.Kill(p.spid, sig)
	}
}

// Bounds of the watchdog: how often a run past its end is woken, and how long past its timeout (or its
// cancel) and kill grace a supervisor may take to report before it counts as wedged. A supervisor that
// works needs far less: after the grace its sweep takes at most 2 s, the shell's reap 5 s and the drain
// 2 s.
const wakeEvery = time.Second

var wedgedAfter = 30 * time.Second // a variable for the tests

// watchdog keeps a run's end from depending on its supervisor being able to act: a command can stop its
// supervisor (`kill -STOP $PPID`; the supervisor is its parent), and a stopped supervisor fires no
// timeout and reads no cancel, so the run would never end and the client's own end (EOF, Close) would
// wait for it forever. From the run's timeout on (or from a cancel) the supervisor gets SIGCONT every
// wakeEvery; once wedgedAfter has passed beyond that and the kill grace, it is killed (SIGKILL: the
// shell dies with it, by its parent-death signal) and the run ends as a supervisor that died.
type watchdog struct {
	p      *child
	mu     sync.Mutex
	timer  *time.Timer
	kill   time.Time // when the supervisor counts as wedged
	done   bool
	killed bool // it did: the watchdog killed it
}

// errSocketClosed is the cause of [ErrDied] when the supervisor's socket closed before its done event.
var errSocketClosed error = socketClosed{}

type socketClosed struct{}

func (socketClosed) Error() string { return "its socket closed before the run's end" }
func (socketClosed) Unwrap() error { return io.EOF }

// orphansText ends the error of a run whose supervisor ended without a result once its command started (or,
// a quiet start, may have):
// the shell dies with its supervisor (its parent-death signal), but what the shell started does not, and
// nobody is left to end it (docs/architecture.md, "The supervisor itself SIGKILLed").
const orphansText = "processes the command started may still be running"

// wedgedText is added to the error of a run whose supervisor the watchdog killed.
const wedgedText = "the supervisor did not report its run's end in time (stopped by a signal?) and was killed"

// wedged reports whether the watchdog killed the supervisor; w may be nil.
func (w *watchdog) wedged() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killed
}

// watch starts the watchdog of a run with timeout and grace that starts now.
func (p *child) watch(timeout, grace time.Duration) *watchdog {
	w := &watchdog{p: p, kill: time.Now().Add(timeout + grace + wedgedAfter)}
	w.mu.Lock() // a tick that comes at once waits for the timer to be set
	w.timer = time.AfterFunc(timeout, w.tick)
	w.mu.Unlock()
	return w
}

func (w *watchdog) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if !time.Now().Before(w.kill) {
		w.p.signal(unix.SIGKILL)
		w.done, w.killed = true, true
		return
	}
	w.p.signal(unix.SIGCONT)
	w.timer.Reset(wakeEvery)
}

// cancelled moves the watchdog's bounds for a cancel with grace sent now.
func (w *watchdog) cancelled(grace time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if k := time.Now().Add(grace + wedgedAfter); k.Before(w.kill) {
		w.kill = k
	}
	w.timer.Reset(wakeEvery)
}

// stop ends the watchdog (the run ended); w may be nil.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.done = true
	w.timer.Stop()
	w.mu.Unlock()
}

// Close ends the supervisor: an idle one exits at once (EOF before a start request); one that runs a
// command kills its tree (reference §11). It waits for the process.
func (p *child) Close() error {
	p.conn.Close()
	p.signal(unix.SIGCONT) // a stopped supervisor would never see the EOF
	err := p.wait()
	if _, ended := errors.AsType[*EndedError](err); ended {
		return nil // how it ended says nothing the caller can act on
	}
	return err
}

// send writes req to the supervisor; p.mu is held.
func (p *child) send(req Request) error {
	b, err := req.appendJSON(nil)
	if err == nil {
		_, err = p.conn.Write(b)
	}
	return err
}

// cancelRequest is the "cancel" of a run whose context ended with cause: with the grace the cause names
// (a run.KillGraceCause, as run.Loop honours it in process), else the spec's.
func cancelRequest(cause error) Request {
	req := Request{Op: OpCancel}
	if g, ok := errors.AsType[run.KillGraceCause](cause); ok {
		grace := max(g.KillGrace(), 0)
		req.KillGrace = &grace
	}
	return req
}
