package rpc

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/service"
)

// Causes of a cancel, for the pipeline's result (status cancelled either way).
var (
	// ErrAborted cancels a command an abort_bash request named.
	ErrAborted = errors.New("aborted by an abort_bash request")
	// ErrInputClosed cancels the running commands when the requests' stream ended (EOF): the caller went
	// away, so their trees end as a dead caller's do, with run.ClientGoneGrace between SIGTERM and
	// SIGKILL rather than the configured grace (docs/architecture.md, "agentbash rpc"): a target whose
	// connection drops leaves nothing running.
	ErrInputClosed error = inputClosed{}
	// ErrOutputClosed cancels them when the responses cannot be written any more.
	ErrOutputClosed = errors.New("the client stopped reading")
)

// inputClosed is the type of ErrInputClosed, a run.KillGraceCause: the runs it cancels take its grace.
type inputClosed struct{}

func (inputClosed) Error() string            { return "the client closed its input" }
func (inputClosed) KillGrace() time.Duration { return run.ClientGoneGrace }

// Intervals of the server (reference §7.2: at most 10 updates a second).
const (
	UpdateInterval = 100 * time.Millisecond // least time between two updates of one request
	WatchInterval  = 100 * time.Millisecond // how often the records of this server's tasks are read
)

// bigBuffer is the capacity past which the line buffer is dropped after a line, so one huge request does
// not keep its memory for the life of the server.
const bigBuffer = 1 << 20

// Server serves rpc requests with one service (and its executor: the place the commands run), and, when For
// is set, with the service of the target a request names. Its fields are set before Serve.
type Server struct {
	Service *service.Service
	// For, when set, is the service of a request's "target" (README "Targets"): the server's own for "",
	// another target's when the server allows it (service.Places.For), else an error naming the target,
	// which is the request's error response. Unset, a request naming a target is refused.
	For func(target string) (*service.Service, error)
	// Defaults are the fields of every bash and start request that the request does not give (the rpc
	// command's run flags: cwd, head, tail, noNormalize, session).
	Defaults request.Command
	// Log receives the server's own problems (stderr); nil discards them.
	Log io.Writer
	// Version is this agentbash's version, for the hello response.
	Version string
	// Forwards is the target this server runs its commands on when that is not this machine: hello then
	// refuses, so no target's agentbash forwards on (reference §15).
	Forwards string
}

// call is one request being served.
type call struct {
	m      Message
	svc    *service.Service // the service of its target
	seq    uint64           // arrival order
	ctx    context.Context
	cancel context.CancelCauseFunc
	q      *queue // the session queue it waits in; nil once it runs
}

// queue is one session's requests in arrival order; a drain goroutine runs them one at a time while the
// queue is not empty, and it is dropped when it is.
type queue struct {
	key   placed
	calls []*call
}

// placed names a session or a task on one place: names and ids are per target.
type placed struct {
	svc  *service.Service
	name string
}

// loop is one Serve: what runs, what waits, the writer and the task watcher.
type loop struct {
	s   *Server
	out io.Writer
	// agent is set once a hello was answered: the caller is another agentbash, and results carry their parts.
	agent atomic.Bool

	wmu    sync.Mutex // one message is one Write, never interleaved
	werr   error
	broken chan struct{} // closed when a write failed

	base      context.Context // every call's context derives from it
	cancelAll context.CancelCauseFunc

	mu      sync.Mutex
	seq     uint64
	calls   map[*call]struct{} // abortable: queued, or a foreground bash running
	queues  map[placed]*queue  // the sessions with requests running or queued
	closing bool
	tasks   map[placed]struct{} // tasks started here whose end was not pushed yet
	watcher bool                // the watch goroutine runs
	stop    chan struct{}       // ends the watcher and the idle workers at shutdown
	wg      sync.WaitGroup      // calls not answered yet

	idle    chan *call   // hands a call to a worker waiting for one (run)
	waiting atomic.Int32 // workers waiting for a call
}

// maxIdleWorkers bounds the goroutines that wait for the next call after serving one (run).
const maxIdleWorkers = 4

