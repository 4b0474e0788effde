//go:build linux

package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/internal/syncbuf"
)

// buffer is a goroutine-safe output collector.
type buffer = syncbuf.Buffer

// job is a Spec with its Streams, as the tests build them.
type job struct {
	Spec
	Streams
}

func spec(t *testing.T, command string, out *buffer) job {
	t.Helper()
	shell, err := FindShell("")
	if err != nil {
		t.Fatal(err)
	}
	return job{Spec{Command: Raw(command), Shell: Raw(shell), Dir: Raw(t.TempDir()), Env: Environ(os.Environ()),
		Timeout: 20 * time.Second, KillGrace: 500 * time.Millisecond}, Streams{Out: out}}
}

// loop runs j on the supervision loop.
func loop(ctx context.Context, j job) (Outcome, error) { return Loop{}.Run(ctx, j.Spec, j.Streams) }

// marker returns a unique process name for `exec -a` and a cleanup that fails the test if a process
// with that name is still alive.
func marker(t *testing.T) string {
	t.Helper()
	m := fmt.Sprintf("abtest%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		if pids := alive(m); len(pids) > 0 {
			for _, p := range pids {
				_ = unix.Kill(p, unix.SIGKILL)
			}
			t.Errorf("processes named %s survived: %v", m, pids)
		}
	})
	return m
}

// alive lists live (non-zombie) processes whose command line contains m.
func alive(m string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte(m)) || bytes.Contains(b, []byte("-c")) {
			continue
		}
		var pid int
		fmt.Sscanf(filepath.Base(d), "%d", &pid)
		if s := procState(pid); s != 0 && s != 'Z' && s != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestRunExitAndOrder(t *testing.T) {
	var out buffer
	o, err := loop(context.Background(), spec(t, "echo a; echo b >&2; echo c; exit 3", &out))
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != 3 || o.Signal != "" || o.TimedOut || bashStatus(o) != 3 {
		t.Errorf("outcome %+v", o)
	}
	if got := out.String(); got != "a\nb\nc\n" {
		t.Errorf("output %q", got)
	}
}

func TestRunSignaled(t *testing.T) {
	var out buffer
	o, _ := loop(context.Background(), spec(t, "kill -SEGV $$", &out))
	if o.Signal != "SIGSEGV" || o.ExitCode != -1 || bashStatus(o) != 128+11 {
		t.Errorf("outcome %+v", o)
	}
}

