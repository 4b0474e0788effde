package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/supervisor/early"
)

// ErrDied is returned (wrapped) when a supervisor ended without reporting how its run ended.
var ErrDied = errors.New("supervisor exited without a result")

// Local is the local backend ([run.Executor]): each run gets its own supervisor process. It may keep
// supervisors started ahead, so a run does not wait for a supervisor's exec: one for the next run
// ([Local.Prewarm], what `run` does), or a pool of Spares refilled in the background after each take (a
// long-lived client: rpc, mcp). A spare is an idle supervisor waiting for its start request; it exits by
// itself when its socket closes, so none outlives this process. Its methods are safe for concurrent use;
// after Close, runs still work but no spare is kept.
type Local struct {
	// Spares is how many idle supervisors to keep ready; 0 keeps only what Prewarm started.
	Spares int

	mu      sync.Mutex
	spares  []*Process
	filling bool // a refill goroutine runs
	closed  bool
	fill    sync.WaitGroup
	shells  map[string]string // shell as configured → the path found, for Resolve
}

var _ run.Executor = (*Local)(nil)

// Prewarm starts a supervisor now for the next Start to take, unless one is ready; with Spares set it
// fills the pool in the background instead. A failure is left for Start to report.
func (l *Local) Prewarm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.Spares > 0 {
		l.refill()
		return
	}
	if len(l.spares) == 0 {
		if p, err := Spawn(); err == nil {
			l.spares = append(l.spares, p)
		}
	}
}

// refill starts the goroutine that spawns spares up to Spares, unless it runs. l.mu is held.
func (l *Local) refill() {
	if l.filling || l.closed || len(l.spares) >= l.Spares {
		return
	}
	l.filling = true
	l.fill.Add(1)
	go func() {
		defer l.fill.Done()
		for {
			p, err := Spawn()
			l.mu.Lock()
			if err != nil || l.closed || len(l.spares) >= l.Spares {
				l.filling = false
				l.mu.Unlock()
				if p != nil {
					p.Close()
				}
				return // a failed spawn is retried by the next take; Start reports its own
			}
			l.spares = append(l.spares, p)
			full := len(l.spares) >= l.Spares
			if full {
				l.filling = false
			}
			l.mu.Unlock()
			if full {
				return
			}
		}
	}()
}

// take returns a spare, or nil, and starts a refill: the new supervisor's start-up overlaps the run.
func (l *Local) take() *Process {
	l.mu.Lock()
	defer l.mu.Unlock()
	var p *Process
	if n := len(l.spares); n > 0 {
		p = l.spares[n-1]
		l.spares[n-1] = nil
		l.spares = l.spares[:n-1]
	}
	l.refill()
	return p
}