// Serve reads requests from in and writes responses and events to out, one JSON object per line, until
// in ends (EOF: the running commands are cancelled and answered, then Serve returns nil), ctx is cancelled
// (the same, with ctx's cause as the cancel's: a signal), or out cannot be written. Tasks run on in every
// case. The error is a failed read or write.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	l := &loop{s: s, out: out, broken: make(chan struct{}), calls: map[*call]struct{}{},
		queues: map[placed]*queue{}, tasks: map[placed]struct{}{}, stop: make(chan struct{}), idle: make(chan *call)}
	l.base, l.cancelAll = context.WithCancelCause(context.WithoutCancel(ctx))
	read := make(chan error, 1)
	go func() { read <- l.read(in) }()
	var cause, rerr error
	select {
	case rerr = <-read:
		cause = ErrInputClosed
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case <-l.broken:
		cause = ErrOutputClosed
	}
	l.shutdown(cause)
	l.wmu.Lock()
	werr := l.werr
	l.wmu.Unlock()
	switch {
	case werr != nil:
		return fmt.Errorf("rpc: write: %w", werr)
	case rerr != nil && !errors.Is(rerr, io.EOF):
		return fmt.Errorf("rpc: read: %w", rerr)
	}
	return nil
}

// read reads request lines and dispatches each (reference §7.2): empty lines are skipped, a line over MaxLine
// is read to its newline without being kept and answered with an error.
func (l *loop) read(in io.Reader) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var buf []byte
	for {
		line, tooLong, err := readLine(br, buf[:0])
		switch {
		case tooLong:
			l.send(Response{ID: null, Type: TypeResponse, Error: fmt.Sprintf(
				"request line too long: more than %d MiB (send large commands in a file and run it)", MaxLine>>20)})
		case len(bytes.TrimSpace(line)) > 0:
			l.dispatch(line)
		}
		if cap(line) > bigBuffer {
			line = nil
		}
		buf = line
		if err != nil {
			return err
		}
	}
}

// readLine reads one line into buf (without its newline) from br. A line longer than MaxLine is read to
// its end but not kept: tooLong, and an empty line.
func readLine(br *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong && len(buf)+len(chunk) > MaxLine {
			tooLong, buf = true, buf[:0]
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(buf) == 0 && !tooLong {
			return buf, false, err
		}
		return buf, tooLong, err
	}
}

// dispatch decodes one request and starts serving it: abort_bash at once on the reader's goroutine,
// a request of a session at the end of that session's queue, any other on a goroutine of its own.
func (l *loop) dispatch(line []byte) {
	m, err := Decode(line, l.s.Defaults)
	if de, ok := errors.AsType[*DecodeError](err); ok {
		l.send(Response{ID: de.ID, Type: TypeResponse, Command: de.Type, Error: de.Msg})
		return
	}
	if m.Type == TypeAbort {
		l.abort(m.ID, m.Abort)
		return
	}
	if m.Type == TypeHello {
		l.hello(m)
		return
	}
	svc, err := l.s.service(m.Target)
	if err != nil {
		l.send(Response{ID: m.ID, Type: TypeResponse, Command: m.Type, Error: err.Error()})
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return // a request read after a signal: nobody will run it
	}
	l.seq++
	c := &call{m: m, svc: svc, seq: l.seq}
	c.ctx, c.cancel = context.WithCancelCause(l.base)
	l.wg.Add(1)
	if m.Bash != nil && m.Bash.Session != "" {
		// Requests of one session run in arrival order (reference §7.2), one at a time; queued ones can be
		// aborted without running.
		key := placed{svc, m.Bash.Session}
		q := l.queues[key]
		if q == nil {
			q = &queue{key: key}
			l.queues[key] = q
			go l.drain(q)
		}
		q.calls = append(q.calls, c)
		c.q = q
		l.calls[c] = struct{}{}
		return
	}
	if m.Bash != nil && !m.Bash.Background {
		l.calls[c] = struct{}{}
	}
	l.run(c)
}

// run serves c on a goroutine of its own: one that served an earlier call and waits for the next, when
// there is one, else a new one. A goroutine keeps its stack, grown for the calls it served, so the next
// call's is not grown again (each growth copies the stack: some 15 µs a request on a new goroutine).
func (l *loop) run(c *call) {
	select {
	case l.idle <- c:
	default:
		go l.work(c)
	}
}

// work serves c, then waits for the next call (run) while fewer than maxIdleWorkers others wait, until the
// loop stops.
func (l *loop) work(c *call) {
	for {
		l.serve(c)
		l.wg.Done()
		if l.waiting.Add(1) > maxIdleWorkers {
			l.waiting.Add(-1)
			return
		}
		select {
		case c = <-l.idle:
			l.waiting.Add(-1)
		case <-l.stop:
			l.waiting.Add(-1)
			return
		}
	}
}

// drain runs q's requests one after the other until q is empty, then drops it.
func (l *loop) drain(q *queue) {
	for {
		l.mu.Lock()
		if len(q.calls) == 0 {
			delete(l.queues, q.key)
			l.mu.Unlock()
			return
		}
		c := q.calls[0]
		q.calls[0] = nil
		q.calls = q.calls[1:]
		c.q = nil
		if c.m.Bash.Background {
			delete(l.calls, c) // a start is not a running command: nothing to abort
		}
		l.mu.Unlock()
		l.serve(c)
		l.wg.Done()
	}
}

