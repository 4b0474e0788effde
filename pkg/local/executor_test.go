package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/texts"
)

// fakeStarter is a run.Starter with no processes: it "runs" a command by writing the output it was given
// into a sink built from the spec's options, as a real supervisor does. It records what the executor
// asked for.
type fakeStarter struct {
	target    run.Target
	resolveTo error
	startErr  error
	output    string // what the command prints
	exit      int    // its exit code
	hang      bool   // run until cancelled
	mu        sync.Mutex
	starts    []started   // what Start got
	resolved  [][2]string // what Resolve got
}

// started is what one Start got.
type started struct {
	run.Spec
	run.Streams
}

func (f *fakeStarter) Resolve(shell, dir string) (run.Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolved = append(f.resolved, [2]string{shell, dir})
	return f.target, f.resolveTo
}

func (f *fakeStarter) Start(ctx context.Context, spec run.Spec, s run.Streams) (run.Process, error) {
	f.mu.Lock()
	f.starts = append(f.starts, started{spec, s})
	f.mu.Unlock()
	if f.startErr != nil {
		return nil, f.startErr
	}
	return &fakeProcess{f: f, ctx: ctx, r: started{spec, s}}, nil
}

type fakeProcess struct {
	f   *fakeStarter
	ctx context.Context
	r   started
}

func (p *fakeProcess) Pid() int { return 4242 }

func (p *fakeProcess) Wait() (run.Outcome, error) {
	o := p.r.Output
	var live func(text []byte, totalBytes, totalLines int64)
	if p.r.Live != nil {
		live = func(text []byte, totalBytes, totalLines int64) {
			p.r.Live(run.LiveText{Text: string(text), TotalBytes: totalBytes, TotalLines: totalLines})
		}
	}
	s := sink.New(sink.Options{MaxBytes: o.MaxBytes, Head: o.Head, Tail: o.Tail, Live: live})
	_, _ = s.Write([]byte(p.f.output))
	out := run.Outcome{ExitCode: p.f.exit, Duration: time.Millisecond}
	if p.f.hang {
		<-p.ctx.Done()
		out.Cancelled, out.ExitCode, out.Signal, out.SignalNumber = true, -1, "SIGTERM", 15
	}
	out.Summary = s.Close()
	return out, nil
}

// The whole pipeline runs through the seam: the backend resolves the target, gets the normalized command
// with the environment as layers and the sink's options, and its outcome becomes the result.
func TestPipelineRunsThroughTheExecutorSeam(t *testing.T) {
	fake := &fakeStarter{target: run.Target{Shell: "/container/bin/bash", Dir: "/app"},
		output: "one\ntwo\nthree\n", exit: 3}
	c := config(t)
	c.Supervisors, c.Shell, c.Env, c.Prefix = fake, "bash", []string{"A=1"}, "set -o pipefail;"
	var live strings.Builder
	r := newRunner(c).Run(context.Background(), Request{Command: "  make 2>&1 | tail -n 2 ", Cwd: "/app",
		Env: map[string]string{"B": "2"}}, func(l run.LiveText) { live.WriteString(l.Text) })

	if len(fake.resolved) != 1 || fake.resolved[0] != [2]string{"bash", "/app"} {
		t.Errorf("Resolve got %v; want the shell and cwd as requested (the backend resolves them)", fake.resolved)
	}
	req := fake.starts[0]
	if req.Command != "set -o pipefail; make 2>&1" || req.Dir != "/app" || req.Output.Tail != 2 || req.Output.Head != -1 {
		t.Errorf("request %+v", req)
	}
	if !slices.Contains(req.Env, "PWD=/app") || !slices.Contains(req.Env, "A=1") || req.Env[len(req.Env)-1] != "B=2" {
		t.Errorf("env layers %q: want PWD, the config's layer, then the request's", req.Env)
	}
	for _, kv := range req.Env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			t.Errorf("the caller's environment was shipped: %q", kv)
		}
	}
	if live.Len() != 0 || req.Live != nil {
		t.Errorf("a tail limit streams nothing, got %q", live.String())
	}
	d := r.Details
	if d.Status != result.StatusExited || *d.ExitCode != 3 || d.Cwd != "/app" || d.Shell != "/container/bin/bash" ||
		r.Output != "two\nthree" {
		t.Errorf("result %+v / %q", d, r.Output)
	}
}

func TestExecutorSeamErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		fake *fakeStarter
		text string
	}{
		{"bad cwd", &fakeStarter{target: run.Target{Dir: "/nope"}, resolveTo: &run.DirError{Text: "Working directory does not exist: /nope"}},
			"Working directory does not exist: /nope"},
		{"no shell", &fakeStarter{startErr: run.ErrShellNotFound}, "shell not found"},
	} {
		c := config(t)
		c.Supervisors = tc.fake
		r := newRunner(c).Run(context.Background(), Request{Command: "true"}, nil)
		if r.Details.Status != result.StatusError || r.Output != tc.text {
			t.Errorf("%s: %+v %q", tc.name, r.Details, r.Output)
		}
	}
	// A blocked command never reaches the backend.
	fake := &fakeStarter{}
	c := config(t)
	c.Supervisors, c.Intercept, c.Tools, c.DefaultRules = fake, true, []string{"read"}, true
	if r := newRunner(c).Run(context.Background(), Request{Command: "cat README.md"}, nil); r.Details.Status != result.StatusBlocked || len(fake.starts) != 0 {
		t.Errorf("blocked: %+v, %d requests", r.Details, len(fake.starts))
	}
}

// A cancel reaches the backend through the context, and the result says so with the signal (for the status).
func TestExecutorSeamCancel(t *testing.T) {
	fake := &fakeStarter{target: run.Target{Shell: "/bin/bash", Dir: "/"}, output: "partial\n", hang: true}
	c := config(t)
	c.Supervisors = fake
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(request.SignalCause{Signal: 2}) })
	r := newRunner(c).Run(ctx, Request{Command: "sleep 60"}, nil)
	if r.Details.Status != result.StatusCancelled || r.CancelSignal != 2 || !strings.HasPrefix(r.Output, texts.Cancelled) {
		t.Errorf("%+v %q", r.Details, r.Output)
	}
	if !errors.Is(context.Cause(ctx), request.SignalCause{Signal: 2}) {
		t.Fatal("cause lost")
	}
}

// Two runs through one Runner at once, each with its own supervisor: one times out leaving setsid and
// double-fork escapees, the other sleeps across that timeout and exits 7. Each waits until the other has
// started (so runs that were serialized would fail), the timeout's kill sweep never touches the other's
// processes, and each gets its own status (reference §11).
func TestConcurrentRunsAreSupervisedApart(t *testing.T) {
	c := config(t)
	r := newRunner(c)
	m := fmt.Sprintf("abpipe%d", rand.Int64()) // unique: other test runs may share the machine
	t.Cleanup(func() { killMarked(m) })
	dir := t.TempDir()
	var wg sync.WaitGroup
	var slow, quick result.Result
	wg.Go(func() {
		slow = r.Run(context.Background(), Request{Cwd: dir, Timeout: new(3.0), Command: `touch s; until [ -e q ]; do sleep 0.02; done; echo saw-q; ` +
			`setsid bash -c 'exec -a ` + m + `x sleep 300' & ( (exec -a ` + m + `y sleep 300) & ); sleep 300`}, nil)
	})
	wg.Go(func() {
		quick = r.Run(context.Background(), Request{Cwd: dir, Timeout: new(20.0), Command: `touch q; until [ -e s ]; do sleep 0.02; done; ` +
			`sleep 4; echo survived; exit 7`}, nil)
	})
	wg.Wait()
	if slow.Details.Status != result.StatusTimedOut || !strings.Contains(slow.Output, "saw-q") {
		t.Errorf("slow: %+v %q", slow.Details, slow.Output)
	}
	if quick.Details.Status != result.StatusExited || quick.Details.ExitCode == nil || *quick.Details.ExitCode != 7 || quick.Output != "survived" {
		t.Errorf("quick: %+v %q", quick.Details, quick.Output)
	}
	if left := killMarked(m); len(left) > 0 {
		t.Errorf("escapees of the timed-out run survived: %v", left)
	}
}
