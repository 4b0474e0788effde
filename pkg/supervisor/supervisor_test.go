package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/memlimit"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// leanMarkEnv names the file a test supervisor marks each time it makes itself lean.
const leanMarkEnv = "SUPERVISOR_TEST_LEAN_MARK"

// The test binary is its own supervisor (spawn re-executes it as `<test> __supervise`), dispatched from
// an init function as pkg/reexec does: the main goroutine is then locked to the main thread, as in agentbash.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		if mark := os.Getenv(leanMarkEnv); mark != "" {
			// Each lean of this supervisor adds a line to mark (TestReusedSupervisorIsLean).
			lean = func() {
				memlimit.Lean()
				if f, err := os.OpenFile(mark, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
					_, _ = f.WriteString("lean\n")
					f.Close()
				}
			}
		}
		os.Exit(Main())
	}
}

func marker(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "absup" + hex.EncodeToString(b)
}

// job is a run.Spec with its run.Streams, as the tests build them.
type job struct {
	run.Spec
	run.Streams
}

func spec(t *testing.T, command string, timeout time.Duration) job {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	return job{Spec: run.Spec{
		Command: run.Raw(command), Shell: run.Raw(bash), Dir: run.Raw(t.TempDir()),
		Timeout: timeout, KillGrace: time.Second,
		Output: run.Output{MaxBytes: 51200, Head: -1, Tail: -1, ArtifactDir: run.Raw(filepath.Join(t.TempDir(), "art"))},
	}}
}

// runJob runs j on st to its end.
func runJob(ctx context.Context, st run.Starter, j job) (run.Outcome, error) {
	return run.Run(ctx, st, j.Spec, j.Streams)
}

func runIt(t *testing.T, ctx context.Context, j job) (run.Outcome, error) {
	t.Helper()
	return runJob(ctx, &Pool{}, j)
}