// serve runs one request and writes its response.
func (l *loop) serve(c *call) {
	defer func() {
		l.mu.Lock()
		delete(l.calls, c)
		l.mu.Unlock()
		c.cancel(nil)
	}()
	switch {
	case c.m.Bash != nil:
		l.bash(c)
	case c.m.Output != nil:
		l.output(c)
	case c.m.Input != nil:
		l.input(c)
	case c.m.Kill != nil:
		l.kill(c)
	case c.m.Wait != nil:
		l.wait(c)
	case c.m.Tasks != nil:
		l.list(c)
	case c.m.Store != nil:
		l.store(c)
	}
}

// abort cancels the requests whose id is target (every one when target is nil) that are running or
// queued (reference §7.2). Its response comes first; then the queued ones are answered cancelled without
// running, and the running ones are cancelled (their own responses follow as they end).
func (l *loop) abort(id json.RawMessage, a *Abort) {
	target := a.Target
	var cause error = ErrAborted
	if a.KillGrace != nil {
		cause = abortedWithGrace{run.Seconds(*a.KillGrace)}
	}
	l.mu.Lock()
	var hit []*call
	for c := range l.calls {
		if target == nil || bytes.Equal(c.m.ID, target) {
			hit = append(hit, c)
			delete(l.calls, c)
		}
	}
	slices.SortFunc(hit, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	var queued []*call
	for _, c := range hit {
		if q := c.q; q != nil {
			q.calls = slices.DeleteFunc(q.calls, func(x *call) bool { return x == c })
			c.q = nil
			queued = append(queued, c)
		}
	}
	l.mu.Unlock()
	aborted := make([]json.RawMessage, len(hit))
	for i, c := range hit {
		aborted[i] = c.m.ID
	}
	l.send(Response{ID: id, Type: TypeResponse, Command: TypeAbort, Success: true,
		Data: map[string]any{"aborted": aborted}})
	for _, c := range hit {
		if slices.Contains(queued, c) {
			l.cancelQueued(c)
		} else {
			c.cancel(cause)
		}
	}
}

// abortedWithGrace is ErrAborted with the grace the abort asked for.
type abortedWithGrace struct{ grace time.Duration }

func (abortedWithGrace) Error() string              { return ErrAborted.Error() }
func (abortedWithGrace) Unwrap() error              { return ErrAborted }
func (a abortedWithGrace) KillGrace() time.Duration { return a.grace }

var _ run.KillGraceCause = abortedWithGrace{}

// cancelQueued answers a request taken out of its session's queue: cancelled, never run.
func (l *loop) cancelQueued(c *call) {
	c.cancel(ErrAborted)
	l.respond(c, c.svc.Cancelled(c.m.Bash.Command))
	l.wg.Done()
}

// shutdown ends the loop (EOF, a signal, a broken output): nothing new is served, queued requests are
// answered cancelled, running ones are cancelled with cause and answered; tasks run on.
func (l *loop) shutdown(cause error) {
	l.mu.Lock()
	l.closing = true
	var queued []*call
	for c := range l.calls {
		if c.q != nil {
			c.q.calls = slices.DeleteFunc(c.q.calls, func(x *call) bool { return x == c })
			c.q = nil
			queued = append(queued, c)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(queued, func(a, b *call) int { return cmp.Compare(a.seq, b.seq) })
	for _, c := range queued {
		l.cancelQueued(c)
	}
	l.cancelAll(cause)
	l.wg.Wait()
	close(l.stop)
}

// bash runs a bash or start request: in the foreground (streaming updates when asked), as a task, or
// in the foreground until its yield.
func (l *loop) bash(c *call) {
	b, svc := c.m.Bash, c.svc
	var r result.Result
	switch {
	case c.ctx.Err() != nil:
		r = svc.Cancelled(b.Command) // aborted before it could start
	case b.Background:
		r = svc.Start(c.ctx, b.Command)
	case b.Yield > 0:
		r = svc.Yield(c.ctx, b.Command, b.Yield)
	default:
		var st *streamer
		var obs executor.Observer
		if b.Stream {
			st = &streamer{l: l, id: c.m.ID, max: svc.MaxBytes()}
			obs = st.observe
		}
		r = svc.Run(c.ctx, b.Command, obs)
		if st != nil {
			st.stop()
		}
	}
	l.respond(c, r)
	if r.Details.Status == result.StatusRunning && r.Details.TaskID != "" {
		l.watch(placed{svc, r.Details.TaskID})
	}
}

// output serves an output request: a read, waiting up to its wait for something new.
func (l *loop) output(c *call) {
	o := c.m.Output
	r, err := c.svc.Output(c.ctx, o.TaskID, o.Reader, o.Wait, nil)
	l.respondTask(c, r, err)
}

// input serves an input request: the write, then the default reader's read once the output settled.
func (l *loop) input(c *call) {
	in := c.m.Input
	r, err := c.svc.Input(c.ctx, in.TaskID, in.In, in.Wait)
	l.respondTask(c, r, err)
}

// kill serves a kill request: it returns once the task's tree is gone (or after the executor's limit).
func (l *loop) kill(c *call) {
	k := c.m.Kill
	r, err := c.svc.Kill(c.ctx, k.TaskID, k.Signal)
	l.respondTask(c, r, err)
}

// wait serves a wait request: the final result, or the running status after its timeout.
func (l *loop) wait(c *call) {
	w := c.m.Wait
	r, err := c.svc.Wait(c.ctx, w.TaskID, w.Timeout)
	l.respondTask(c, r, err)
}

// list serves a tasks request: the rows `agentbash tasks --json` prints.
func (l *loop) list(c *call) {
	rows, err := c.svc.Tasks(c.ctx, c.m.Tasks.All)
	if err != nil {
		l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Error: err.Error()})
		return
	}
	l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Success: true, Data: rows})
}

