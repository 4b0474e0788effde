package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/livequeue"
	"github.com/agentbash/agentbash/pkg/memlimit"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// liveQueueBytes bounds the live output waiting for a slow client; past it the oldest lines are dropped
// from the live view (the result is complete).
const liveQueueBytes = 1 << 20

// errClientGone is the cancel cause when the client's end of the socket closed: the tree gets SIGTERM and,
// ClientGoneGrace later, SIGKILL.
var errClientGone = clientGone{}

// The cancel causes of a supervisor's runs, as run.Loop takes them.
var (
	_ run.KillGraceCause  = clientGone{}
	_ run.KillSignalCause = cancelled{}
	_ run.KillGraceCause  = cancelledWithGrace{}
)

type clientGone struct{}

func (clientGone) Error() string            { return "the client went away" }
func (clientGone) KillGrace() time.Duration { return ClientGoneGrace }

// cancelled is the cancel cause of a "cancel" request or of a signal to the supervisor: the spec's grace.
// kill, when set, is the signal the tree gets first (a task's `kill --signal`).
type cancelled struct{ signal, kill syscall.Signal }

// KillSignal is the signal the tree gets first: kill, else SIGTERM.
func (c cancelled) KillSignal() unix.Signal {
	if c.kill != 0 {
		return c.kill
	}
	return unix.SIGTERM
}

func (c cancelled) Error() string {
	if c.signal != 0 {
		return "cancelled by " + c.signal.String()
	}
	return "cancelled by the client"
}

// cancelledWithGrace is the cause of a "cancel" request that names its grace.
type cancelledWithGrace struct {
	cancelled
	grace time.Duration
}

func (c cancelledWithGrace) KillGrace() time.Duration { return c.grace }

// Main runs the supervisor on descriptor 3 and returns the process exit status: 0 when its runs were
// reported (or the client was gone), 2 when the socket or the first start request is broken. It resumes
// the supervisor Start handed over, if any.
func Main() int {
	s := handedOver
	handedOver = nil
	if s == nil {
		var code int
		if s, code = begin(); s == nil {
			return code
		}
	}
	return s.serve()
}

// Start is Main run from the init of a package initialized before net/http and everything the binary
// orders with it (pkg/supervisor/entry: a run waits for its supervisor's start, and those inits are most of
// it). It returns Main's status with done true, except when the first run needs the sandbox's proxy and
// no proxy server is registered yet (pkg/proxy/server registers from its init, which runs later): then it
// has read only that start request and returns done false, and Main, called once the rest of the program
// is initialized (pkg/reexec), serves it. A later run that needs the proxy, in a supervisor Start served,
// is answered "retired" (serve): it goes to another supervisor, whose first run it is.
func Start() (code int, done bool) {
	s, code := begin()
	if s == nil {
		return code, true
	}
	if needsProxy(s.first) && !proxy.Available() {
		handedOver = s
		return 0, false
	}
	return s.serve(), true
}

// handedOver is the supervisor Start handed over to Main.
var handedOver *supervisor

// needsProxy says whether req's run is sandboxed with network proxy: its stage hands this process a
// listener to serve (pkg/sandbox).
func needsProxy(req Request) bool {
	return req.Spec != nil && req.Spec.Sandbox != nil && req.Spec.Sandbox.Network == sandbox.NetworkProxy
}

// supervisor is a supervisor that has read its first start request (begin), and serves it and the next
// (serve).
type supervisor struct {
	conn  *net.UnixConn
	stdin *os.File
	in    *lines
	first Request
	reqs  *requests
}

// begin opens descriptor 3 and reads the first start request, or says why it cannot on stderr and
// returns nil and the exit status.
func begin() (*supervisor, int) {
	defaultProcs = runtime.GOMAXPROCS(0) // see procs.go
	f := os.NewFile(controlFD, "control")
	if f == nil {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": no control socket on descriptor 3 (internal command)")
		return nil, 2
	}
	c, err := net.FileConn(f)
	f.Close()
	conn, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": descriptor 3 is not a unix socket (internal command)")
		return nil, 2
	}
	s, err := readFirst(conn)
	if err != nil {
		conn.Close()
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+":", err)
		return nil, 2
	}
	return s, 0
}

