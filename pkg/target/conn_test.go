package target

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/rpc"

	// A test of this package that runs a command on this machine in-process re-executes the test binary as a
	// supervisor: pkg/reexec's init must take that process, or it would run every test again (without end).
	_ "github.com/agentbash/agentbash/pkg/reexec"
)

// bin is the agentbash under test, built by TestMain (version "dev", as Version here: without the
// version control stamp, which `go build` adds in a git clone unless -buildvcs=false).
var bin string

// guard bounds every wait of a test: a hang is a failure, not a timing assertion.
const guard = 30 * time.Second

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentbash-target-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = os.Chmod(dir, 0o755) // an unprivileged user's ssh and sshd session run it too
	bin = filepath.Join(dir, "agentbash")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/agentbash/agentbash")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rpcURI is a cmd:// target reaching the agentbash under test's rpc, with its state under home.
func rpcURI(t *testing.T) string {
	home := t.TempDir()
	return fmt.Sprintf("cmd://env HOME=%s XDG_STATE_HOME=%s/state %s rpc", home, home, bin)
}

// fake is a cmd:// target running a shell script as the far side.
func fake(t *testing.T, script string) string {
	p := filepath.Join(t.TempDir(), "far.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "cmd://" + p
}

func open(t *testing.T, uri string) *Executor {
	t.Helper()
	e, err := Open(uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e.(*Executor)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return c
}

func TestHelloThroughCmd(t *testing.T) {
	e := open(t, rpcURI(t))
	h, err := e.Hello(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := rpc.HelloData{Protocol: request.Protocol, Version: Version, OS: "linux", Arch: h.Arch}
	if h != want || h.Arch == "" {
		t.Errorf("hello = %+v, want %+v", h, want)
	}
}

// TestHandshakeRefused: a far side speaking another protocol, an older agentbash without hello, and a
// connector that ends before answering are errors naming the target and what to do.
func TestHandshakeRefused(t *testing.T) {
	for name, tt := range map[string]struct{ script, want string }{
		"protocol": {`read l; echo '{"id":0,"type":"response","command":"hello","success":false,` +
			`"data":{"protocol":99,"version":"9.9.9","os":"linux","arch":"amd64"},"error":"speaks protocol 99"}'; cat >/dev/null`,
			"speaks agentbash protocol 99 (version 9.9.9); this agentbash speaks 1 (version dev): " +
				"install the same version there: agentbash target install cmd://"},
		"older": {`read l; echo '{"id":0,"type":"response","success":false,` +
			`"error":"unknown request type \"hello\" (want bash, abort_bash, start, output, kill, wait or tasks)"}'; cat >/dev/null`,
			"runs an older agentbash, one without the target handshake; this one is dev: install the same version there"},
		"closed": {`echo 'engine: no route to the place' >&2; exit 255`, ": cannot connect: engine: no route to the place"},
		"silent": {`exit 3`, "cannot connect: the connector ended: exit status 3"},
		"not installed": {`echo "` + notInstalled + `: not on PATH" >&2; exit 127`,
			"agentbash is not installed on cmd://"},
		"refused": {`read l; echo '{"id":0,"type":"response","command":"hello","success":false,"error":"no \u001b[2Jtargets from here"}'; cat >/dev/null`,
			"refused the handshake: no targets from here"},
		// Not JSON first (a banner, a profile's greeting, junk): the end at once, not the hello's timeout.
		"banner": {`echo 'SSH-2.0-OpenSSH_9.6p1 Ubuntu'; exec sleep 60`,
			`cannot connect: it wrote what is not agentbash rpc's JSON: "SSH-2.0-OpenSSH_9.6p1 Ubuntu"`},
		"junk": {`printf '\033]0;owned\007\001\377junk%0200d\n' 0; exec sleep 60`,
			"cannot connect: it wrote what is not agentbash rpc's JSON: \"\ufffdjunk000"},
	} {
		t.Run(name, func(t *testing.T) {
			uri := fake(t, tt.script)
			c, cancel := context.WithTimeout(ctx(t), HelloTimeout/2) // a far side that is no rpc ends at once
			defer cancel()
			_, err := open(t, uri).Hello(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), uri) {
				t.Errorf("hello: %v\nwant an error naming %s with %q", err, uri, tt.want)
			}
		})
	}
}

// TestLostConnection: a connection that ends while a request waits fails it with an error naming the
// target and the engine's last stderr line; Run makes that an error result with details.target.
func TestLostConnection(t *testing.T) {
	uri := fake(t, `read l; echo '{"id":0,"type":"response","command":"hello","success":true,`+
		`"data":{"protocol":1,"version":"dev","os":"linux","arch":"amd64"}}'; read l; echo 'client_loop: send disconnect: Broken pipe' >&2; exit 255`)
	e := open(t, uri)
	r := e.Run(ctx(t), request.Command{Command: "true", Resolved: &request.Resolved{Command: "true", Run: "true",
		NormalizedCommand: "true", Timeout: 5, Head: -1, Tail: -1}}, nil)
	d := r.Details
	if d.Status != result.StatusError || !r.IsError || d.Target != uri || d.Command != "true" ||
		!strings.Contains(r.Text(), uri) || !strings.Contains(r.Text(), "client_loop: send disconnect: Broken pipe") {
		t.Errorf("result %+v\ntext %q", d, r.Text())
	}
}

// TestAbortOnCancel: a cancelled call sends abort_bash for its id and returns the far side's answer, a
// cancelled result; other requests on the connection go on.
func TestAbortOnCancel(t *testing.T) {
	e := open(t, rpcURI(t))
	c, err := e.connect(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	cctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	resp, err := c.call(cctx, rpc.TypeBash, map[string]any{"command": "echo go; sleep 60", "stream": true},
		func(u update) {
			if strings.Contains(u.Text, "go") {
				select {
				case started <- struct{}{}:
				default:
				}
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(resp.Data, &r); err != nil || r.Details.Status != result.StatusCancelled {
		t.Errorf("aborted call: %s, %v", resp.Data, err)
	}
	resp, err = c.call(ctx(t), rpc.TypeBash, map[string]any{"command": "echo again"}, nil)
	if err != nil || !resp.Success || !strings.Contains(string(resp.Data), "again") {
		t.Errorf("next call: %+v, %v", resp, err)
	}
}

// TestEOFKillsTreeIgnoringTERM: when an rpc's stdin ends, a running command that ignores SIGTERM is
// killed after the half second of a dead caller, not the configured grace (60 s here).
func TestEOFKillsTreeIgnoringTERM(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(bin, "rpc", "--kill-grace", "60")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home+"/state")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	fmt.Fprintln(stdin, `{"id":1,"type":"bash","stream":true,"command":"trap '' TERM; sleep 300 & echo pids $$ $!; wait"}`)
	pids := make(chan []int, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var u update
			_ = json.Unmarshal(sc.Bytes(), &u)
			if f := strings.Fields(u.Text); len(f) == 3 && f[0] == "pids" {
				a, _ := strconv.Atoi(f[1])
				b, _ := strconv.Atoi(f[2])
				pids <- []int{a, b}
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var ps []int
	select {
	case ps = <-pids:
	case <-time.After(guard):
		t.Fatal("the command never printed its pids")
	}
	stdin.Close()
	deadline := time.Now().Add(10 * time.Second) // generous: the grace is 0.5 s; the configured one 60 s
	for _, pid := range ps {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d still runs 10 s after the rpc's stdin closed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestGivingUp: a cancel while connecting ends the connector; a cancelled command whose abort is never
// answered is a cancelled result after AbortWait, saying so.
func TestGivingUp(t *testing.T) {
	hang := fake(t, `exec sleep 60`)
	c, cancel := context.WithCancel(ctx(t))
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, err := open(t, hang).Hello(c); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("hello cancelled: %v", err)
	}

	deaf := fake(t, `read l; echo '{"id":0,"type":"response","command":"hello","success":true,"data":{"protocol":1,"version":"dev"}}'; exec cat >/dev/null`)
	defer func(w time.Duration) { AbortWait = w }(AbortWait)
	AbortWait = 100 * time.Millisecond
	c, cancel = context.WithCancel(ctx(t))
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	r := open(t, deaf).Run(c, command("sleep 60"), nil)
	if d := r.Details; d.Status != result.StatusCancelled || d.Target != deaf || len(d.Warnings) != 1 ||
		!strings.Contains(d.Warnings[0], "did not answer the abort") {
		t.Errorf("unanswered abort: %+v", d)
	}
}

// TestStalledLink: a target that never answers a run ends the call as a lost connection once the command's
// timeout, grace and NoAnswerMargin passed (status error, naming the target), not never; --stdin, which does
// not travel, is refused before anything is sent.
func TestStalledLink(t *testing.T) {
	deaf := fake(t, `read l; echo '{"id":0,"type":"response","command":"hello","success":true,"data":{"protocol":1,"version":"dev"}}'; exec cat >/dev/null`)
	defer func(w, m time.Duration) { AbortWait, NoAnswerMargin = w, m }(AbortWait, NoAnswerMargin)
	AbortWait, NoAnswerMargin = 100*time.Millisecond, 100*time.Millisecond
	c := command("sleep 60")
	c.Resolved.Timeout, c.Resolved.KillGrace = 0.2, 0.1
	r := open(t, deaf).Run(ctx(t), c, nil)
	if d := r.Details; d.Status != result.StatusError || d.Target != deaf || !strings.Contains(r.Text(), "no answer from the target") {
		t.Errorf("stalled: %+v %q", d, r.Text())
	}
	c = command("cat")
	c.Stdin = strings.NewReader("x")
	if r := open(t, deaf).Run(ctx(t), c, nil); r.Details.Status != result.StatusError || !strings.Contains(r.Text(), "--stdin") {
		t.Errorf("stdin: %+v %q", r.Details, r.Text())
	}
}

// TestNoChainFromTheEnvironment: a connector that runs agentbash here inherits this environment; with
// AGENTBASH_TARGET naming that very target (or a config file naming one), the far rpc still runs the
// command where it is (the connector's environment says local), instead of connecting on without end.
func TestNoChainFromTheEnvironment(t *testing.T) {
	uri := rpcURI(t)
	t.Setenv("AGENTBASH_TARGET", uri)
	r := open(t, uri).Run(ctx(t), command(`echo "[$AGENTBASH_TARGET]"`), nil)
	if r.Details.Status != result.StatusExited || r.Text() != "[local]" {
		t.Errorf("%+v %q", r.Details, r.Text())
	}
}

// TestHelloTimeout: a far side that never answers the hello (a host that does not answer) is an error after
// HelloTimeout naming the target and the engine's last stderr line, and a run on it says how long it tried.
func TestHelloTimeout(t *testing.T) {
	defer func(h time.Duration) { HelloTimeout = h }(HelloTimeout)
	HelloTimeout = 300 * time.Millisecond
	uri := fake(t, `echo 'ssh: connect to host 10.1.2.3 port 22: Connection timed out' >&2; exec sleep 60`)
	r := open(t, uri).Run(ctx(t), command("true"), nil)
	want := "target " + uri + ": no hello from " + uri + " within 300ms: ssh: connect to host 10.1.2.3 port 22: Connection timed out"
	if d := r.Details; d.Status != result.StatusError || r.Text() != want || d.DurationMs < 300 {
		t.Errorf("%+v\n%q\nwant %q", d, r.Text(), want)
	}
}

// TestGarbageLater: a line that is not JSON after the hello ends the connection at once; the run waiting
// on it is an error result quoting it.
func TestGarbageLater(t *testing.T) {
	uri := fake(t, `read l; echo '{"id":0,"type":"response","success":true,"data":{"protocol":1,"version":"dev"}}'
read l; echo 'Segmentation fault (core dumped)'; exec sleep 60`)
	r := open(t, uri).Run(ctx(t), command("true"), nil)
	if d := r.Details; d.Status != result.StatusError ||
		!strings.Contains(r.Text(), `connection lost: it wrote what is not agentbash rpc's JSON: "Segmentation fault (core dumped)"`) {
		t.Errorf("%+v %q", d, r.Text())
	}
}

// TestEOFPassesTheShortGrace: an rpc whose commands run on a target and whose own input ends (its caller
// went away) ends the far tree as a dead caller's, SIGTERM then SIGKILL 0.5 s later, not after its kill
// grace (a minute here): the abort carries the grace.
func TestEOFPassesTheShortGrace(t *testing.T) {
	cmd := exec.Command(bin, "rpc", "--kill-grace", "60", "--target", rpcURI(t))
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	fmt.Fprintln(in, `{"id":1,"type":"bash","stream":true,"command":"trap '' TERM; echo $$; exec sleep 300"}`)
	sc := bufio.NewScanner(out)
	pid := 0
	for pid == 0 && sc.Scan() {
		var u struct{ Type, Text string }
		if json.Unmarshal(sc.Bytes(), &u) == nil && u.Type == "update" {
			pid, _ = strconv.Atoi(strings.TrimSpace(u.Text))
		}
	}
	if pid == 0 || !alive(pid) {
		t.Fatalf("no far pid (%d)", pid)
	}
	in.Close()
	for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the far tree outlived its caller's end by 10 s: the abort did not carry the short grace")
	}
}
