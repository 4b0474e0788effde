package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
)

func sessionConfig(t *testing.T) testConfig {
	c := config(t)
	c.SessionDir = filepath.Join(t.TempDir(), "sessions")
	return c
}

func inSession(r *runner, name, command string) result.Result {
	return r.Run(context.Background(), Request{Command: command, Session: name}, nil)
}

// The state carries over (details.session, details.finalCwd); a timed-out command leaves it as it was;
// `exit N` keeps it; an explicit cwd wins and sticks.
func TestSessionRun(t *testing.T) {
	c := sessionConfig(t)
	r := newRunner(c)
	res := inSession(r, "s", `cd / && export X=1`)
	if d := res.Details; d.Status != result.StatusExited || d.Session != "s" || d.FinalCwd != "/" {
		t.Fatalf("first: %+v", d)
	}
	if res := inSession(r, "s", `pwd; echo $X`); res.Output != "/\n1" || res.Details.Cwd != "/" {
		t.Errorf("second: %q %+v", res.Output, res.Details)
	}
	one := 1.0
	res = r.Run(context.Background(), Request{Command: `cd /tmp; export X=2; sleep 10`, Session: "s", Timeout: &one}, nil)
	if d := res.Details; d.Status != result.StatusTimedOut || d.FinalCwd != "" || d.Session != "s" {
		t.Errorf("timed out: %+v", d)
	}
	if res := inSession(r, "s", `pwd; echo $X`); res.Output != "/\n1" {
		t.Errorf("after the timeout: %q", res.Output)
	}
	if res := inSession(r, "s", `export X=3; exit 3`); res.Details.FinalCwd != "/" || *res.Details.ExitCode != 3 {
		t.Errorf("exit 3: %+v", res.Details)
	}
	dir := t.TempDir()
	res = r.Run(context.Background(), Request{Command: `pwd; echo $X`, Session: "s", Cwd: dir}, nil)
	if res.Output != dir+"\n3" || res.Details.FinalCwd != dir {
		t.Errorf("explicit cwd: %q %+v", res.Output, res.Details)
	}
	if res := inSession(r, "s", `pwd`); res.Output != dir {
		t.Errorf("after the explicit cwd: %q", res.Output)
	}
	if res := inSession(r, "other", `echo "[${X-unset}]"`); res.Output != "[unset]" {
		t.Errorf("another session: %q", res.Output)
	}
	if res := r.Run(context.Background(), Request{Command: `echo "[${X-unset}]"`}, nil); res.Output != "[unset]" || res.Details.Session != "" {
		t.Errorf("no session: %q %+v", res.Output, res.Details)
	}
	// The session's cwd was removed: the usual error, nothing runs.
	gone := filepath.Join(t.TempDir(), "gone")
	inSession(r, "g", `mkdir `+gone+` && cd `+gone)
	os.Remove(gone)
	if res := inSession(r, "g", `echo ran`); res.Details.Status != result.StatusError || res.Output != "Working directory does not exist: "+gone {
		t.Errorf("removed cwd: %q %+v", res.Output, res.Details)
	}
}

// The request's explicit environment (shell.env, --env, the request's env) wins over the session's.
func TestSessionExplicitEnv(t *testing.T) {
	c := sessionConfig(t)
	inSession(newRunner(c), "s", `export A=session B=session`)
	c.Env = []string{"A=config"}
	res := newRunner(c).Run(context.Background(), Request{Command: `echo $A $B`, Session: "s", Env: map[string]string{"B": "request"}}, nil)
	if res.Output != "config request" {
		t.Errorf("got %q", res.Output)
	}
	c.Env = nil
	if res := inSession(newRunner(c), "s", `echo $A $B`); res.Output != "session session" {
		t.Errorf("after: %q", res.Output)
	}
}