// readFirst reads the client's descriptors and its first start request from conn.
func readFirst(conn *net.UnixConn) (*supervisor, error) {
	// While the client is still getting its command ready (or, for a spare, until a run comes): the
	// one-time work of the run, the codecs' reflection and the signal handlers, off the run's path.
	go run.Prepare()
	go warmCodecs()
	reqs := newRequests()
	handleSignals(reqs)
	stdin, err := receiveFiles(conn)
	if err != nil {
		return nil, err
	}
	// The first start request is read here, and the reader only starts after it: a `run` waits for this
	// one, and the main goroutine is locked to its thread (a hand-over from the reader would wake it).
	in := newLines(conn)
	line, err := in.next()
	if err != nil {
		return nil, fmt.Errorf("read start request: %w", err)
	}
	first, err := decodeRequest(line)
	if err != nil {
		return nil, fmt.Errorf("read start request: %w", err)
	}
	if first.Op != OpStart {
		return nil, fmt.Errorf("first request is %q, want %q", first.Op, OpStart)
	}
	return &supervisor{conn: conn, stdin: stdin, in: in, first: first, reqs: reqs}, nil
}

// serve runs the supervisor's first run and returns the exit status (see Main).
func (s *supervisor) serve() int {
	if err := serve(s.conn, s.stdin, s.in, s.first, s.reqs); err != nil {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+":", err)
		return 2
	}
	return 0
}

// serve runs the client's commands on conn: the first, and after it, when the client offered and the run
// left nothing behind (reusable), the next ones, up to MaxRuns. It returns an error only when the first
// start request is broken.
func serve(conn *net.UnixConn, stdin *os.File, in *lines, first Request, reqs *requests) error {
	defer conn.Close()
	reqs.mu.Lock()
	reqs.run = &watcher{} // what comes for it from now on is its own (see requests)
	reqs.mu.Unlock()
	go reqs.read(in)
	// What this process passes on to its commands before any ran, for the check after each run (below).
	// Only a run that offered reuse can be followed by another: `run` never offers it, and the reads
	// (some 25 µs) stay off its path.
	var inherited run.Inherited
	if first.Reuse {
		inherited = run.ReadInherited()
		// A supervisor that may serve more runs is a long-lived process: its heap paced small and the
		// code pages of the binary its start-up mapped handed back (pkg/memlimit), before its first run, whose
		// output may be gigabytes. Once per supervisor: its first run pays the page faults (a millisecond
		// or so), `run`'s never offers reuse.
		lean()
	}
	if first.Spec == nil {
		return errors.New("start request without a spec")
	}
	if first.Stdin && stdin == nil {
		return errors.New("start request wants stdin, but no descriptor came with it")
	}
	if !serveNext(conn, first, stdin, reqs, 1 < MaxRuns, inherited) {
		return nil
	}
	// The next runs are served from a goroutine, and the main thread only starts their shells
	// (run.ServeMainThread): the main goroutine is locked to its thread, so each time it waited (for the
	// next start, for the shell's end, for the drain) its thread handed its processor on and was woken
	// again, two thread wake-ups a time on the CPUs the commands need. The first run was served right
	// here, where its shell starts with no hand-over, as a `run` wants.
	served := make(chan error, 1)
	go func() { served <- serveMore(conn, reqs, inherited) }()
	return run.ServeMainThread(served)
}

// serveMore serves the runs after the first (see serve), from the second up to MaxRuns, while each is
// reusable.
func serveMore(conn *net.UnixConn, reqs *requests, inherited run.Inherited) error {
	for n := 2; ; n++ {
		req, ok := <-reqs.starts
		if !ok {
			return nil // the client closed its end between runs
		}
		if needsProxy(req) && !proxy.Available() {
			// A supervisor Start served, before the proxy's server was initialized: nothing ran, the
			// client gives the run to another supervisor (Start).
			_ = (&events{conn: conn}).send(Event{Op: OpDone, Kind: kindRetired,
				Error: "supervisor retired: it started without the sandbox's proxy"})
			return nil
		}
		if req.Spec == nil {
			return errors.New("start request without a spec")
		}
		if req.Stdin {
			return errors.New("start request wants stdin, but no descriptor came with it") // only the first's
		}
		if !serveNext(conn, req, nil, reqs, n < MaxRuns, inherited) {
			return nil
		}
	}
}

