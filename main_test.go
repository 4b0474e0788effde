package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentbash/agentbash/pkg/supervisor"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"agentbash": main})
}

// TestScripts runs the end-to-end scripts in testscripts/, one behaviour per script. UPDATE_SCRIPTS=1
// rewrites their golden files.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testscripts"))
}

// TestSandboxScripts runs testscripts/sandbox in work directories under /var/tmp, not the system temp dir: a
// sandboxed command has a private /tmp, so a tree under the host's /tmp would be out of its reach whatever
// the sandbox's other rules say, and prove nothing.
func TestSandboxScripts(t *testing.T) {
	p := scriptParams("testscripts/sandbox")
	root, err := os.MkdirTemp("/var/tmp", "agentbash-sandbox-scripts")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	os.Chmod(root, 0o755) // the scripts that run as another user reach their work directory through it
	t.Cleanup(func() { os.RemoveAll(root) })
	p.WorkdirRoot = root
	testscript.Run(t, p)
}

func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			// No ~/.bashrc, no user config, artifacts inside the script's work dir.
			home := filepath.Join(env.WorkDir, "home")
			env.Setenv("HOME", home)
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, "config"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "cache"))
			env.Setenv("ARTDIR", filepath.Join(env.WorkDir, "state", "agentbash", "artifacts"))
			// A file name that is not UTF-8 (é in Latin-1), for scripts that pass bytes as they are.
			env.Setenv("LATIN1", "caf\xe9.txt")
			// The folder holding the MCP TypeScript SDK for mcp_typescript_client.txtar (set by .ci/run).
			if sdk := os.Getenv("MCP_TYPESCRIPT_SDK"); sdk != "" {
				env.Setenv("MCP_TYPESCRIPT_SDK", sdk)
			}
			return os.MkdirAll(home, 0o755)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "mcpsdk": // the MCP TypeScript SDK is installed (MCP_TYPESCRIPT_SDK names its folder)
				return os.Getenv("MCP_TYPESCRIPT_SDK") != "", nil
			case "root":
				return os.Geteuid() == 0, nil
			case "userns": // this process can make a user namespace (the sandbox's namespaced level)
				return sandbox.ProbeUserNS() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"json":      cmdJSON,
			"cmptext":   cmdCmptext,
			"survivors": cmdSurvivors,
			"reap":      cmdReap,
			"signal":    cmdSignal,
			"pty":       cmdPty,
			"poll":      cmdPoll,
			"await":     cmdAwait,
		},
	}
}

// exitcode N PROG ARGS... runs PROG like exec and requires exit status N.
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad N %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d\nstdout: %s\nstderr: %s", got, want, ts.ReadFile("stdout"), ts.ReadFile("stderr"))
	}
}

// json PATH [VALUE] checks a field of the JSON object on the last stdout. PATH is dotted, with numbers for
// array indexes (content.0.text). Without VALUE the field must exist and not be null. VALUE is compared as
// JSON when it parses as JSON, else as a string. With !, the field must differ (or be missing).
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: json PATH [VALUE]")
	}
	var doc any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc); err != nil {
		ts.Fatalf("stdout is not one JSON object: %v", err)
	}
	got, found := lookup(doc, args[0])
	var ok bool
	if len(args) == 1 {
		ok = found && got != nil
	} else {
		var want any
		if err := json.Unmarshal([]byte(args[1]), &want); err != nil {
			want = args[1]
		}
		ok = found && fmt.Sprint(got) == fmt.Sprint(want)
	}
	if ok == neg {
		b, _ := json.Marshal(got)
		ts.Fatalf("json %s: got %s (found=%v), want %s%v", args[0], b, found, map[bool]string{true: "not ", false: ""}[neg], args[1:])
	}
}