// Close ends the idle supervisors and keeps no more: each exits at once (EOF before a start request)
// and is reaped. It waits for a refill under way.
func (l *Local) Close() error {
	l.mu.Lock()
	l.closed = true
	spares := l.spares
	l.spares = nil
	l.mu.Unlock()
	l.fill.Wait()
	var errs []error
	for _, p := range spares {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Resolve resolves the shell and working directory on this machine (run.FindShell, run.ResolveDir).
func (l *Local) Resolve(shell, dir string) (run.Target, error) {
	t := run.Target{Shell: shell}
	sh, shErr := l.findShell(shell)
	if shErr == nil {
		t.Shell = sh
	}
	home, _ := os.UserHomeDir()
	d, dirErr := run.ResolveDir(dir, home)
	t.Dir = d
	if dirErr != nil {
		return t, dirErr // the working directory is checked first (SPEC §3.4)
	}
	return t, shErr
}

// findShell is run.FindShell, remembered: a long-lived client looks the shell up in PATH once, and
// after that only checks that the file found is still an executable (a removed or replaced shell is
// looked up again). PATH of this process does not change, so the answer does not either.
func (l *Local) findShell(shell string) (string, error) {
	l.mu.Lock()
	sh, ok := l.shells[shell]
	l.mu.Unlock()
	if ok {
		if fi, err := os.Stat(sh); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return sh, nil
		}
	}
	sh, err := run.FindShell(shell)
	if err != nil {
		return sh, err
	}
	l.mu.Lock()
	if l.shells == nil {
		l.shells = map[string]string{}
	}
	l.shells[shell] = sh
	l.mu.Unlock()
	return sh, nil
}

// Start hands r to a supervisor (the one started ahead, or a new one) and returns once the shell runs.
func (l *Local) Start(ctx context.Context, r run.Request) (run.Process, error) {
	p := l.take()
	spare := p != nil
	if p == nil {
		var err error
		if p, err = Spawn(); err != nil {
			return nil, err
		}
	}
	err := p.start(ctx, r)
	if spare && r.Stdin == nil && errors.Is(err, errNotSent) {
		// The spare was gone before it got the run (killed while it waited): nothing ran, so a new
		// supervisor gets it.
		if p, err = Spawn(); err == nil {
			err = p.start(ctx, r)
		}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// errNotSent marks a start that failed before any of the start request reached the supervisor.
var errNotSent = errors.New("start request not sent")

// Process is a supervisor process: waiting for its run (see [Spawn]) or running it. It implements
// [run.Process] once started.
type Process struct {
	mu       sync.Mutex    // guards enc
	enc      *json.Encoder // the requests to the supervisor, once started
	spid     int           // the supervisor's
	conn     *net.UnixConn
	used     bool
	pid      int // the shell's
	dec      *json.Decoder
	live     func(string)
	stop     func() bool // ends the cancel watch
	closeIn  func()      // ends the stdin copy, if any
	waitOnce sync.Once
	waitErr  error
}

// Spawn starts a supervisor process: this executable (/proc/self/exe) as `agentbash __supervise`. It has
// its own session (no terminal signals reach it), /dev/null for its standard streams, and the other end of
// a socket pair as descriptor 3. It waits for its run; if the
// caller drops it instead, [Process.Close] ends it.
func Spawn() (*Process, error) {
	run.CloseInheritedDescriptors() // the supervisor, like the command, never holds its caller's pipes
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
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
	pid, err := syscall.ForkExec("/proc/self/exe", []string{early.Argv0(), Command}, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{null.Fd(), null.Fd(), null.Fd(), theirs.Fd()}, // descriptor 3: the socket
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("supervisor: start: %w", err)
	}
	return &Process{spid: pid, conn: c.(*net.UnixConn)}, nil
}

// start sends r and waits for the shell to run (or for the error that kept it from running).
func (p *Process) start(ctx context.Context, r run.Request) error {
	if p.used {
		return errors.New("supervisor: a supervisor runs one command")
	}
	p.used = true
	spec := Spec{Command: r.Command, Shell: r.Target.Shell, Dir: r.Target.Dir, Env: r.Env, Wrapper: r.Wrapper,
		Timeout: r.Timeout, KillGrace: r.KillGrace, Output: r.Output, Live: r.Live != nil, Task: r.Task}
	var rights []byte
	if r.Stdin != nil {
		f, closeIn, err := stdinFile(r.Stdin)
		if err != nil {
			p.Close()
			return err
		}
		defer f.Close() // the supervisor has its own copy once it is sent
		p.closeIn = closeIn
		spec.Stdin, rights = true, unix.UnixRights(int(f.Fd()))
	}
	// One message opens the stream: a byte carrying the descriptors, then the start request, so the
	// supervisor wakes once for both (a stream socket may take less than all of it: the rest follows).
	var buf bytes.Buffer
	buf.WriteByte(0)
	if err := json.NewEncoder(&buf).Encode(Request{Op: OpStart, Spec: &spec}); err != nil {
		p.Close()
		return fmt.Errorf("supervisor: encode start request: %w", err)
	}
	n, _, err := p.conn.WriteMsgUnix(buf.Bytes(), rights, nil)
	if err != nil && n == 0 {
		return p.died(fmt.Errorf("send start request: %w: %w", errNotSent, err))
	}
	if err == nil && n < buf.Len() {
		_, err = p.conn.Write(buf.Bytes()[n:])
	}
	if err != nil {
		return p.died(fmt.Errorf("send start request: %w", err))
	}
	mu, enc := &p.mu, json.NewEncoder(p.conn) // the encoder is shared by a cancel and a detach
	p.enc = enc
	p.stop = context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(cancelRequest(context.Cause(ctx)))
	})
	p.dec, p.live = json.NewDecoder(p.conn), r.Live
	for {
		ev, err := p.next()
		if err != nil {
			return err
		}
		switch ev.Op {
		case OpStarted:
			p.pid = ev.Pid
			return nil
		case OpDone:
			p.Close()
			return doneError(ev)
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

// next reads the next event, passing output events to live.
func (p *Process) next() (Event, error) {
	for {
		var ev Event
		if err := p.dec.Decode(&ev); err != nil {
			return Event{}, p.died(err)
		}
		if ev.Op != OpOutput {
			return ev, nil
		}
		if p.live != nil {
			p.live(ev.Text)
		}
	}
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
func (p *Process) Pid() int { return p.pid }

// SupervisorPid is the supervisor's own process id.
func (p *Process) SupervisorPid() int { return p.spid }

// Wait reads the run to its end (see [run.Process]). The supervisor exits by itself after it reported;
// Wait reaps it in the background rather than wait for its exit.
func (p *Process) Wait() (run.Outcome, error) {
	defer p.release()
	for {
		ev, err := p.next()
		if err != nil {
			return run.Outcome{}, err
		}
		if ev.Op != OpDone {
			continue
		}
		if ev.Outcome == nil || ev.Summary == nil {
			return run.Outcome{}, doneError(ev)
		}
		o := *ev.Outcome
		o.Summary = *ev.Summary
		return o, nil
	}
}

// died describes a supervisor that stopped talking: how it exited, if it did.
func (p *Process) died(cause error) error {
	p.conn.Close()
	if err := p.wait(); err != nil {
		return fmt.Errorf("%w (%v; %w)", ErrDied, err, cause)
	}
	return fmt.Errorf("%w (%w)", ErrDied, cause)
}

// wait reaps the supervisor once. The error is how it ended when that was not exit status 0 (an
// *EndedError), or the failure of the wait itself.
func (p *Process) wait() error {
	p.waitOnce.Do(func() {
		var ws syscall.WaitStatus
		var err error
		for {
			if _, err = syscall.Wait4(p.spid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
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
func (p *Process) Detach() error {
	if p.stop != nil {
		p.stop() // no cancel after this
	}
	p.mu.Lock()
	err := p.enc.Encode(Request{Op: OpDetach})
	p.mu.Unlock()
	p.release()
	return err
}

// Release lets a started task go: the client stops listening and closes its end of the socket, which a
// detached supervisor ignores; the supervisor is reaped in the background if this process lives on.
func (p *Process) Release() { p.release() }

// release closes the socket and reaps the supervisor in the background.
func (p *Process) release() {
	if p.stop != nil {
		p.stop()
	}
	if p.closeIn != nil {
		p.closeIn()
	}
	p.conn.Close()
	go p.wait()
}

// Close ends the supervisor: one that has not started a command exits at once (EOF before a start
// request); one that runs a command kills its tree (SPEC §11). It waits for the process.
func (p *Process) Close() error {
	if p.stop != nil {
		p.stop()
	}
	if p.closeIn != nil {
		p.closeIn()
	}
	p.conn.Close()
	err := p.wait()
	if _, ended := errors.AsType[*EndedError](err); ended {
		return nil // how it ended says nothing the caller can act on
	}
	return err
}

// cancelRequest is the "cancel" of a run whose context ended with cause: with the grace the cause names
// (a KillGrace method, as run.Local honours it in process), else the spec's.
func cancelRequest(cause error) Request {
	req := Request{Op: OpCancel}
	if g, ok := cause.(interface{ KillGrace() time.Duration }); ok {
		grace := max(g.KillGrace(), 0)
		req.KillGrace = &grace
	}
	return req
}
