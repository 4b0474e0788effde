package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// connPair returns the two ends of a connected unix stream socket.
func connPair(t *testing.T) (client, server *net.UnixConn) {
	t.Helper()
	fds, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socket")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// What comes for a run between its start request and the moment it is under way (the loop that got the
// start sets the run up) is the run's: a cancel the client sent right after the start (an abort of a
// request that just came) and a signal to the supervisor apply once it is watched, and are not dropped
// as if they were for a run that ended. A cancel between runs is still dropped.
func TestWhatComesBeforeTheRunIsUnderWayIsKept(t *testing.T) {
	grace := 2 * time.Second
	for _, tc := range []struct {
		name      string
		send      []Request
		signal    syscall.Signal
		want      error
		signalled bool
	}{
		{name: "cancel", send: []Request{{Op: OpCancel}}, want: cancelled{}},
		{name: "cancel with grace", send: []Request{{Op: OpCancel, KillGrace: &grace}}, want: cancelledWithGrace{grace: grace}},
		{name: "first cancel wins", send: []Request{{Op: OpCancel}, {Op: OpCancel, KillGrace: &grace}}, want: cancelled{}},
		{name: "signal", signal: syscall.SIGTERM, want: cancelled{signal: syscall.SIGTERM}, signalled: true},
		{name: "nothing", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := connPair(t)
			r := newRequests()
			close(r.signalsSet) // no handlers in a test: runs need not wait for them
			go r.read(newLines(server))
			enc := json.NewEncoder(client)
			// A cancel between runs (for one that ended) is dropped.
			for _, req := range append([]Request{{Op: OpCancel}, {Op: OpStart, Spec: &run.Spec{}}}, tc.send...) {
				if err := enc.Encode(req); err != nil {
					t.Fatal(err)
				}
			}
			if req := <-r.starts; req.Op != OpStart {
				t.Fatalf("got %+v, want the start request", req)
			}
			if tc.signal != 0 {
				r.signal(tc.signal)
			}
			client.Close()
			if _, open := <-r.starts; open { // closed once every request before EOF was read
				t.Fatal("a second start came")
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			end := r.watch(cancel, true, nil) // detached: the EOF does not cancel it
			if got := context.Cause(ctx); got != tc.want {
				t.Errorf("the run's cancel cause is %v, want %v", got, tc.want)
			}
			if got := end(); got != tc.signalled {
				t.Errorf("signalled %v, want %v", got, tc.signalled)
			}
		})
	}
}

// A run whose client gives up right after sending it (an abort as the request comes in) is cancelled,
// on a fresh supervisor and on a reused one alike.
func TestCancelRightAfterStart(t *testing.T) {
	l := &Pool{Spares: 1}
	defer l.Close()
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, o := runOn(t, l, ctx, spec(t, "sleep 300", 10*time.Second))
		if !o.Cancelled || o.TimedOut {
			t.Fatalf("run %d, cancelled before it started: %+v", i, o)
		}
	}
}

// A signal to a supervisor during a run cancels the run and then ends the supervisor (the signal asked
// it to end): it does not serve the next run, which gets another and runs.
func TestSignalledSupervisorIsNotReused(t *testing.T) {
	l := &Pool{Spares: 1}
	defer l.Close()
	first, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
	for _, sig := range []string{"TERM", "INT", "HUP"} {
		s, o := runOn(t, l, context.Background(), spec(t, "kill -"+sig+" $PPID; sleep 300", 10*time.Second))
		if s != first || !o.Cancelled || o.TimedOut {
			t.Fatalf("SIG%s to the supervisor %d (want %d): %+v", sig, s, first, o)
		}
		if !waitFor(5*time.Second, func() bool { return !running(s) }) {
			t.Fatalf("supervisor %d still runs after a SIG%s during its run", s, sig)
		}
		next, o := runOn(t, l, context.Background(), spec(t, "echo next", 10*time.Second))
		if next == s || o.Summary.Text != "next\n" {
			t.Fatalf("after SIG%s: supervisor %d (the signalled one was %d), %+v", sig, next, s, o)
		}
		first = next
	}
}

// stopped reports whether pid is stopped (state T).
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'T'
}