func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// cmptext FILE compares the result text (content.0.text of the JSON on the last stdout) with FILE, whose
// one final newline is ignored.
func cmdCmptext(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: cmptext FILE")
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &r); err != nil || len(r.Content) == 0 {
		ts.Fatalf("stdout is not a result: %v", err)
	}
	want := strings.TrimSuffix(ts.ReadFile(args[0]), "\n")
	if (r.Content[0].Text == want) == neg {
		ts.Fatalf("result text:\n%s\nwant:\n%s", r.Content[0].Text, want)
	}
}

// survivors MARKER succeeds when a live process has MARKER in its command line; `! survivors MARKER`
// requires that none has (waiting up to 2 s for the kernel to finish killing), and kills any it finds.
func cmdSurvivors(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: survivors MARKER")
	}
	var found []int
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		found = liveWithMarker(args[0])
		if !neg || len(found) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range found {
		if neg {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
	if neg && len(found) > 0 {
		ts.Fatalf("processes with %q survived: %v", args[0], found)
	}
	if !neg && len(found) == 0 {
		ts.Fatalf("no process with %q", args[0])
	}
}

func liveWithMarker(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		if strings.Contains(string(b), "agentbash") || strings.Contains(string(b), "-c\x00") {
			continue // the runner's own command line names the marker too
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// reap MARKER kills every live process with MARKER in its command line (cleanup).
func cmdReap(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: reap MARKER")
	}
	for _, p := range liveWithMarker(args[0]) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// signal SIG MARKER sends SIG (TERM, HUP, INT…) to every agentbash process that runs a process whose
// command line holds MARKER (agentbash's own command line hides the command); testscript's own kill knows
// only INT and KILL.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: signal SIG MARKER")
	}
	sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT}[args[0]]
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[0])
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	signalled := map[int]bool{}
	for _, d := range dirs {
		if b, err := os.ReadFile(d + "/cmdline"); err != nil || !strings.Contains(string(b), args[1]) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		for p := parent(pid); p > 1; p = parent(p) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			argv := strings.Split(string(b), "\x00")
			if filepath.Base(argv[0]) == "agentbash" && (len(argv) < 2 || argv[1] != supervisor.Command) {
				if !signalled[p] && syscall.Kill(p, sig) == nil {
					signalled[p] = true
				}
				break
			}
		}
	}
	if len(signalled) == 0 {
		ts.Fatalf("no agentbash process runs one with %q", args[1])
	}
}

// pty [-exit N] [-intr TEXT] [-cols N] [-rows N] PROG ARGS... runs PROG with stdin, stdout and stderr on a
// new pseudo-terminal (its controlling terminal) and puts what the terminal showed on stdout, with \r\n
// turned into \n. The exit status must be N (default 0). With -intr, once TEXT has appeared (\n in it
// stands for a line break) the terminal gets Ctrl-C: the line discipline echoes ^C and sends SIGINT to
// PROG, as a person at the keyboard would.
func cmdPty(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: pty [-exit N] [-intr TEXT] [-cols N] [-rows N] prog args...")
	}
	want, intr, size := 0, "", unix.Winsize{Col: 80, Row: 24}
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		n, _ := strconv.Atoi(args[1])
		switch args[0] {
		case "-exit":
			want = n
		case "-intr":
			intr = strings.ReplaceAll(args[1], `\n`, "\n")
		case "-cols":
			size.Col = uint16(n)
		case "-rows":
			size.Row = uint16(n)
		default:
			ts.Fatalf("pty: unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: pty [-exit N] [-intr TEXT] [-cols N] [-rows N] prog args...")
	}
	prog := args[0]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[0]); !strings.Contains(args[0], "/") && unix.Access(p, unix.X_OK) == nil {
			prog = p
			break
		}
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	ts.Check(err)
	defer master.Close()
	ptn, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	ts.Check(err)
	ts.Check(unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	ts.Check(unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &size))
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(ptn), os.O_RDWR|unix.O_NOCTTY, 0)
	ts.Check(err)

	cmd := exec.Command(prog, args[1:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = scriptEnv(ts)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	tty.Close()
	ts.Check(err)
	safety := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer safety.Stop()

	var shown []byte
	buf := make([]byte, 4096)
	for sent := false; ; {
		n, err := master.Read(buf)
		shown = append(shown, buf[:n]...)
		if intr != "" && !sent && strings.Contains(strings.ReplaceAll(string(shown), "\r\n", "\n"), intr) {
			_, _ = master.Write([]byte{3}) // Ctrl-C
			sent = true
		}
		if err != nil {
			break // EIO once the last holder of the terminal has closed it
		}
	}
	err = cmd.Wait()
	got := 0
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("pty: %v", err)
	}
	out := strings.ReplaceAll(string(shown), "\r\n", "\n")
	fmt.Fprint(ts.Stdout(), out)
	if got != want {
		ts.Fatalf("exit status %d, want %d\nterminal:\n%q", got, want, out)
	}
}