// serveNext serves req (serveRun) and reports whether this supervisor serves another run: the run allows
// it and what the supervisor passes on is unchanged (unchanged). It then makes that run's /dev/null and
// output pipe while the client reads this one's result (run.PrepareNext).
func serveNext(conn *net.UnixConn, req Request, stdin *os.File, reqs *requests, more bool, inherited run.Inherited) bool {
	if !serveRun(conn, req, stdin, reqs, more) || !unchanged(conn, reqs, inherited) {
		return false
	}
	run.PrepareNext()
	return true
}

// lean makes a supervisor that may serve more runs, or a task's, a long-lived process (a test replaces it).
var lean = memlimit.Lean

// unchanged reports whether what this process passes on to its commands is as it was (inherited): only
// then is another run served, since a command can change it from outside (renice, prlimit, taskset …
// $PPID). It is read after a run's done, while the client reads the result, not on the run's path; a
// supervisor found changed runs nothing more: it answers the next start "retired", and the client gives
// that run to a new supervisor.
func unchanged(conn *net.UnixConn, reqs *requests, inherited run.Inherited) bool {
	if run.ReadInherited() == inherited {
		return true
	}
	if _, ok := <-reqs.starts; ok {
		_ = (&events{conn: conn}).send(Event{Op: OpDone, Kind: kindRetired,
			Error: "supervisor retired: a command changed what it passes on to commands"})
	}
	return false
}

// kindRetired is the kind of the done event a reused supervisor answers a start with when it runs no
// more commands (serve): nothing ran, and the client starts the run on a new supervisor.
const (
	kindRetired = "retired"
	kindSandbox = "sandbox"
)

// MaxRuns bounds the runs one supervisor serves (reuse, see serve): past it the next run gets a new one.
const MaxRuns = 200