// A command can stop its supervisor (its parent: `kill -STOP $PPID`). The run still ends: at its
// timeout, or at a cancel, the supervisor is continued and does its work; one kept stopped is killed
// once it is past its bounds (wedgedAfter), and the run ends as a supervisor that died. An idle
// supervisor that is stopped does not keep the pool's Close waiting.
func TestStoppedSupervisorStillEnds(t *testing.T) {
	defer func(d time.Duration) { wedgedAfter = d }(wedgedAfter)
	wedgedAfter = 2 * time.Second
	l := &Pool{Spares: 1}
	defer l.Close()
	for _, tc := range []struct {
		name    string
		command string
		timeout time.Duration
		cancel  bool
		check   func(run.Outcome, error) bool
	}{
		{name: "timeout", command: "kill -STOP $PPID; sleep 300", timeout: time.Second,
			check: func(o run.Outcome, err error) bool { return err == nil && o.TimedOut }},
		{name: "cancel", command: "sleep 0.2; kill -STOP $PPID; sleep 300", timeout: 600 * time.Second, cancel: true,
			check: func(o run.Outcome, err error) bool { return err == nil && o.Cancelled }},
		{name: "ended while stopped", command: "kill -STOP $PPID; echo stopped", timeout: time.Second,
			check: func(o run.Outcome, err error) bool {
				return err == nil && o.Summary.Text == "stopped\n" && !o.TimedOut && o.ExitCode == 0
			}},
		{name: "kept stopped", command: "while :; do kill -STOP $PPID; done", timeout: time.Second,
			check: func(o run.Outcome, err error) bool { return err == nil || errors.Is(err, ErrDied) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			j := spec(t, tc.command, tc.timeout)
			p, err := l.Start(ctx, j.Spec, j.Streams)
			if err != nil { // stopped before it said the shell started: the watchdog ends the start too
				if !tc.check(run.Outcome{}, err) {
					t.Fatal(err)
				}
			} else {
				rn := p.(*Attached)
				if tc.cancel {
					if !waitFor(10*time.Second, func() bool { return stopped(rn.SupervisorPid()) }) {
						t.Fatal("the supervisor was never stopped")
					}
					cancel()
				}
				if o, err := rn.Wait(); !tc.check(o, err) {
					t.Fatalf("%+v, %v", o, err)
				}
			}
			if o, err := runJob(context.Background(), l, spec(t, "echo next", 10*time.Second)); err != nil || o.Summary.Text != "next\n" {
				t.Fatalf("the next run: %+v, %v", o, err)
			}
		})
	}
	idle := spares(t, l, 1)[0]
	if err := syscall.Kill(idle.spid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return stopped(idle.spid) }) {
		t.Fatal("the idle supervisor was never stopped")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if running(idle.spid) {
		t.Fatalf("the stopped idle supervisor %d runs on after Close", idle.spid)
	}
}

// A command can change what its supervisor passes on to the commands it starts (the supervisor is its
// parent: renice, prlimit, taskset … $PPID); the commands of later runs would inherit it, so such a
// supervisor serves no other run. One that was left as it was does.
func TestChangedSupervisorIsNotReused(t *testing.T) {
	l := &Pool{Spares: 1}
	defer l.Close()
	for _, tc := range []struct {
		tool, command string
		changes       bool
	}{
		{"renice", "renice -n 5 -p $PPID", true},
		{"prlimit", "prlimit --pid $PPID --nofile=64:64", true},
		{"prlimit", "set -- $(prlimit --pid $PPID --nofile -o SOFT,HARD --noheadings) && prlimit --pid $PPID --nofile=$1:$2", false},
		{"taskset", "taskset -p 1 $PPID", true},
		{"ionice", "ionice -c 3 -p $PPID", true},
		{"sh", "echo 500 >/proc/$PPID/oom_score_adj", true},
		{"sh", "cat /proc/$PPID/oom_score_adj", false},
	} {
		t.Run(tc.command, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skip("no " + tc.tool)
			}
			before, _ := runOn(t, l, context.Background(), spec(t, "true", 10*time.Second))
			s, o := runOn(t, l, context.Background(), spec(t, tc.command, 10*time.Second))
			if s != before || o.ExitCode != 0 {
				t.Fatalf("supervisor %d (want %d): %+v", s, before, o)
			}
			after, o := runOn(t, l, context.Background(), spec(t, "echo next", 10*time.Second))
			if o.Summary.Text != "next\n" {
				t.Fatalf("the next run: %+v", o)
			}
			if reused := after == s; reused == tc.changes {
				t.Fatalf("changes %v, but the supervisor was reused: %v", tc.changes, reused)
			}
		})
	}
}