// poll [-t SECONDS] ID PATH REGEX reads task ID (agentbash output --format json --reader poll --wait 0.5)
// until PATH matches REGEX, or fails after SECONDS (default 20) or once the task has ended and PATH still
// does not match. PATH text is everything the reader "poll" has read so far (its own position: the default
// reader is not moved); any other PATH is a dotted field of the newest result (as json takes it, its value
// printed as Go prints it). The newest result stays on stdout for json to check. A condition polled, not
// a sleep: a slow machine only makes it take longer.
func cmdPoll(ts *testscript.TestScript, neg bool, args []string) {
	limit := 20 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		s, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			ts.Fatalf("poll: bad -t %q", args[1])
		}
		limit, args = time.Duration(s*float64(time.Second)), args[2:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: poll [-t SECONDS] ID PATH REGEX")
	}
	id, path := args[0], args[1]
	re, err := regexp.Compile(args[2])
	ts.Check(err)
	var all strings.Builder
	var got string
	for deadline := time.Now().Add(limit); ; {
		if err := ts.Exec("agentbash", "output", "--format", "json", "--reader", "poll", "--wait", "0.5", id); err != nil {
			ts.Fatalf("poll: agentbash output %s: %v\n%s", id, err, ts.ReadFile("stderr"))
		}
		var doc any
		if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &doc); err != nil {
			ts.Fatalf("poll: output is not one JSON object: %v", err)
		}
		if text, ok := lookup(doc, "content.0.text"); ok && fmt.Sprint(text) != "(no new output)" {
			all.WriteString(fmt.Sprint(text))
		}
		if path == "text" {
			got = all.String()
		} else {
			v, _ := lookup(doc, path)
			got = fmt.Sprint(v)
		}
		if re.MatchString(got) {
			return
		}
		status, _ := lookup(doc, "details.status")
		if status != "running" || time.Now().After(deadline) {
			ts.Fatalf("poll: task %s (%v): %s never matched %q; last:\n%s", id, status, path, args[2], got)
		}
	}
}

// await VAR FILE waits (up to 20 s) until FILE holds a whole line and sets VAR to it: a server started in
// the background writes the port it listens on there once it listens, so the script learns both that it is
// ready and where. A condition polled, not a sleep.
func cmdAwait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: await VAR FILE")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(ts.MkAbs(args[1]))
		if line, ok := strings.CutSuffix(string(b), "\n"); err == nil && ok && !strings.Contains(line, "\n") {
			ts.Setenv(args[0], line)
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("await: %s holds no line after 20 s (%q, %v)", args[1], b, err)
		}
	}
}

// scriptEnv is the script's environment, for commands started outside ts.Exec.
func scriptEnv(ts *testscript.TestScript) []string {
	keys := []string{"PATH", "HOME", "WORK", "TMPDIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
		"ARTDIR", "TERM", "NO_COLOR", "LANG", "LC_ALL"}
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var env []string
	for _, k := range keys {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// parent is the parent pid of pid, from /proc/PID/stat, or 0.
func parent(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(string(b), ')')
	if err != nil || i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