// alive lists live processes whose command line holds m.
func alive(m string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.Contains(string(b), m) {
			continue
		}
		stat, _ := os.ReadFile(d + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		if strings.Contains(string(b), "-c\x00") {
			continue // the shell's own command line names the marker
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// hang is a command that sleeps for 300 s under the name name (its command line holds it).
func hang(name string) string { return "bash -c 'exec -a " + name + " sleep 300'" }

func cleanup(t *testing.T, m string) {
	t.Cleanup(func() {
		for _, p := range alive(m) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

// waitFor polls until cond holds or d passes (waiting for processes to appear or go, not timing a result).
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

func TestRunReportsOutcomeAndSummary(t *testing.T) {
	r, err := runIt(t, context.Background(), spec(t, "echo hello; echo err >&2; exit 3", 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.Summary.Text != "hello\nerr\n" || r.Summary.TotalLines != 2 {
		t.Fatalf("got %+v", r)
	}
}

func TestShellNotFound(t *testing.T) {
	s := spec(t, "true", 10*time.Second)
	s.Shell = "/nonexistent/bash"
	_, err := runIt(t, context.Background(), s)
	if !errors.Is(err, run.ErrShellNotFound) {
		t.Fatalf("err = %v, want ErrShellNotFound", err)
	}
}

func TestStdinIsPassedOver(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("from stdin\n")
	f.Seek(0, 0)
	s := spec(t, "cat", 10*time.Second)
	s.Stdin = f
	r, err := runIt(t, context.Background(), s)
	if err != nil || r.Summary.Text != "from stdin\n" {
		t.Fatalf("got %q, %v", r.Summary.Text, err)
	}
	s.Stdin = strings.NewReader("from a reader\n") // not a file: copied through a pipe
	r, err = runIt(t, context.Background(), s)
	if err != nil || r.Summary.Text != "from a reader\n" {
		t.Fatalf("got %q, %v", r.Summary.Text, err)
	}
}

func TestLiveOutput(t *testing.T) {
	s := spec(t, "echo one; sleep 0.1; echo two", 10*time.Second)
	var mu sync.Mutex
	var live strings.Builder
	var last run.LiveText
	s.Live = func(l run.LiveText) { mu.Lock(); live.WriteString(l.Text); last = l; mu.Unlock() }
	r, err := runIt(t, context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if live.String() != "one\ntwo\n" || r.Summary.Text != "one\ntwo\n" {
		t.Fatalf("live %q, summary %q", live.String(), r.Summary.Text)
	}
	if last.TotalBytes != r.Summary.TotalBytes || last.TotalLines != r.Summary.TotalLines {
		t.Fatalf("the last live text's counts %+v, the summary's %d bytes %d lines", last, r.Summary.TotalBytes, r.Summary.TotalLines)
	}
}

// The client goes away while its command runs (as when it is SIGKILLed: the kernel closes its end of the
// socket): the whole tree, setsid and double-fork escapees and a TERM-ignoring process included, is gone
// within a second.
func TestClientGoneKillsTree(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	s := spec(t, `setsid `+hang(m+"a")+` & (`+hang(m+"b")+` &) ; bash -c 'trap "" TERM; exec -a `+m+`c sleep 300' & `+hang(m+"d"), 600*time.Second)
	l := &Pool{}
	proc, err := l.Start(context.Background(), s.Spec, s.Streams)
	if err != nil {
		t.Fatal(err)
	}
	p := proc.(*Attached)
	if p.Pid() <= 0 {
		t.Fatalf("pid %d", p.Pid())
	}
	done := make(chan error, 1)
	go func() { _, err := p.Wait(); done <- err }()
	if !waitFor(5*time.Second, func() bool { return len(alive(m)) == 4 }) {
		t.Fatalf("the four marked processes never all appeared: %v", alive(m))
	}
	p.p.conn.Close() // what the kernel does when the client dies
	gone := time.Now()
	if !waitFor(1500*time.Millisecond, func() bool { return len(alive(m)) == 0 }) {
		t.Fatalf("alive %v after the client went away", alive(m))
	}
	if d := time.Since(gone); d > time.Second {
		t.Logf("tree took %v to go (budget 1 s; a loaded machine may be slower)", d)
	}
	if err := <-done; !errors.Is(err, ErrDied) {
		t.Fatalf("Run returned %v, want ErrDied (nobody is told)", err)
	}
}

// Two runs of one process are supervised apart: a timeout with escapees in one never touches the other's
// processes, and each gets its own status.
func TestRunsAreSupervisedApart(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	var wg sync.WaitGroup
	var slow, quick run.Outcome
	var slowErr, quickErr error
	wg.Go(func() {
		slow, slowErr = runIt(t, context.Background(), spec(t, `setsid `+hang(m+"x")+` & (`+hang(m+"y")+` &); sleep 300`, time.Second))
	})
	wg.Go(func() {
		quick, quickErr = runIt(t, context.Background(), spec(t, `sleep 2; echo survived; exit 7`, 10*time.Second))
	})
	wg.Wait()
	if slowErr != nil || !slow.TimedOut {
		t.Fatalf("slow: %+v %v", slow, slowErr)
	}
	if quickErr != nil || quick.ExitCode != 7 || quick.Summary.Text != "survived\n" || quick.Cancelled {
		t.Fatalf("quick: %+v %v", quick, quickErr)
	}
	if left := alive(m); len(left) > 0 {
		t.Fatalf("escapees of the timed-out run survived: %v", left)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r, err := runIt(t, ctx, spec(t, "echo started; sleep 30", 60*time.Second))
	if err != nil || !r.Cancelled || r.Summary.Text != "started\n" {
		t.Fatalf("got %+v %v", r, err)
	}
}

func TestUnusedSupervisorExits(t *testing.T) {
	p, err := spawn()
	if err != nil {
		t.Fatal(err)
	}
	pid := p.SupervisorPid()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("supervisor %d still there after Close", pid)
	}
}

// graceCause is a cancel cause that names its kill grace, as the MCP server's for a client gone.
type graceCause time.Duration

func (g graceCause) Error() string            { return "gone" }
func (g graceCause) KillGrace() time.Duration { return time.Duration(g) }

// A cancel whose cause names a grace carries it to the supervisor: a tree that ignores SIGTERM gets
// SIGKILL after that grace, not after the spec's hour.
func TestCancelCarriesTheCausesGrace(t *testing.T) {
	m := marker(t)
	cleanup(t, m)
	s := spec(t, `trap "" TERM; echo started; exec -a `+m+` sleep 300`, time.Hour)
	s.KillGrace = time.Hour
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	var r run.Outcome
	var err error
	go func() { r, err = runIt(t, ctx, s); close(done) }()
	if !waitFor(10*time.Second, func() bool { return len(alive(m)) == 1 }) {
		t.Fatalf("the command never showed: %v", alive(m))
	}
	cancel(graceCause(100 * time.Millisecond))
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a bound against the hour, not a timing assertion
		t.Fatal("the run still waits for the spec's grace")
	}
	if err != nil || !r.Cancelled || r.Summary.Text != "started\n" || len(alive(m)) != 0 {
		t.Fatalf("got %+v %v, alive %v", r, err, alive(m))
	}
}

// The cancel request names a grace only when the cause does; the supervisor keeps the spec's otherwise.
func TestCancelRequest(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{context.Canceled, `{"op":"cancel"}`},
		{nil, `{"op":"cancel"}`},
		{graceCause(500 * time.Millisecond), `{"op":"cancel","killGrace":500000000}`},
		{graceCause(0), `{"op":"cancel","killGrace":0}`},
		{graceCause(-time.Second), `{"op":"cancel","killGrace":0}`},
		{fmt.Errorf("wrapped: %w", graceCause(250*time.Millisecond)), `{"op":"cancel","killGrace":250000000}`},
	} {
		b, err := json.Marshal(cancelRequest(tc.cause))
		if err != nil || string(b) != tc.want {
			t.Errorf("cancel of %v: %s %v, want %s", tc.cause, b, err, tc.want)
		}
	}
}

// How a supervisor ended reads with the signal's name (SIGKILL, not the description "killed").
func TestWaitText(t *testing.T) {
	for _, c := range []struct {
		ws   syscall.WaitStatus
		want string
	}{
		{syscall.WaitStatus(9), "killed by SIGKILL"},
		{syscall.WaitStatus(15), "killed by SIGTERM"},
		{syscall.WaitStatus(11 | 0x80), "killed by SIGSEGV"}, // core dumped
		{syscall.WaitStatus(2 << 8), "exit status 2"},
	} {
		if got := waitText(c.ws); got != c.want {
			t.Errorf("waitText(%#x) = %q, want %q", int(c.ws), got, c.want)
		}
	}
}

// A run that needs the sandbox's proxy in a supervisor without the proxy's server (this test binary does
// not link pkg/proxy/server) fails closed: the sandbox is unavailable and nothing of the command runs.
func TestProxyRunWithoutServerFailsClosed(t *testing.T) {
	j := spec(t, "touch ran", 10*time.Second)
	j.Sandbox = &sandbox.Confinement{Network: sandbox.NetworkProxy}
	_, err := runIt(t, context.Background(), j)
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), proxy.ErrNoServer.Error()) {
		t.Fatalf("err = %v; want the sandbox unavailable: %v", err, proxy.ErrNoServer)
	}
	if _, err := os.Stat(filepath.Join(string(j.Dir), "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

func TestNeedsProxy(t *testing.T) {
	for _, tc := range []struct {
		req  Request
		want bool
	}{
		{Request{}, false},
		{Request{Spec: &run.Spec{}}, false},
		{Request{Spec: &run.Spec{Sandbox: &sandbox.Confinement{Network: sandbox.NetworkOff}}}, false},
		{Request{Spec: &run.Spec{Sandbox: &sandbox.Confinement{Network: sandbox.NetworkOn}}}, false},
		{Request{Spec: &run.Spec{Sandbox: &sandbox.Confinement{Network: sandbox.NetworkProxy}}}, true},
	} {
		if got := needsProxy(tc.req); got != tc.want {
			t.Errorf("needsProxy(%+v) = %v", tc.req.Spec, got)
		}
	}
}