func (l *loop) respond(c *call, r result.Result) {
	l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Success: true, Data: r, Parts: l.parts(r)})
}

// parts is r's parts for a caller that is another agentbash, nil for any other.
func (l *loop) parts(r result.Result) *Parts {
	if !l.agent.Load() {
		return nil
	}
	return &Parts{Output: r.Output, Footer: append([]string{}, r.Footer...)}
}

// respondTask answers a task request: r, or when the task could not be read (unknown id, unreadable
// record) success false, the error, and as data the error result the CLI command prints.
func (l *loop) respondTask(c *call, r result.Result, err error) {
	if err != nil {
		l.send(Response{ID: c.m.ID, Type: TypeResponse, Command: c.m.Type, Error: err.Error(), Data: r,
			Parts: l.parts(r)})
		return
	}
	l.respond(c, r)
}

// send writes v as one line. After a failed write nothing more is written, and the loop shuts down.
func (l *loop) send(v any) {
	lb, err := encodeLine(v)
	if err != nil {
		l.logf("encode %T: %v", v, err)
		return
	}
	defer lb.free()
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if l.werr != nil {
		return
	}
	if _, err := l.out.Write(lb.Bytes()); err != nil {
		l.werr = err
		close(l.broken)
	}
}

func (l *loop) logf(format string, a ...any) {
	if l.s.Log != nil {
		fmt.Fprintf(l.s.Log, "agentbash: rpc: "+format+"\n", a...)
	}
}

// watch adds task t to those whose end is pushed as a task_done event; its record is read on its target.
func (l *loop) watch(t placed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return
	}
	l.tasks[t] = struct{}{}
	if !l.watcher {
		l.watcher = true
		go l.watchTasks()
	}
}

// watchTasks polls the records of the watched tasks and pushes task_done once for each that ended; it
// stops when none is left, or at shutdown.
func (l *loop) watchTasks() {
	tick := time.NewTicker(WatchInterval)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		l.mu.Lock()
		watched := slices.Collect(maps.Keys(l.tasks))
		l.mu.Unlock()
		slices.SortFunc(watched, func(a, b placed) int { return cmp.Compare(a.name, b.name) })
		var ended []placed
		for _, t := range watched {
			r, err := t.svc.Wait(l.base, t.name, time.Nanosecond.Seconds()) // its state now, not waiting
			switch {
			case err != nil: // removed (pruned) meanwhile, or its target lost: nothing to report
				ended = append(ended, t)
			case r.Details.Status != result.StatusRunning:
				l.send(TaskDone{Type: TypeTaskDone, TaskID: t.name, Data: r})
				ended = append(ended, t)
			}
		}
		l.mu.Lock()
		for _, t := range ended {
			delete(l.tasks, t)
		}
		if len(l.tasks) == 0 {
			l.watcher = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

// service is the service of a request's target: the server's own for "", else For's.
func (s *Server) service(target string) (*service.Service, error) {
	switch {
	case target == "":
		return s.Service, nil
	case s.For == nil:
		return nil, fmt.Errorf("target %q: this server runs its commands in one place and takes no target", target)
	}
	return s.For(target)
}