// serveRun runs the start request req to its end and reports it. It returns whether the supervisor may serve another run:
// the client offered, more allows one (MaxRuns), and the run was not a task, was not ended by the client
// going away, the supervisor got no signal during it (a signal asks it to end), and the run left no child
// (nothing of its tree is left, so the next run's tree is again exactly every descendant of this
// subreaper).
func serveRun(conn *net.UnixConn, req Request, stdin *os.File, reqs *requests, more bool) (reusable bool) {
	spec := *req.Spec
	ev := &events{conn: conn}
	var task *detached
	if spec.Task != nil {
		var err error
		if task, err = newDetached(spec.Task); err != nil {
			_ = ev.send(Event{Op: OpDone, Error: err.Error()})
			return false
		}
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var killSignal func() syscall.Signal
	if task != nil {
		killSignal = task.killSignal
	}
	watched := reqs.watch(cancel, task != nil && !spec.Task.Attached, killSignal)

	var live func(text []byte, totalBytes, totalLines int64)
	var async *livequeue.Writer
	if req.Live {
		async = livequeue.New(ev, liveQueueBytes)
		live = async.WriteCounted
	}
	out := newOutput(spec.Output, live)
	var outcome run.Outcome
	var runErr error
	if task != nil && out.created == "" {
		// A task's output is its artifact: without one it would be lost, so the task does not start.
		err := out.openErr
		if err == nil {
			err = errors.New("artifact not opened")
		}
		out.close()
		watched()
		_ = ev.send(Event{Op: OpDone, Error: "task not started: " + err.Error()})
		return false
	}
	var output io.Writer = out.sink
	var tail *tasks.TailWriter
	if task != nil {
		// Past the artifact cap a task's readers still get its newest output, from the tail segments.
		limit := spec.Output.ArtifactMaxBytes
		if limit <= 0 {
			limit = sink.DefaultArtifactMaxBytes
		}
		tail = &tasks.TailWriter{W: out.sink, Store: task.store, ID: task.id, Cap: limit}
		output = tail
	}
	startProcs(req)
	output = &procsChooser{w: output}
	var in io.Reader
	if stdin != nil {
		defer stdin.Close()
		in = stdin
	}
	// An interactive task is reached through a socket in the task store while its shell runs.
	var listening func()
	var reach func(*console.Console)
	if task != nil && spec.Interactive != nil {
		reach = func(c *console.Console) {
			var err error
			if listening, err = console.Listen(task.store.SocketPath(task.id), c); err != nil {
				task.warn(err.Error())
				cancel(cancelled{}) // a task nobody can give input to must not wait for it
			}
		}
	}
	var denied func([]proxy.Denial)
	if task != nil {
		denied = task.proxyDenied
	}
	// A task's supervisor keeps what its shell leaves running (detached.ownLeftovers): the loop sees
	// spec.Task.
	outcome, runErr = run.Loop{}.Run(ctx, spec, run.Streams{
		ProxyDenied: denied,
		Stdin:       in,
		Out:         output,
		LimitMet:    out.sink.LimitMet,
		Console:     reach,
		Started: func(pid int) {
			if task != nil {
				if err := task.started(pid, out); err != nil {
					cancel(cancelled{}) // a task nobody can find must not run on
				}
			}
			if !req.Quiet {
				_ = ev.send(Event{Op: OpStarted, Pid: pid})
			}
			if task != nil {
				// A task's supervisor lives as long as its task, days maybe: a long-lived process, made
				// lean as a pool's supervisor is (its start-up's pages of the binary handed back), off the
				// start's path.
				go lean()
			}
		},
	})
	if listening != nil {
		listening()
	}
	if tail != nil {
		tail.Close()
	}
	summary := out.close()
	if task != nil {
		task.finished(ctx, outcome, summary, runErr)
	}
	if async != nil {
		async.Close()
	}
	done := doneEvent(outcome, summary, runErr)
	if task != nil && task.rec.Leftovers > 0 {
		// The task's shell ended, what it started runs on, and the task owns it to the end: the client
		// gets the result now, and this process stays the leftovers' subreaper until they are gone, a
		// signal (`kill`) or tasks.maxLifetime ends them. It runs nothing more.
		leftovers, end := context.WithCancelCause(context.Background())
		defer end(nil)
		reqs.keep(end)
		if context.Cause(ctx) != errClientGone {
			_ = ev.send(done)
		}
		task.ownLeftovers(leftovers, spec.KillGrace)
		watched()
		return false
	}
	// From here on a signal ends the supervisor as a spare's does, and the client's next requests are
	// the next run's.
	signalled := watched()
	if context.Cause(ctx) == errClientGone {
		return false // nobody to tell
	}
	done.Reusable = req.Reuse && task == nil && stdin == nil && spec.Interactive == nil && !signalled &&
		len(outcome.LeftoverPids) == 0 && more && run.Childless()
	if ev.send(done) != nil {
		return false // a client that left meanwhile cannot be told; its tree is gone anyway
	}
	return done.Reusable
}

// doneEvent is the done event of a run that ended with outcome and summary, or with runErr.
func doneEvent(outcome run.Outcome, summary sink.Summary, runErr error) Event {
	done := Event{Op: OpDone}
	switch {
	case runErr == nil:
		done.Outcome, done.Summary = &outcome, &summary
	case errors.Is(runErr, run.ErrShellNotFound):
		done.Error, done.Kind = runErr.Error(), "shell"
	case errors.Is(runErr, run.ErrWrapperNotFound):
		done.Error, done.Kind = runErr.Error(), "wrapper"
	case errors.Is(runErr, sandbox.ErrUnavailable):
		done.Error, done.Kind = runErr.Error(), kindSandbox
	default:
		done.Error = runErr.Error()
	}
	return done
}

// requests routes what can end a run to the run: the client's requests after its first start request
// (which serve reads itself), read for the supervisor's whole life (read), and the signals sent to the
// supervisor (handleSignals). A later "start" goes to starts (to the loop waiting for a run) and from that moment the run is the one the
// client's cancels and the signals are for, even before it is under way: what comes for it meanwhile is
// kept and applied when it starts (watch). Between runs a cancel is dropped (it was for a run that
// ended) and a signal ends the supervisor. On EOF or a broken request (the client exited or was killed)
// the run in progress is told and starts is closed.
type requests struct {
	starts chan Request
	// signalsSet is closed once the signal handlers are installed (handleSignals); a run waits for it
	// before it starts.
	signalsSet chan struct{}

	mu   sync.Mutex
	run  *watcher // the run whose start was handed on, nil between runs
	gone bool     // reading ended
}

// watcher is what a run does with the requests and signals that come for it.
type watcher struct {
	cancel     context.CancelCauseFunc // nil until the run is under way (watch)
	early      error                   // the first cancel cause that came before that
	detached   bool                    // a detached task ignores EOF
	killSignal func() syscall.Signal   // a task's: the signal its tree gets first on a signal; nil: SIGTERM
	signalled  bool                    // a signal came for the run
	sigCause   error                   // the cause the last signal cancelled the run with
	leftovers  bool                    // the run ended; what it left running is watched (keep)
}

// stop cancels the run with cause, or keeps cause for it until it is under way. r.mu is held.
func (w *watcher) stop(cause error) {
	if w.cancel != nil {
		w.cancel(cause)
	} else if w.early == nil {
		w.early = cause
	}
}

// newRequests returns the requests of a supervisor that has no run yet and no signal handlers.
func newRequests() *requests {
	return &requests{starts: make(chan Request), signalsSet: make(chan struct{})}
}

// read decodes the client's requests after the first start from in until EOF or a broken request.
func (r *requests) read(in *lines) {
	for {
		line, err := in.next()
		var req Request
		if err == nil {
			req, err = decodeRequest(line)
		}
		if err != nil {
			r.mu.Lock()
			r.gone = true
			if w := r.run; w != nil && !w.detached && w.cancel != nil {
				w.cancel(errClientGone) // one not under way yet is told by watch
			}
			r.mu.Unlock()
			close(r.starts)
			return
		}
		r.mu.Lock()
		if req.Op == OpStart {
			busy := r.run != nil
			if !busy {
				r.run = &watcher{}
			}
			r.mu.Unlock()
			if !busy { // a start while a run is in progress breaks the protocol: dropped
				r.starts <- req
			}
			continue
		}
		if w := r.run; w != nil {
			switch req.Op {
			case OpCancel:
				if w.leftovers {
					break // a cancel of the run, which has ended
				}
				if req.KillGrace != nil {
					w.stop(cancelledWithGrace{grace: max(*req.KillGrace, 0)})
				} else {
					w.stop(cancelled{})
				}
			case OpDetach:
				w.detached = true
			}
		}
		r.mu.Unlock()
	}
}

// watch makes the run with cancel the one the client's requests and the signals go to: "cancel" cancels
// it with the grace it names, else the spec's; "detach" makes an attached task a detached one; EOF
// cancels it with ClientGoneGrace, unless it is a detached task, which goes on; a signal cancels it
// (the tree gets killSignal's signal first, when set). What came since its start request applies now.
// The function returned ends that, and says whether a signal came for the run.
func (r *requests) watch(cancel context.CancelCauseFunc, detached bool, killSignal func() syscall.Signal) (end func() (signalled bool)) {
	<-r.signalsSet // a run gets under way only with the signal handlers in place
	r.mu.Lock()
	w := r.run
	if w == nil { // not handed on (serve and read always do): under way from now
		w = &watcher{}
		r.run = w
	}
	w.cancel, w.killSignal = cancel, killSignal
	w.detached = w.detached || detached
	if w.early != nil {
		cancel(w.early)
	}
	if r.gone && !w.detached {
		cancel(errClientGone)
	}
	r.mu.Unlock()
	return func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.run = nil
		return w.signalled
	}
}

