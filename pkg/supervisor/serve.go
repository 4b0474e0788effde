package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/livequeue"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// liveQueueBytes bounds the live output waiting for a slow client; past it the oldest lines are dropped
// from the live view (the result is complete).
const liveQueueBytes = 1 << 20

// errClientGone is the cancel cause when the client's end of the socket closed: the tree gets SIGTERM and,
// ClientGoneGrace later, SIGKILL.
var errClientGone = clientGone{}

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

// Main runs the supervisor on descriptor 3 and returns the process exit status: 0 when the run was
// reported (or the client was gone), 2 when the socket or the start request is broken.
func Main() int {
	f := os.NewFile(controlFD, "control")
	if f == nil {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": no control socket on descriptor 3 (internal command)")
		return 2
	}
	c, err := net.FileConn(f)
	f.Close()
	conn, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": descriptor 3 is not a unix socket (internal command)")
		return 2
	}
	if err := serve(conn); err != nil {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+":", err)
		return 2
	}
	return 0
}

// serve runs one command for the client on conn.
func serve(conn *net.UnixConn) error {
	defer conn.Close()
	// While the client is still getting its command ready (or, for a spare, until a run comes): the
	// one-time work of the run, the codecs' reflection and the signal handlers, off the run's path.
	go run.Prepare()
	go warmCodecs()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	idle := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			// A signal before the start ends the supervisor as it would without a handler.
			signal.Reset(s)
			_ = unix.Kill(os.Getpid(), s.(syscall.Signal))
		case <-idle:
		}
	}()
	stdin, err := receiveFiles(conn)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(conn)
	var req Request
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read start request: %w", err)
	}
	if req.Op != OpStart || req.Spec == nil {
		return fmt.Errorf("first request is %q, want %q", req.Op, OpStart)
	}
	spec := *req.Spec
	close(idle)
	if spec.Stdin && stdin == nil {
		return errors.New("start request wants stdin, but no descriptor came with it")
	}

	var task *detached
	if spec.Task != nil {
		if task, err = newDetached(spec.Task); err != nil {
			_ = json.NewEncoder(conn).Encode(Event{Op: OpDone, Error: err.Error()})
			return nil
		}
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ev := &events{enc: json.NewEncoder(conn)}
	go watchClient(dec, cancel, task != nil && !spec.Task.Attached)
	stopSignals := cancelOnSignals(sigs, cancel, task)
	defer stopSignals()

	var live io.Writer
	var async *livequeue.Writer
	if spec.Live {
		async = livequeue.New(ev, liveQueueBytes)
		live = async
	}
	out := newOutput(spec.Output, live)
	if task != nil && out.created == "" {
		// A task's output is its artifact: without one it would be lost, so the task does not start.
		err := out.openErr
		if err == nil {
			err = errors.New("artifact not opened")
		}
		out.close()
		_ = json.NewEncoder(conn).Encode(Event{Op: OpDone, Error: "task not started: " + err.Error()})
		return nil
	}
	var output io.Writer = out.sink
	if task != nil {
		// Past the artifact cap a task's readers still get its newest output, from the tail segments.
		limit := spec.Output.ArtifactMaxBytes
		if limit <= 0 {
			limit = sink.DefaultArtifactMaxBytes
		}
		tail := &tasks.TailWriter{W: out.sink, Store: task.store, ID: task.id, Cap: limit}
		defer tail.Close()
		output = tail
	}
	var in io.Reader
	if stdin != nil {
		defer stdin.Close()
		in = stdin
	}
	outcome, runErr := run.Local{}.Run(ctx, run.Spec{
		Command:   spec.Command,
		Shell:     spec.Shell,
		Wrapper:   spec.Wrapper,
		Dir:       spec.Dir,
		Env:       run.Environ(os.Environ(), spec.Env),
		Stdin:     in,
		Timeout:   spec.Timeout,
		KillGrace: spec.KillGrace,
		Output:    output,
		LimitMet:  out.sink.LimitMet,
		Started: func(pid int) {
			if task != nil {
				if err := task.started(pid, out); err != nil {
					cancel(cancelled{}) // a task nobody can find must not run on
				}
			}
			_ = ev.send(Event{Op: OpStarted, Pid: pid})
		},
	})
	summary := out.close()
	if task != nil {
		task.finished(ctx, outcome, summary, runErr)
	}
	if async != nil {
		async.Close()
	}
	done := Event{Op: OpDone}
	switch {
	case runErr == nil:
		done.Outcome, done.Summary = &outcome, &summary
	case errors.Is(runErr, run.ErrShellNotFound):
		done.Error, done.Kind = runErr.Error(), "shell"
	case errors.Is(runErr, run.ErrWrapperNotFound):
		done.Error, done.Kind = runErr.Error(), "wrapper"
	default:
		done.Error = runErr.Error()
	}
	if context.Cause(ctx) == errClientGone {
		return nil // nobody to tell
	}
	_ = ev.send(done) // a client that left meanwhile cannot be told; its tree is gone anyway
	return nil
}

// watchClient reads the client's requests after the start: "cancel" cancels the run with the grace it
// names, else the spec's; "detach" makes an attached task a detached one; EOF (the client exited or was killed) cancels
// the run with ClientGoneGrace, unless it is a detached task, which goes on.
func watchClient(dec *json.Decoder, cancel context.CancelCauseFunc, detached bool) {
	for {
		var req Request
		if err := dec.Decode(&req); err != nil {
			if !detached {
				cancel(errClientGone)
			}
			return
		}
		switch req.Op {
		case OpCancel:
			if req.KillGrace != nil {
				cancel(cancelledWithGrace{grace: max(*req.KillGrace, 0)})
			} else {
				cancel(cancelled{})
			}
		case OpDetach:
			detached = true
		}
	}
}

// cancelOnSignals makes SIGTERM, SIGINT and SIGHUP sent to the supervisor itself a cancel of the run, so
// that killing a supervisor politely never leaves its tree behind.
// For a task, the signal the tree gets first is the one its `kill` asked for.
func cancelOnSignals(sigs chan os.Signal, cancel context.CancelCauseFunc, task *detached) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			c := cancelled{signal: s.(syscall.Signal)}
			if task != nil {
				c.kill = task.killSignal()
			}
			cancel(c)
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

// warmCodecs encodes and decodes the protocol's messages once, so the reflection encoding/json does on a
// type's first use is not paid by the run (a spare supervisor does it while it waits).
func warmCodecs() {
	_ = json.NewEncoder(io.Discard).Encode(Event{Op: OpDone, Outcome: &run.Outcome{}, Summary: &sink.Summary{}})
	var req Request
	_ = json.Unmarshal([]byte(`{"op":"start","spec":{"command":"","env":[],"output":{},"task":{}}}`), &req)
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

// events writes events to the client, one JSON object each; it is an io.Writer of live output.
type events struct {
	mu     sync.Mutex
	enc    *json.Encoder
	failed bool
}

func (e *events) send(ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed {
		return errors.New("client gone")
	}
	if err := e.enc.Encode(ev); err != nil {
		e.failed = true
		return err
	}
	return nil
}

// Write sends p as one output event; it never fails (a gone client is the watcher's business).
func (e *events) Write(p []byte) (int, error) {
	_ = e.send(Event{Op: OpOutput, Text: string(p)})
	return len(p), nil
}
