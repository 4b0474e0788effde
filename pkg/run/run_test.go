//go:build linux

package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// buffer is a goroutine-safe output collector.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func spec(t *testing.T, command string, out *buffer) Spec {
	t.Helper()
	shell, err := FindShell("")
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Command: command, Shell: shell, Dir: t.TempDir(), Env: Environ(os.Environ()),
		Timeout: 20 * time.Second, KillGrace: 500 * time.Millisecond, Output: out}
}

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
	o, err := Local{}.Run(context.Background(), spec(t, "echo a; echo b >&2; echo c; exit 3", &out))
	if err != nil {
		t.Fatal(err)
	}
	if o.ExitCode != 3 || o.Signal != "" || o.TimedOut || o.ExitStatus() != 3 {
		t.Errorf("outcome %+v", o)
	}
	if got := out.String(); got != "a\nb\nc\n" {
		t.Errorf("output %q", got)
	}
}

func TestRunSignaled(t *testing.T) {
	var out buffer
	o, _ := Local{}.Run(context.Background(), spec(t, "kill -SEGV $$", &out))
	if o.Signal != "SIGSEGV" || o.ExitCode != -1 || o.ExitStatus() != 128+11 {
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
	o, err := Local{}.Run(context.Background(), s)
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
	o, _ := Local{}.Run(context.Background(), s)
	if !o.TimedOut || o.Signal != "SIGKILL" {
		t.Errorf("outcome %+v", o)
	}
	if pids := alive(m); len(pids) > 0 {
		t.Errorf("survivors: %v", pids)
	}
}

func TestRunBackgroundHoldingPipeDoesNotHang(t *testing.T) {
	m := marker(t)
	var out buffer
	o, _ := Local{}.Run(context.Background(), spec(t, fmt.Sprintf(`(exec -a %s sleep 30) & echo started`, m), &out))
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
	o, _ := Local{}.Run(context.Background(), spec(t, `echo started; (while :; do echo tick; sleep 0.05; done) &`, &out))
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
	s.Output, s.LimitMet = out, out.met
	o, err := Local{}.Run(context.Background(), s)
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
	s.Output, s.LimitMet = out, out.met
	o, err := Local{}.Run(context.Background(), s)
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
	s.Output = &refuser{n: 2}
	o, _ := Local{}.Run(context.Background(), s)
	if !o.OutputClosed || !o.OutputIncomplete || o.Signal != "SIGPIPE" || o.TimedOut {
		t.Errorf("outcome %+v", o)
	}
}

func TestRunCancel(t *testing.T) {
	m := marker(t)
	var out buffer
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	o, _ := Local{}.Run(ctx, spec(t, fmt.Sprintf(`exec -a %s sleep 60`, m), &out))
	if !o.Cancelled || o.TimedOut || o.Signal != "SIGTERM" {
		t.Errorf("outcome %+v", o)
	}
}

func TestRunNoControllingTerminal(t *testing.T) {
	var out buffer
	o, _ := Local{}.Run(context.Background(), spec(t, `read -r x < /dev/tty; echo rc=$?`, &out))
	if o.ExitCode != 0 || !strings.HasPrefix(out.String(), "rc=1") && !strings.Contains(out.String(), "rc=1") {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
}

func TestRunStdinDefaultsToDevNull(t *testing.T) {
	var out buffer
	o, _ := Local{}.Run(context.Background(), spec(t, `cat; echo done`, &out))
	if o.ExitCode != 0 || out.String() != "done\n" {
		t.Errorf("outcome %+v output %q", o, out.String())
	}
	s := spec(t, `cat`, &out)
	s.Stdin = strings.NewReader("given\n")
	out.b.Reset()
	if _, err := (Local{}).Run(context.Background(), s); err != nil || out.String() != "given\n" {
		t.Errorf("stdin not passed: %v %q", err, out.String())
	}
}

func TestRunShellNotFound(t *testing.T) {
	var out buffer
	s := spec(t, "true", &out)
	s.Shell = "/nonexistent/bash"
	if _, err := (Local{}).Run(context.Background(), s); !errors.Is(err, ErrShellNotFound) {
		t.Errorf("err = %v", err)
	}
	if _, err := FindShell("no-such-shell-xyz"); !errors.Is(err, ErrShellNotFound) {
		t.Errorf("FindShell err = %v", err)
	}
}

func TestEnviron(t *testing.T) {
	env := Environ([]string{"CI=1", "HOME=/h", "LANG=fr_FR.UTF-8"}, []string{"X=1", "CI=layer"}, []string{"X=2"})
	get := func(k string) string {
		for _, kv := range env {
			if key, v, _ := strings.Cut(kv, "="); key == k {
				return v
			}
		}
		return "<unset>"
	}
	for k, want := range map[string]string{"CI": "layer", "HOME": "/h", "X": "2", "LANG": "fr_FR.UTF-8",
		"GIT_PAGER": "cat", "AWS_PAGER": "", "TERM": "dumb"} {
		if got := get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if Environ(nil)[len(Environ(nil))-1] != "LANG=C.UTF-8" {
		t.Errorf("LANG default missing")
	}
	keys := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if keys[k] {
			t.Errorf("duplicate key %s", k)
		}
		keys[k] = true
	}
}

func TestResolveDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	os.WriteFile(file, nil, 0o600)
	t.Chdir(tmp)
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", tmp, ""},
		{".", tmp, ""},
		{"~", tmp, ""},
		{"~/", tmp, ""},
		{tmp + "/./", tmp, ""},
		{"/nonexistent", "", "Working directory does not exist: /nonexistent"},
		{"f", "", "Working directory is not a directory: " + file},
		{"missing/x", "", "Working directory does not exist: " + filepath.Join(tmp, "missing/x")},
	} {
		got, err := ResolveDir(tc.in, tmp)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ResolveDir(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveDir(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// A script longer than one argument may be (128 KiB) still runs (hostile test: -f with a big heredoc).
func TestRunLongScript(t *testing.T) {
	var out buffer
	big := "cat <<'EOF' | wc -c\n" + strings.Repeat("x", 200_000) + "\nEOF\necho done"
	o, err := Local{}.Run(context.Background(), spec(t, big, &out))
	if err != nil || o.ExitCode != 0 || out.String() != "200001\ndone\n" {
		t.Errorf("outcome %+v err %v output %q", o, err, out.String())
	}
}

func TestResolveDirNotAccessible(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can enter any directory")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	os.Mkdir(dir, 0o000)
	if _, err := ResolveDir(dir, ""); err == nil || !strings.Contains(err.Error(), "not accessible") {
		t.Errorf("err = %v", err)
	}
}

// procState returns the state letter of pid, or 0 when it does not exist.
func procState(pid int) byte {
	_, st, _ := procStat(pid)
	return st
}