func TestRunTimeoutKillsEveryDescendant(t *testing.T) {
	m := marker(t)
	// A plain child, one that left the group with setsid, a double fork, and nohup.
	cmd := fmt.Sprintf(`(exec -a %[1]s sleep 60) & setsid bash -c 'exec -a %[1]s sleep 60' & `+
		`( (exec -a %[1]s sleep 60) & ) ; nohup bash -c 'exec -a %[1]s sleep 60' >/dev/null 2>&1 & `+
		`echo started; sleep 60`, m)
	var out buffer
	s := spec(t, cmd, &out)
	s.Timeout = 700 * time.Millisecond
	o, err := loop(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !o.TimedOut || !strings.Contains(out.String(), "started") {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
	if pids := alive(m); len(pids) > 0 {
		t.Errorf("survivors after timeout: %v", pids)
	}
}

func TestRunTermIgnoredGetsKill(t *testing.T) {
	m := marker(t)
	var out buffer
	s := spec(t, fmt.Sprintf(`trap '' TERM; (trap '' TERM; exec -a %s sleep 60) & echo armed; wait`, m), &out)
	s.Timeout = 300 * time.Millisecond
	s.KillGrace = 300 * time.Millisecond
	o, _ := loop(context.Background(), s)
	if !o.TimedOut || o.Signal != "SIGKILL" {
		t.Errorf("outcome %+v", o)
	}
	if pids := alive(m); len(pids) > 0 {
		t.Errorf("survivors: %v", pids)
	}
}

// A process started after the tree got SIGTERM gets it too: a shell that catches SIGTERM (bash with a
// trap, as with a session's EXIT trap) may start a command before it acts on the signal, and that one must
// not live on to the SIGKILL at the end of the grace (here the shell's own exit status shows it: 7 once
// the child is gone, SIGKILL if the grace ran out).
func TestRunTermReachesProcessesStartedDuringTheGrace(t *testing.T) {
	m := marker(t)
	var out buffer
	s := spec(t, fmt.Sprintf(`trap 'bash -c "exec -a %s sleep 60"; exit 7' TERM; echo armed; while :; do sleep 0.01; done`, m), &out)
	s.Timeout = 300 * time.Millisecond
	s.KillGrace = 30 * time.Second
	o, _ := loop(context.Background(), s)
	if !o.TimedOut || o.ExitCode != 7 || !strings.Contains(out.String(), "armed") {
		t.Errorf("outcome %+v, output %q", o, out.String())
	}
	if pids := alive(m); len(pids) > 0 {
		t.Errorf("survivors: %v", pids)
	}
}

func TestRunBackgroundHoldingPipeDoesNotHang(t *testing.T) {
	m := marker(t)
	var out buffer
	o, _ := loop(context.Background(), spec(t, fmt.Sprintf(`(exec -a %s sleep 30) & echo started`, m), &out))
	if o.ExitCode != 0 || out.String() != "started\n" || o.Duration > DrainMax+time.Second {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
	if len(o.LeftoverPids) == 0 || len(o.Warnings) == 0 {
		t.Errorf("leftover not reported: %+v", o)
	}
	// The drain stopped with the pipe still held: what was read may not be all (lower bounds), but
	// agentbash did not close it on a running shell.
	if !o.OutputIncomplete || o.OutputClosed {
		t.Errorf("incomplete %v closed %v", o.OutputIncomplete, o.OutputClosed)
	}
	for _, p := range o.LeftoverPids {
		_ = unix.Kill(p, unix.SIGKILL)
	}
	time.Sleep(50 * time.Millisecond)
}

func TestRunBackgroundWriterDrainBounded(t *testing.T) {
	var out buffer
	o, _ := loop(context.Background(), spec(t, `echo started; (while :; do echo tick; sleep 0.05; done) &`, &out))
	if o.ExitCode != 0 || !strings.HasPrefix(out.String(), "started\n") {
		t.Errorf("outcome %+v", o)
	}
	if o.Duration > DrainMax+time.Second {
		t.Errorf("drain took %v", o.Duration)
	}
	if !o.OutputIncomplete || o.OutputClosed {
		t.Errorf("incomplete %v closed %v", o.OutputIncomplete, o.OutputClosed)
	}
	for _, p := range o.LeftoverPids {
		_ = unix.Kill(p, unix.SIGKILL)
	}
}

// metAfter says a limit is met once n writes have been seen, as a sink with a head limit would.
type metAfter struct {
	buffer
	mu     sync.Mutex
	writes int
	n      int
}

func (m *metAfter) Write(p []byte) (int, error) {
	m.mu.Lock()
	m.writes++
	m.mu.Unlock()
	return m.buffer.Write(p)
}

func (m *metAfter) met() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes >= m.n
}

// A met limit reads on, then closes the pipe on a producer that does not end: it gets SIGPIPE at its
// next write, and the call does not wait for the timeout (`for …; sleep 0.1; done | head -n 2`).
func TestRunLimitMetClosesPipeOnSlowProducer(t *testing.T) {
	out := &metAfter{n: 2}
	s := spec(t, `for i in $(seq 200); do echo $i; sleep 0.1; done`, nil)
	s.Out, s.LimitMet = out, out.met
	o, err := loop(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if o.TimedOut || !o.OutputClosed || !o.OutputIncomplete || o.Signal != "SIGPIPE" || !strings.HasPrefix(out.String(), "1\n2\n") {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
}

// A met limit on a finite command lets it end by itself: everything is read, nothing is closed early.
func TestRunLimitMetFiniteCommandEnds(t *testing.T) {
	out := &metAfter{n: 1}
	s := spec(t, `seq 1 20000; exit 4`, nil)
	s.Out, s.LimitMet = out, out.met
	o, err := loop(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != 4 || o.OutputClosed || o.OutputIncomplete || !strings.HasSuffix(out.String(), "\n19999\n20000\n") {
		t.Errorf("outcome %+v output ends %q", o, out.String()[max(0, len(out.String())-20):])
	}
}

// refuser accepts n writes, then refuses like a reader that has seen enough.
type refuser struct{ n int }

func (r *refuser) Write(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("enough")
	}
	r.n--
	return len(p), nil
}

func TestRunOutputRefusedClosesPipe(t *testing.T) {
	s := spec(t, "yes", nil)
	s.Out = &refuser{n: 2}
	o, _ := loop(context.Background(), s)
	if !o.OutputClosed || !o.OutputIncomplete || o.Signal != "SIGPIPE" || o.TimedOut {
		t.Errorf("outcome %+v", o)
	}
}

func TestRunCancel(t *testing.T) {
	m := marker(t)
	var out buffer
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	o, _ := loop(ctx, spec(t, fmt.Sprintf(`exec -a %s sleep 60`, m), &out))
	if !o.Cancelled || o.TimedOut || o.Signal != "SIGTERM" {
		t.Errorf("outcome %+v", o)
	}
}

// graceCause and signalCause are cancel causes that name a kill grace and a first signal, as a
// supervisor's are (a client gone, `agentbash kill --signal`).
type graceCause time.Duration

func (graceCause) Error() string              { return "gone" }
func (g graceCause) KillGrace() time.Duration { return time.Duration(g) }

type signalCause unix.Signal

func (signalCause) Error() string             { return "killed" }
func (c signalCause) KillSignal() unix.Signal { return unix.Signal(c) }

// A cancel cause is found through the errors that wrap it (errors.As): its grace replaces the spec's, its
// signal SIGTERM.
func TestRunCancelCauseWrapped(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		cause         error
		want          string // the signal the shell died of
	}{
		// SIGTERM is ignored: only the cause's short grace ends it, with SIGKILL, instead of the spec's hour.
		{"grace", `trap "" TERM; echo started; exec sleep 300`, graceCause(100 * time.Millisecond), "SIGKILL"},
		{"signal", `echo started; exec sleep 300`, signalCause(unix.SIGINT), "SIGINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out buffer
			j := spec(t, tc.command, &out)
			j.KillGrace = time.Hour
			ctx, cancel := context.WithCancelCause(context.Background())
			j.Started = func(int) {
				go func() {
					for !strings.Contains(out.String(), "started") {
						time.Sleep(10 * time.Millisecond)
					}
					cancel(fmt.Errorf("wrapped: %w", tc.cause))
				}()
			}
			done := make(chan Outcome, 1)
			go func() { o, _ := loop(ctx, j); done <- o }()
			select {
			case o := <-done:
				if !o.Cancelled || o.Signal != tc.want {
					t.Errorf("outcome %+v, want cancelled by %s", o, tc.want)
				}
			case <-time.After(30 * time.Second): // a bound against the hour, not a timing assertion
				t.Fatal("the run waits for the spec's grace: the wrapped cause was not found")
			}
		})
	}
}

func TestRunNoControllingTerminal(t *testing.T) {
	var out buffer
	o, _ := loop(context.Background(), spec(t, `read -r x < /dev/tty; echo rc=$?`, &out))
	if o.ExitCode != 0 || !strings.HasPrefix(out.String(), "rc=1") && !strings.Contains(out.String(), "rc=1") {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
}

func TestRunStdinDefaultsToDevNull(t *testing.T) {
	var out buffer
	o, _ := loop(context.Background(), spec(t, `cat; echo done`, &out))
	if o.ExitCode != 0 || out.String() != "done\n" {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
	s := spec(t, `cat`, &out)
	s.Stdin = strings.NewReader("given\n")
	out = buffer{}
	if _, err := loop(context.Background(), s); err != nil || out.String() != "given\n" {
		t.Errorf("stdin not passed: %v %q", err, out.String())
	}
}

func TestRunShellNotFound(t *testing.T) {
	var out buffer
	s := spec(t, "true", &out)
	s.Shell = "/nonexistent/bash"
	if _, err := loop(context.Background(), s); !errors.Is(err, ErrShellNotFound) {
		t.Errorf("err = %v", err)
	}
	if _, err := FindShell("no-such-shell-xyz"); !errors.Is(err, ErrShellNotFound) {
		t.Errorf("FindShell err = %v", err)
	}
}

// A script longer than one argument may be (128 KiB) still runs (hostile test: -f with a big heredoc).
func TestRunLongScript(t *testing.T) {
	var out buffer
	big := "cat <<'EOF' | wc -c\n" + strings.Repeat("x", 200_000) + "\nEOF\necho done"
	o, err := loop(context.Background(), spec(t, big, &out))
	if err != nil || o.ExitCode != 0 || out.String() != "200001\ndone\n" {
		t.Errorf("outcome %+v err %v output %q", o, err, out.String())
	}
}

// runOutput runs command (with stdin when given) and returns its output and exit status.
func runOutput(t *testing.T, command, stdin string) (string, int) {
	t.Helper()
	var out buffer
	s := spec(t, command, &out)
	if stdin != "" {
		s.Stdin = strings.NewReader(stdin)
	}
	o, err := loop(context.Background(), s)
	if err != nil {
		t.Fatalf("%.60q: %v", command, err)
	}
	return out.String(), bashStatus(o)
}

// A command too long for one argument runs through the loader; it must behave as the same text given to
// `bash -c` (reference §3.7). Each probe runs as written and padded past MaxArgBytes with a last comment line,
// which changes nothing but the length.
func TestRunLongCommandSameAsShort(t *testing.T) {
	pad := "\n#" + strings.Repeat("p", MaxArgBytes)
	for name, probe := range map[string]string{
		"$0, BASH_SOURCE, arguments, LINENO":  `echo "$0|${BASH_SOURCE[0]-unset}|${#BASH_SOURCE[@]}|$#|$*|$LINENO"; echo "$LINENO"`,
		"$_ and $? at the start":              `echo "[$_] $?"`,
		"error message names the line":        "true\nno_such_command_xyz; echo \"status $?\"",
		"alias defined earlier in the script": "shopt -s expand_aliases\nalias hi='echo alias works'\nhi",
		"exit N":                              "echo before; exit 7; echo after",
		"exit in a subshell":                  "(exit 3); echo $?",
		"errexit":                             "set -e; false; echo not reached",
		"trap on exit":                        "trap 'echo bye' EXIT; echo hi",
		"functions and return":                `f() { echo "${FUNCNAME[0]} $LINENO $#"; return 4; }; f a b; echo $?`,
		"return at top level":                 "return 2; echo after",
		"stdin is the command's":              "read -r line; echo \"got $line\"; read -r line; echo \"then $line\"",
		// The shell's own descriptors through a file, not a pipe: while it starts a pipeline the shell itself
		// holds the pipe for a moment, which ls could see.
		"descriptors":             `ls /proc/self/fd | tr '\n' ' '; echo; ls /proc/$$/fd > "${TMPDIR:-/tmp}/fds.$$"; tr '\n' ' ' < "${TMPDIR:-/tmp}/fds.$$"; rm -f "${TMPDIR:-/tmp}/fds.$$"`,
		"variables":               "true\n" + `compgen -v | grep -vx BASH_EXECUTION_STRING | tr '\n' ' '`,
		"execution string":        `echo "${BASH_EXECUTION_STRING:0:30}"`,
		"exec replaces the shell": `exec echo replaced; echo not reached`,
	} {
		t.Run(name, func(t *testing.T) {
			short, shortStatus := runOutput(t, probe, "one\ntwo\n")
			long, longStatus := runOutput(t, probe+pad, "one\ntwo\n")
			if short != long || shortStatus != longStatus {
				t.Errorf("short: %d %q\nlong:  %d %q", shortStatus, short, longStatus, long)
			}
		})
	}
}

// The one difference that remains: bash names the input of a syntax error `eval`, not `-c`.
func TestRunLongCommandSyntaxError(t *testing.T) {
	probe := "echo a\necho b; oops )"
	short, _ := runOutput(t, probe, "")
	long, status := runOutput(t, probe+"\n#"+strings.Repeat("p", MaxArgBytes), "")
	if status != 2 || !strings.Contains(short, ": -c: line 2: syntax error") ||
		strings.ReplaceAll(long, ": eval: line", ": -c: line") != short {
		t.Errorf("short %q\nlong %q (status %d)", short, long, status)
	}
}

// A script over 2 MiB (more than every argument and the environment may hold together) runs whole.
func TestRunCommandOverTwoMiB(t *testing.T) {
	command := strings.Repeat("x=$((x+1))\n", 250_000) + `echo "$x $LINENO"`
	if len(command) <= 2<<20 {
		t.Fatalf("command is only %d bytes", len(command))
	}
	if out, status := runOutput(t, command, ""); out != "250000 250001\n" || status != 0 {
		t.Errorf("got %d %q", status, out)
	}
}

// A command that fits in one argument, but not together with a large environment (E2BIG), goes through
// the loader too. The argument space is a quarter of the stack limit, lowered here to make it small.
func TestRunArgumentListTooLongFallsBack(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_STACK, &lim); err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = 1 << 20 // argv + environment may then hold 256 KiB
	if err := unix.Setrlimit(unix.RLIMIT_STACK, &low); err != nil {
		t.Skip(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_STACK, &lim)
	var out buffer
	s := spec(t, "echo $((${#BIG1} + ${#BIG2}))\n#"+strings.Repeat("p", 100_000), &out)
	s.Env = append(s.Env, "BIG1="+strings.Repeat("e", 90_000), "BIG2="+strings.Repeat("e", 90_000))
	o, err := loop(context.Background(), s)
	if err != nil || o.ExitCode != 0 || out.String() != "180000\n" {
		t.Errorf("outcome %+v err %v output %q", o, err, out.String())
	}
}

func TestRunCommandWithNULIsAnError(t *testing.T) {
	var out buffer
	_, err := loop(context.Background(), spec(t, "echo a\x00b", &out))
	if err == nil || !strings.Contains(err.Error(), "NUL byte (at byte 6)") {
		t.Errorf("err = %v", err)
	}
}

// The wrapper is an argv before the shell, so it covers the whole command, a chain included (reference §3.7).
func TestRunWrapper(t *testing.T) {
	base, _ := runOutput(t, "nice", "")
	for _, tc := range []struct {
		name    string
		wrapper []string
		command string
		want    string
	}{
		{"nice covers a chain", []string{"nice", "-n", "5"}, "cd / && nice", fmt.Sprint(min(19, atoi(t, base)+5)) + "\n"},
		{"env sets a variable", []string{"env", "FOO=a b"}, `echo "$FOO"`, "a b\n"},
		{"long command under a wrapper", []string{"env", "FOO=x"}, "echo $FOO\n#" + strings.Repeat("p", MaxArgBytes), "x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out buffer
			s := spec(t, tc.command, &out)
			s.Wrapper = tc.wrapper
			o, err := loop(context.Background(), s)
			if err != nil || o.ExitCode != 0 || out.String() != tc.want {
				t.Errorf("outcome %+v err %v output %q, want %q", o, err, out.String(), tc.want)
			}
		})
	}
	var out buffer
	s := spec(t, "true", &out)
	s.Wrapper = []string{"no-such-wrapper-xyz", "-n", "1"}
	_, err := loop(context.Background(), s)
	if !errors.Is(err, ErrWrapperNotFound) || err.Error() !=
		"wrapper program not found: no-such-wrapper-xyz: executable file not found in $PATH" {
		t.Errorf("err = %v", err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// Descriptors agentbash inherited are closed in the command; Go's own keep working (reference §3.7).
func TestInheritedDescriptorsAreClosedInTheCommand(t *testing.T) {
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil { // no O_CLOEXEC: as a caller's pipe arrives
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	for _, mark := range []func(){markInheritedCloseOnExec, func() { markEachCloseOnExec("/proc/self/fd") }} {
		for _, fd := range fds {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0)
		}
		mark()
		for _, fd := range fds {
			if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
				t.Errorf("fd %d: flags %v, %v; want close-on-exec", fd, flags, err)
			}
		}
	}
	CloseInheritedDescriptors()
	for _, command := range []string{"ls /proc/self/fd", "ls /proc/self/fd\n#" + strings.Repeat("p", MaxArgBytes)} {
		// ls opens 3 itself, to read the directory.
		if out, _ := runOutput(t, command, ""); out != "0\n1\n2\n3\n" {
			t.Errorf("the command sees descriptors %q", out)
		}
	}
}

// procState returns the state letter of pid, or 0 when it does not exist.
func procState(pid int) byte {
	_, st, _ := procStat(pid)
	return st
}

// bashStatus is the status bash would report for o ($?): the exit code, or 128+N for death by signal N.
func bashStatus(o Outcome) int {
	if o.SignalNumber > 0 {
		return 128 + o.SignalNumber
	}
	return o.ExitCode
}

// A lock a command takes on the stdin agentbash gave it (/dev/null) ends with the command: the next
// command, and every other program, can take one again (the description is not shared between runs).
func TestRunStdinLockEndsWithTheCommand(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock program")
	}
	var out buffer
	o, err := loop(context.Background(), spec(t, `flock -x 0 && echo locked`, &out))
	if err != nil || o.ExitCode != 0 || out.String() != "locked\n" {
		t.Fatalf("outcome %+v %v output %q", o, err, out.String())
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Errorf("/dev/null still locked after the command ended: %v", err)
	}
}

// slowOutput is an output whose first Write after the shell exited takes longer than DrainSilence.
type slowOutput struct {
	buffer
	d    **drainer
	once sync.Once
}

func (s *slowOutput) Write(p []byte) (int, error) {
	if *s.d != nil && (*s.d).exitedAt.Load() != 0 {
		s.once.Do(func() { time.Sleep(DrainSilence + 100*time.Millisecond) })
	}
	return s.buffer.Write(p)
}

// Data waiting in the pipe is never silence: a reader held up past the silence bound after the shell
// exited (the scheduler of a loaded machine, or an output slow to take a write) reads everything that
// is in the pipe, and the result is complete. The hold-ups are made, not hoped for: the test does not
// depend on the machine's speed.
func TestRunDrainReadsWhatThePipeHolds(t *testing.T) {
	const size = 200000 // in the pipe (1 MiB) at the shell's exit, more than one read takes
	cmd := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size)
	waitExited := func(d *drainer) {
		for end := time.Now().Add(10 * time.Second); d.exitedAt.Load() == 0 && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, tc := range []struct {
		name string
		slow bool // the output's Write is slow, else the reader is held up before its first read
	}{{"reader held up", false}, {"output slow", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var d *drainer
			var once sync.Once
			testHookBeforeRead = func(dr *drainer) {
				d = dr
				if tc.slow {
					once.Do(func() { waitExited(dr) })
					return
				}
				once.Do(func() {
					waitExited(dr)
					time.Sleep(DrainSilence + 100*time.Millisecond)
				})
			}
			defer func() { testHookBeforeRead = nil }()
			out := &slowOutput{d: &d}
			if !tc.slow {
				out.once.Do(func() {}) // never slow
			}
			sp := spec(t, cmd, nil)
			sp.Out = out
			o, err := loop(context.Background(), sp)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(out.String()); got != size || o.OutputIncomplete {
				t.Errorf("read %d of %d bytes, incomplete %v", got, size, o.OutputIncomplete)
			}
		})
	}
}

// A warning names processes by their ids, a space between two (the task's leftover text does the same).
func TestPidsText(t *testing.T) {
	for _, tt := range []struct {
		pids []int
		want string
	}{{nil, ""}, {[]int{4086}, "4086"}, {[]int{4086, 4090, 7}, "4086 4090 7"}} {
		if got := PidsText(tt.pids); got != tt.want {
			t.Errorf("PidsText(%v) = %q, want %q", tt.pids, got, tt.want)
		}
		if w := leftoverWarning(tt.pids, false); strings.Contains(w, "[") {
			t.Errorf("warning %q shows a Go slice", w)
		}
	}
}

// Seconds: a wait above 0 is never 0 (a task store's "no limit"), however small; ≤ 0 and NaN are 0; past a
// century is a century.
func TestSeconds(t *testing.T) {
	century := 100 * 365 * 24 * time.Hour
	for _, tt := range []struct {
		s    float64
		want time.Duration
	}{{0, 0}, {-1, 0}, {math.NaN(), 0}, {1e-10, time.Nanosecond}, {1e-9, time.Nanosecond}, {0.5, 500 * time.Millisecond},
		{300, 300 * time.Second}, {1e300, century}, {math.Inf(1), century}} {
		if got := Seconds(tt.s); got != tt.want {
			t.Errorf("Seconds(%v) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