// A request cancelled while it waits for its session's running command is a cancelled result, and it
// never runs; a bad name is an error result.
func TestSessionCancelWhileWaiting(t *testing.T) {
	c := sessionConfig(t)
	r := newRunner(c)
	inSession(r, "s", "cd /")
	l, err := session.Store{Dir: c.SessionDir}.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	marker := filepath.Join(t.TempDir(), "ran")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res := r.Run(ctx, Request{Command: "touch " + marker, Session: "s"}, nil)
	if d := res.Details; d.Status != result.StatusCancelled || d.Session != "s" || !res.IsError || d.Cwd != "/" {
		t.Errorf("cancelled: %+v", d)
	}
	// Answered cancelled without running (rpc: aborted in its session's queue): the session's name and cwd.
	if d := r.Cancelled(Request{Command: "true", Session: "s"}).Details; d.Session != "s" || d.Cwd != "/" {
		t.Errorf("cancelled in the queue: %+v", d)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	res = inSession(r, "../x", "touch "+marker)
	if res.Details.Status != result.StatusError || !strings.Contains(res.Output, "session name") || res.Details.Session != "" {
		t.Errorf("bad name: %q %+v", res.Output, res.Details)
	}
	c.Shell = "/bin/sh"
	if res := inSession(newRunner(c), "t", "true"); res.Details.Status != result.StatusError || !strings.Contains(res.Output, "need bash") {
		t.Errorf("sh: %q", res.Output)
	}
}

// Two commands of one session never interleave: the second waits and sees what the first left.
func TestSessionSerializes(t *testing.T) {
	c := sessionConfig(t)
	r := newRunner(c)
	firstDone := make(chan result.Result)
	go func() {
		firstDone <- r.Run(context.Background(), Request{Command: `sleep 0.2; export N=first`, Session: "s"}, nil)
	}()
	// The first holds the session once its prelude is written; the second then waits for it.
	for {
		if m, _ := filepath.Glob(filepath.Join(c.SessionDir, "s", "prelude.sh")); len(m) > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	second := r.Run(context.Background(), Request{Command: `echo "[${N-unset}]"`, Session: "s"}, nil)
	first := <-firstDone
	if first.Details.Status != result.StatusExited || second.Output != "[first]" {
		t.Errorf("first %+v, second %q", first.Details, second.Output)
	}
}

// A task starts from its session's state and never writes it back.
func TestSessionTask(t *testing.T) {
	c := sessionConfig(t)
	r := newRunner(c)
	inSession(r, "s", `cd / && export X=kept`)
	out := filepath.Join(t.TempDir(), "out")
	store := tasks.Store{Dir: filepath.Join(t.TempDir(), "tasks")}
	res := r.Start(context.Background(), Request{Command: `echo "$PWD $X" > ` + out + `; cd /tmp; export X=task`, Session: "s"}, Task{Store: store})
	if res.Details.Status != "running" || res.Details.Session != "s" {
		t.Fatalf("start: %+v", res.Details)
	}
	if _, err := store.Wait(res.Details.TaskID, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "/ kept\n" {
		t.Errorf("the task saw %q", b)
	}
	if res := inSession(r, "s", `echo "$PWD $X"`); res.Output != "/ kept" {
		t.Errorf("after the task: %q", res.Output)
	}
	entries, _ := os.ReadDir(filepath.Join(c.SessionDir, "s"))
	for _, e := range entries {
		if info, _ := e.Info(); strings.HasPrefix(e.Name(), "task.") && info.Size() != 0 {
			t.Errorf("the task's prelude is still there: %s", e.Name())
		}
	}
}

// A command too long for one argument (the memfd loader) behaves in a session as without one.
func TestSessionLongCommand(t *testing.T) {
	r := newRunner(sessionConfig(t))
	inSession(r, "s", `export X=long`)
	long := "echo $LINENO $X\n: " + strings.Repeat("x", 200<<10) + "\necho $LINENO"
	res := inSession(r, "s", long)
	if res.Output != "1 long\n3" || res.Details.FinalCwd == "" {
		t.Errorf("got %q %+v", res.Output, res.Details.Warnings)
	}
	// The session's xtrace and pipefail apply to the command, not to the loader before it.
	inSession(r, "s", `set -x -o pipefail`)
	res = inSession(r, "s", long+"\n[[ -o pipefail ]] && echo pf-on")
	// (The loader runs the command through eval, whose trace lines start with ++, as without a session.)
	if !strings.HasSuffix(res.Output, "++ echo 3\n3\n++ [[ -o pipefail ]]\n++ echo pf-on\npf-on") || *res.Details.ExitCode != 0 {
		t.Errorf("set -x -o pipefail: %q", res.Output[max(0, len(res.Output)-300):])
	}
}

// The user's bashrc snapshot is there in a session too, under the session's own state.
func TestSessionWithSnapshot(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("rcfn() { echo from-rc; }\nalias rcal='echo rc-alias'\n"), 0o600)
	c := sessionConfig(t)
	c.Snapshot, c.SnapshotDir = true, filepath.Join(t.TempDir(), "snap")
	r := newRunner(c)
	inSession(r, "s", `rcfn() { echo from-session; }`)
	if res := inSession(r, "s", "rcfn; rcal"); res.Output != "from-session\nrc-alias" {
		t.Errorf("got %q %v", res.Output, res.Details.Warnings)
	}
}

// POSIXLY_CORRECT puts bash in POSIX mode, where it reads no BASH_ENV: a session command is then an error
// result that says why, never a run that silently lost its state.
func TestSessionPosixMode(t *testing.T) {
	c := sessionConfig(t)
	r := newRunner(c)
	inSession(r, "s", `export KEEP=1`)
	res := r.Run(context.Background(), Request{Command: `echo ran`, Session: "s", Env: map[string]string{"POSIXLY_CORRECT": "y"}}, nil)
	if res.Details.Status != result.StatusError || !strings.Contains(res.Output, "POSIXLY_CORRECT") || strings.Contains(res.Output, "ran") {
		t.Errorf("%q %+v", res.Output, res.Details)
	}
	if res := inSession(r, "s", `echo $KEEP`); res.Output != "1" {
		t.Errorf("after: %q", res.Output)
	}
}

// A relative cwd resolves against where the command would otherwise start: its session's directory (the last
// command's, a/sub after the first case), else
// the server's start directory (a target's /dir, rpc --cwd), else the current directory.
func TestRelativeCwd(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/sub", "b/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := newRunner(sessionConfig(t))
	inSession(r, "s", "cd "+filepath.Join(root, "a"))
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Command: "pwd", Session: "s", Cwd: "sub"}, filepath.Join(root, "a/sub")},
		{Request{Command: "pwd", Session: "s", Cwd: "../../b/sub", StartCwd: "/"}, filepath.Join(root, "b/sub")},
		{Request{Command: "pwd", Cwd: "sub", StartCwd: filepath.Join(root, "b")}, filepath.Join(root, "b/sub")},
		{Request{Command: "pwd", Cwd: root, StartCwd: "/nonexistent"}, root},
	} {
		res := r.Run(context.Background(), tc.req, nil)
		if res.Output != tc.want || res.Details.Cwd != tc.want {
			t.Errorf("%+v: ran in %q (details %q), want %q", tc.req, res.Output, res.Details.Cwd, tc.want)
		}
	}
}