// keep makes the watch of the run that ended the watch of what a task's shell left running (see
// detached.ownLeftovers): from now on a signal to the supervisor cancels with cancel (a signal that came
// after the shell ended does so at once), while the client's cancels and its end no longer reach it: they
// are about the run, and the leftovers of a run that ended are not killed when its client goes.
func (r *requests) keep(cancel context.CancelCauseFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.run
	if w == nil {
		return // not under way (watch makes it so): only a signal's default action could end it then
	}
	w.cancel, w.detached, w.leftovers = cancel, true, true
	if w.sigCause != nil {
		cancel(w.sigCause)
	}
}

// signal is a signal sent to the supervisor: it cancels the run, if there is one; else it ends the
// supervisor as it would without a handler.
func (r *requests) signal(s syscall.Signal) {
	r.mu.Lock()
	if w := r.run; w != nil {
		c := cancelled{signal: s}
		if w.killSignal != nil {
			c.kill = w.killSignal()
		}
		w.signalled, w.sigCause = true, c
		w.stop(c)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	signal.Reset(s)
	_ = unix.Kill(os.Getpid(), s)
}

// handleSignals hands SIGTERM, SIGINT and SIGHUP sent to the supervisor itself to r.signal: during a run
// they cancel it (so killing a supervisor politely never leaves its tree behind); while no run is in
// progress they end the supervisor. The handlers are installed in the background (signal.Notify starts
// a thread, a third of a millisecond here, which a `run` would otherwise wait for before its start
// request is read); r.signalsSet says when they are.
func handleSignals(r *requests) {
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		close(r.signalsSet)
		for sig := range ch {
			r.signal(sig.(syscall.Signal))
		}
	}()
}

// warmCodecs encodes and decodes what of the protocol's messages goes through encoding/json once, so the
// reflection encoding/json does on a type's first use is not paid by the run (a spare supervisor does it
// while it waits): a terminal's screen and the proxy's refusals in a done event, and a Request, as
// encoding/json reads one the parser does not take (see codec.go); its spec here is one the spec's own
// parser reads (run.Spec.UnmarshalJSON), so a sandbox's or a terminal's spec is still read cold.
func warmCodecs() {
	_, _ = Event{Op: OpDone, Outcome: &run.Outcome{Screen: &screen.Screen{}, ProxyDenied: []proxy.Denial{{}}}}.appendJSON(nil)
	var req Request
	b, _ := Request{Op: OpStart, Spec: &run.Spec{Env: run.RawList{}, Task: &run.Task{}}}.appendJSON(nil)
	_ = json.Unmarshal(b, &req)
}

// receiveFiles reads the one-byte message that opens the stream and the descriptors it carries: none, or
// the command's stdin.
func receiveFiles(conn *net.UnixConn) (*os.File, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("read descriptors: %w", err)
	}
	if oobn == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("read descriptors: bad control message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("read descriptors: want one, got %d", len(fds))
	}
	unix.CloseOnExec(fds[0])
	return os.NewFile(uintptr(fds[0]), "stdin"), nil
}

// events writes events to conn, one JSON object a line each; it is an io.Writer of live output.
type events struct {
	conn   io.Writer
	mu     sync.Mutex
	buf    []byte // the last event's, for the next, unless it grew past keptEventBytes
	failed bool
}

// keptEventBytes bounds the buffer events keeps between two events.
const keptEventBytes = 64 << 10

func (e *events) send(ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed {
		return errors.New("client gone")
	}
	b, err := ev.appendJSON(e.buf[:0])
	if err == nil {
		_, err = e.conn.Write(b)
	}
	if err != nil {
		e.failed = true
		return err
	}
	if cap(b) <= keptEventBytes {
		e.buf = b
	}
	return nil
}

// Write sends p as one output event; it never fails (a gone client is the watcher's business).
func (e *events) Write(p []byte) (int, error) {
	_ = e.send(Event{Op: OpOutput, Text: string(p)})
	return len(p), nil
}

// WriteCounted sends live text with the sink's counts at its end (livequeue.Counted).
func (e *events) WriteCounted(text []byte, skipped, totalBytes, totalLines int64) error {
	return e.send(Event{Op: OpOutput, Text: string(text), TotalBytes: totalBytes, TotalLines: totalLines, Skipped: skipped})
}
