package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/local"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/service"
	// The test binary is what agentbash re-executes itself as (a run's supervisor, the snapshot
	// helper): the runs a test starts re-execute it, and pkg/reexec's init runs them.
	_ "github.com/agentbash/agentbash/pkg/reexec"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// testService is a service on this machine with its directories under dir: timeout and kill grace in
// seconds.
func testService(dir string, timeout, killGrace float64) *service.Service {
	return service.New(service.Config{Timeout: timeout, KillGrace: killGrace, NonZeroExit: result.NonZeroError},
		local.New(local.Config{ArtifactDir: filepath.Join(dir, "art"), SessionDir: filepath.Join(dir, "sessions"),
			TaskDir: filepath.Join(dir, "tasks"), KillLimit: time.Duration(killGrace+10) * time.Second}))
}

// testServer is a server over a temporary artifact and task directory.
func testServer(t *testing.T, edit func(*Options)) *Server {
	t.Helper()
	dir := t.TempDir()
	o := Options{
		Service: testService(dir, 30, 1),
		Version: "test",
	}
	if edit != nil {
		edit(&o)
	}
	return New(o)
}

// connect serves one in-memory connection of s and returns its client; the connection is closed at the
// end of the test, and served reports Serve's return.
func connect(t *testing.T, s *Server, opts *mcp.ClientOptions) (cs *mcp.ClientSession, served chan error) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	served = make(chan error, 1)
	go func() { served <- s.Serve(context.Background(), st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, served
}

// connectStdio serves s over the stdio transport on one end of a pipe and returns a client on the other:
// closing client is the client going away (cs.Close would wait for the calls to end); served reports
// Serve's return.
func connectStdio(t *testing.T, s *Server) (cs *mcp.ClientSession, client net.Conn, served chan error) {
	t.Helper()
	server, client := net.Pipe()
	served = make(chan error, 1)
	go func() { served <- s.Serve(context.Background(), Stdio(server, server)) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: client, Writer: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, client, served
}

// call calls tool with args and fails the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return r
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// details is the structuredContent of r as result.Details (the client decodes it as a map).
func details(t *testing.T, r *mcp.CallToolResult) result.Details {
	t.Helper()
	var d result.Details
	b, err := json.Marshal(r.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		t.Fatalf("structuredContent %v: %v", r.StructuredContent, err)
	}
	return d
}

// marked lists the live processes whose argv[0] is marker (`exec -a MARKER sleep …`).
func marked(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		stat, _ := os.ReadFile(d + "/stat")
		if err != nil || !strings.HasPrefix(string(b), marker+"\x00") {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// waitFor polls cond every 20 ms, for at most limit (a bound against a hang, not a timing assertion).
func waitFor(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// reap kills what is left of marker's processes at the end of a test.
func reap(t *testing.T, marker string) {
	t.Cleanup(func() {
		for _, pid := range marked(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

var markers = 0

// callIgnoringTERM calls bash with a command that ignores SIGTERM and sleeps, in the background, and
// returns its marker once the command shows.
func callIgnoringTERM(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	m := newMarker(t)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": fmt.Sprintf(`trap "" TERM; exec -a %s sleep 300`, m)}})
	}()
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 1 }) {
		t.Fatalf("the command did not show: %v", marked(m))
	}
	return m
}

func newMarker(t *testing.T) string {
	markers++
	m := fmt.Sprintf("abmcptest%d-%d", os.Getpid(), markers)
	reap(t, m)
	return m
}

func TestToolsListSchemas(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type prop struct {
		Type any `json:"type"` // a name, or a list of names
	}
	type schema struct {
		Type                 string          `json:"type"`
		Properties           map[string]prop `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties any             `json:"additionalProperties"`
	}
	want := map[string]struct {
		props    map[string]string
		required []string
	}{
		"bash": {map[string]string{"command": "string", "cwd": "string", "timeout": "number", "head": "integer",
			"tail": "integer", "run_in_background": "boolean", "yield_seconds": "number", "target": "string",
			"sandbox": "<nil>", "tty": "boolean", "cols": "integer", "rows": "integer", "stdin": "string"},
			[]string{"command"}}, // sandbox: oneOf a string and an object (TestSandboxSchema)
		"bash_input": {map[string]string{"task_id": "[string integer]", "text": "string", "keys": "array", "eof": "boolean",
			"wait_seconds": "number", "cols": "integer", "rows": "integer", "target": "string"}, []string{"task_id"}},
		"bash_output": {map[string]string{"task_id": "[string integer]", "wait_seconds": "number", "target": "string"}, []string{"task_id"}},
		"bash_kill":   {map[string]string{"task_id": "[string integer]", "target": "string"}, []string{"task_id"}},
		"bash_tasks":  {map[string]string{"all": "boolean", "target": "string"}, nil},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		var s schema
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || s.AdditionalProperties != false {
			t.Errorf("%s: type %q, additionalProperties %v", tool.Name, s.Type, s.AdditionalProperties)
		}
		got := map[string]string{}
		for k, p := range s.Properties {
			got[k] = fmt.Sprint(p.Type)
		}
		if fmt.Sprint(got) != fmt.Sprint(w.props) {
			t.Errorf("%s: properties %v, want %v", tool.Name, got, w.props)
		}
		if !slices.Equal(s.Required, w.required) {
			t.Errorf("%s: required %v, want %v", tool.Name, s.Required, w.required)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"bash", "bash_input", "bash_kill", "bash_output", "bash_tasks"}) {
		t.Errorf("tools %v", names)
	}
	// What a model must learn from bash's description.
	bash := res.Tools[slices.IndexFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "bash" })]
	for _, s := range []string{"run_in_background", "artifactPath", "artifact://", "not a failure of this tool",
		"bash_output", "bash_kill", "yield_seconds", "cwd works as a cd before the command", "last 50.0KB",
		"tty: true", "bash_input", `"6*7\r"`, `["C-c"]`, `["C-d"]`, "--- screen ---"} {
		if !strings.Contains(bash.Description, s) {
			t.Errorf("bash's description does not mention %q", s)
		}
	}
	// And bash_input's: what it answers, how Enter is typed, how the loop ends.
	input := res.Tools[slices.IndexFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == "bash_input" })]
	for _, s := range []string{"REPL", "prompt", "tty: true", `"6*7\r"`, `["Enter"]`, "C-d", "--- screen ---",
		"structuredContent.screen"} {
		if !strings.Contains(input.Description, s) {
			t.Errorf("bash_input's description does not mention %q", s)
		}
	}
}

func TestBashResults(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	for _, tc := range []struct {
		command string
		text    string
		isError bool
		status  string
		exit    int
	}{
		{"echo hi", "hi", false, result.StatusExited, 0},
		{"echo out; echo err >&2", "out\nerr", false, result.StatusExited, 0},
		{"echo failing; exit 3", "failing\n\nCommand exited with code 3", true, result.StatusExited, 3},
		{"true", texts.NoOutput, false, result.StatusExited, 0},
		{"kill -SEGV $$", "(no output)\n\nCommand killed by signal SIGSEGV", true, result.StatusSignaled, -1},
	} {
		r := call(t, cs, "bash", map[string]any{"command": tc.command})
		d := details(t, r)
		if text(r) != tc.text || r.IsError != tc.isError || d.Status != tc.status {
			t.Errorf("%q: text %q isError %v status %s; want %q %v %s", tc.command, text(r), r.IsError, d.Status,
				tc.text, tc.isError, tc.status)
		}
		if tc.exit >= 0 && (d.ExitCode == nil || *d.ExitCode != tc.exit) {
			t.Errorf("%q: exitCode %v, want %d", tc.command, d.ExitCode, tc.exit)
		}
	}
}

func TestBashArguments(t *testing.T) {
	sub := filepath.Join(t.TempDir(), "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash", map[string]any{"command": "pwd", "cwd": sub})
	if text(r) != sub {
		t.Errorf("cwd: %q", text(r))
	}
	r = call(t, cs, "bash", map[string]any{"command": "seq 1 100", "head": 3})
	if !strings.HasPrefix(text(r), "1\n2\n3\n\n[Showing lines 1-3 of 100. Full: artifact://") || r.IsError {
		t.Errorf("head: %q", text(r))
	}
	r = call(t, cs, "bash", map[string]any{"command": "seq 1 100", "tail": 2})
	if !strings.HasPrefix(text(r), "99\n100\n\n[Showing lines 99-100 of 100") {
		t.Errorf("tail: %q", text(r))
	}
	r = call(t, cs, "bash", map[string]any{"command": "sleep 10", "timeout": 1.5})
	if d := details(t, r); text(r) != "[Command timed out after 1.5 seconds]\n(no output)" || !r.IsError ||
		d.Status != result.StatusTimedOut || d.TimeoutSeconds != 1.5 {
		t.Errorf("timeout: %q %+v", text(r), d)
	}
	r = call(t, cs, "bash", map[string]any{"command": "pwd", "cwd": "/nonexistent-mcp"})
	if text(r) != texts.DirNotExist+"/nonexistent-mcp" || !r.IsError || details(t, r).Status != result.StatusError {
		t.Errorf("bad cwd: %q", text(r))
	}
}

// The run flags are the defaults of a call; a call's own argument wins.
func TestDefaultsFromRunFlags(t *testing.T) {
	dir := t.TempDir()
	head := 2
	s := testServer(t, func(o *Options) { o.Defaults = request.Command{Cwd: dir, Head: &head} })
	cs, _ := connect(t, s, nil)
	if r := call(t, cs, "bash", map[string]any{"command": "pwd"}); text(r) != dir {
		t.Errorf("default cwd: %q", text(r))
	}
	if r := call(t, cs, "bash", map[string]any{"command": "seq 5"}); !strings.HasPrefix(text(r), "1\n2\n\n[Showing lines 1-2 of 5") {
		t.Errorf("default head: %q", text(r))
	}
	if r := call(t, cs, "bash", map[string]any{"command": "seq 5", "head": 4}); !strings.HasPrefix(text(r), "1\n2\n3\n4\n\n[Showing lines 1-4 of 5") {
		t.Errorf("call's head: %q", text(r))
	}
}

func TestBigOutputNoticeAndArtifact(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash", map[string]any{"command": "seq 1 100000"})
	d := details(t, r)
	m := regexp.MustCompile(`\n100000\n\n\[Showing lines (\d+)-100000 of 100000 \(50\.0KB limit\)\. Full: artifact://(\d+)\]$`).FindStringSubmatch(text(r))
	if m == nil || r.IsError || m[2] != d.ArtifactID {
		t.Fatalf("text ends %q, artifactId %q", text(r)[max(0, len(text(r))-200):], d.ArtifactID)
	}
	b, err := os.ReadFile(d.ArtifactPath)
	if err != nil || !filepath.IsAbs(d.ArtifactPath) {
		t.Fatalf("artifactPath %q: %v", d.ArtifactPath, err)
	}
	want := 0
	for i := 1; i <= 100000; i++ {
		want += len(strconv.Itoa(i)) + 1
	}
	if len(b) != want {
		t.Errorf("artifact has %d bytes, want %d", len(b), want)
	}
}

// Broken arguments get an isError result whose text is a sentence naming the argument (the server checks
// them itself: the SDK's validator said `validating "arguments": … <invalid reflect.Value>`), and the
// server goes on.
func TestBadArguments(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	goValidator := regexp.MustCompile(`reflect\.Value|<invalid|validating|/properties/|has type "|want "|` +
		`unexpected additional|json: cannot unmarshal|float64|int64|struct|\d+\.\d{6}`)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"bash", map[string]any{}, "command is missing: bash needs it, and it must be a string"},
		{"bash", nil, "command is missing: bash needs it, and it must be a string"},
		{"bash", map[string]any{"command": nil}, "command must be a string, got null"},
		{"bash", map[string]any{"command": 5}, "command must be a string, got 5"},
		{"bash", map[string]any{"cmd": "x"},
			`command is missing: bash needs it, and it must be a string; unknown argument "cmd": bash takes only command, cwd,`},
		{"bash", map[string]any{"command": "echo", "cmd": "x"},
			`unknown argument "cmd": bash takes only command, cwd, timeout, head, tail, run_in_background, yield_seconds`},
		{"bash", map[string]any{"command": "echo", "b": 1, "a": 2}, `unknown arguments "a", "b": bash takes only`},
		{"bash", map[string]any{"command": "echo", "timeout": "soon"}, `timeout must be a number of seconds ≥ 0, got "soon"`},
		{"bash", map[string]any{"command": "echo", "timeout": -1}, "timeout must be a number of seconds ≥ 0, got -1"},
		{"bash", map[string]any{"command": "echo", "head": -1}, "head must be a whole number of lines ≥ 0, got -1"},
		{"bash", map[string]any{"command": "echo", "tail": 1.5}, "tail must be a whole number of lines ≥ 0, got 1.5"},
		{"bash", map[string]any{"command": "echo", "cwd": []int{1}}, "cwd must be a string, got [1]"},
		{"bash", map[string]any{"command": "echo", "run_in_background": "yes"}, `run_in_background must be true or false, got "yes"`},
		{"bash", map[string]any{"command": "echo", "yield_seconds": -0.5}, "yield_seconds must be a number of seconds ≥ 0, got -0.5"},
		{"bash", map[string]any{"command": "echo", "timeout": strings.Repeat("x", 100)}, `timeout must be a number of seconds ≥ 0, got "xxxxx`},
		{"bash", map[string]any{"command": "  \n"}, texts.MCPNoCommand},
		{"bash", map[string]any{"command": "sleep 1", "run_in_background": true, "yield_seconds": 1}, texts.MCPBackgroundYield},
		{"bash_output", map[string]any{}, `task_id is missing: bash_output needs it, and it must be a task id: the digits bash returned, as a string ("7") or a number (7)`},
		{"bash_output", map[string]any{"task_id": nil}, "task_id must be a task id"},
		{"bash_output", map[string]any{"task_id": 1.5}, "task_id must be a task id: the digits bash returned, as a string (\"7\") or a number (7), got 1.5"},
		{"bash_output", map[string]any{"task_id": -3}, "task_id must be a task id"},
		{"bash_output", map[string]any{"task_id": "7", "wait_seconds": "x"}, `wait_seconds must be a number of seconds ≥ 0, got "x"`},
		{"bash_output", map[string]any{"task_id": "../x"}, "../x"},
		{"bash_kill", map[string]any{"task_id": "999999"}, "999999"},
		{"bash_kill", map[string]any{"task_id": "7", "signal": "KILL"}, `unknown argument "signal": bash_kill takes only task_id`},
		{"bash_tasks", map[string]any{"everything": true}, `unknown argument "everything": bash_tasks takes only all`},
		{"bash", map[string]any{"command": "cat", "stdin": "file"}, `stdin must be "pipe" (a pipe that bash_input writes to) or left out, got "file"`},
		{"bash", map[string]any{"command": "cat", "stdin": true}, `stdin must be "pipe"`},
		{"bash", map[string]any{"command": "tty", "tty": "yes"}, `tty must be true or false, got "yes"`},
		{"bash", map[string]any{"command": "tty", "tty": true, "cols": 1}, "cols must be a whole number from 2 to 1000, got 1"},
		{"bash", map[string]any{"command": "tty", "tty": true, "rows": 40.5}, "rows must be a whole number from 2 to 1000, got 40.5"},
		{"bash", map[string]any{"command": "tty", "cols": 80}, "cols and rows size a terminal: they need tty: true"},
		{"bash", map[string]any{"command": "cat", "stdin": "pipe"}, texts.StdinPipeNeedsTask},
		{"bash_input", map[string]any{"text": "x"}, "task_id is missing: bash_input needs it"},
		{"bash_input", map[string]any{"task_id": "7", "keys": []string{"Enter", "Frob"}}, `keys: unknown key "Frob"`},
		{"bash_input", map[string]any{"task_id": "7", "keys": "C-c,Nope"}, `keys: unknown key "Nope"`},
		{"bash_input", map[string]any{"task_id": "7", "keys": 5}, `keys must be a list of key names (["Enter"], ["C-c"]) or one string of them ("Enter,C-c"), got 5`},
		{"bash_input", map[string]any{"task_id": "7", "text": []int{1}}, "text must be a string, got [1]"},
		{"bash_input", map[string]any{"task_id": "7", "eof": "yes"}, `eof must be true or false, got "yes"`},
		{"bash_input", map[string]any{"task_id": "7", "wait_seconds": -1}, "wait_seconds must be a number of seconds ≥ 0, got -1"},
		{"bash_input", map[string]any{"task_id": "7", "cols": 1001}, "cols must be a whole number from 2 to 1000, got 1001"},
		{"bash_input", map[string]any{"task_id": "7", "reader": "me"}, `unknown argument "reader": bash_input takes only task_id, text, keys, eof, wait_seconds, cols, rows, target`},
		{"bash_input", map[string]any{"task_id": "999999", "text": "x"}, "task 999999: no such task"},
		{"bash_tasks", map[string]any{"all": 1}, "all must be true or false, got 1"},
	} {
		r := call(t, cs, tc.tool, tc.args)
		if !r.IsError || !strings.Contains(text(r), tc.want) || goValidator.MatchString(text(r)) {
			t.Errorf("%s %v: isError %v, text %q; want one with %q", tc.tool, tc.args, r.IsError, text(r), tc.want)
		}
		checkStructured(t, cs, tc.tool, r)
	}
	// Arguments that are no object at all.
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: json.RawMessage(`[1]`)})
	if err != nil || !r.IsError || text(r) != "the arguments of bash must be a JSON object of named arguments, got [1]" {
		t.Errorf("arguments [1]: %v %v", err, r)
	}
	// Optional arguments given as null count as left out.
	if r := call(t, cs, "bash", map[string]any{"command": "echo x", "timeout": nil, "cwd": nil, "head": nil}); text(r) != "x" || r.IsError {
		t.Errorf("null optional arguments: %q", text(r))
	}
	// The server goes on.
	if r := call(t, cs, "bash", map[string]any{"command": "echo still here"}); text(r) != "still here" {
		t.Errorf("after bad arguments: %q", text(r))
	}
}

// A task id given as a JSON integer is the same task as its string.
func TestIntegerTaskID(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	m := newMarker(t)
	r := call(t, cs, "bash", map[string]any{"command": "echo tick; exec -a " + m + " sleep 300", "run_in_background": true})
	id, err := strconv.Atoi(details(t, r).TaskID)
	if err != nil {
		t.Fatalf("start: %q", text(r))
	}
	o := call(t, cs, "bash_output", map[string]any{"task_id": id, "wait_seconds": 5})
	if d := details(t, o); o.IsError || !strings.Contains(text(o), "tick") || d.TaskID != strconv.Itoa(id) {
		t.Errorf("bash_output %d: %q %+v", id, text(o), d)
	}
	k := call(t, cs, "bash_kill", map[string]any{"task_id": id})
	if d := details(t, k); k.IsError || d.Killed == nil || !*d.Killed || len(marked(m)) != 0 {
		t.Errorf("bash_kill %d: %q", id, text(k))
	}
}

// A command of 4 MiB (far past what one argument of exec may hold) runs as any other.
func TestHugeArgument(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash", map[string]any{"command": "x='" + strings.Repeat("a", 4<<20) + "'; echo ${#x}"})
	if text(r) != strconv.Itoa(4<<20) || r.IsError {
		t.Errorf("text %q", text(r)[:min(200, len(text(r)))])
	}
}

func TestCancelKillsTheTree(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	m := newMarker(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": fmt.Sprintf("(exec -a %s sleep 60) & exec -a %s sleep 60", m, m)}})
		done <- err
	}()
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 2 }) {
		t.Fatalf("the command's two processes did not show: %v", marked(m))
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled call returned no error")
	}
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 0 }) {
		t.Errorf("left after the cancel: %v", marked(m))
	}
	if r := call(t, cs, "bash", map[string]any{"command": "echo after"}); text(r) != "after" {
		t.Errorf("after the cancel: %q", text(r))
	}
}

// A client that goes away mid-call (its end of the stream closes, as when it exits): the call's tree dies
// and Serve returns. The server side is the stdio transport.
func TestDisconnectKillsTheTree(t *testing.T) {
	var ended []string
	var mu sync.Mutex
	s := testServer(t, func(o *Options) {
		o.EndSession = func(name string) { mu.Lock(); ended = append(ended, name); mu.Unlock() }
	})
	cs, client, served := connectStdio(t, s)
	m := newMarker(t)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
			"command": fmt.Sprintf("(exec -a %s sleep 60) & exec -a %s sleep 60", m, m)}})
	}()
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 2 }) {
		t.Fatalf("the command's two processes did not show: %v", marked(m))
	}
	_ = client.Close() // not cs.Close, which would wait for the call to end
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 0 }) {
		t.Errorf("left after the client went away: %v", marked(m))
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the client went away")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 1 || ServerOf(ended[0]) != os.Getpid() {
		t.Errorf("sessions ended: %q", ended)
	}
}

// A client gone kills its calls' trees with the grace of reference §11 (SIGKILL 0.5 s after SIGTERM), not
// the configured one: a tree that ignores SIGTERM goes long before the minute the config gives it, and
// the connection's session is removed once the call returned.
func TestDisconnectUsesTheClientGoneGrace(t *testing.T) {
	ended := make(chan string, 1)
	s := testServer(t, func(o *Options) {
		o.Service = testService(t.TempDir(), 300, 60)
		o.EndSession = func(name string) { ended <- name }
	})
	cs, client, served := connectStdio(t, s)
	m := callIgnoringTERM(t, cs)
	_ = client.Close()
	if !waitFor(30*time.Second, func() bool { return len(marked(m)) == 0 }) { // a bound far below the 60 s
		t.Fatalf("left 30 s after the client went away (the configured grace, not the client-gone one): %v", marked(m))
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the session was not ended")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Calls of a connection without a session run at once: each waits for the others to have started.
func TestConcurrentCalls(t *testing.T) {
	cs, _ := connect(t, testServer(t, func(o *Options) { o.NoSession = true }), nil)
	dir := t.TempDir()
	names := []string{"A", "B", "C"}
	texts := make([]string, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			r := call(t, cs, "bash", map[string]any{"timeout": 20, "command": fmt.Sprintf(
				"cd %q && touch %s && until [ -e A ] && [ -e B ] && [ -e C ]; do sleep 0.02; done && echo %s", dir, n, n)})
			texts[i] = text(r)
		})
	}
	wg.Wait()
	if !slices.Equal(texts, names) {
		t.Errorf("texts %q, want %q", texts, names)
	}
}

// bash_output, bash_tasks and a background start do not wait behind a running bash of the same session.
func TestTaskToolsDoNotWaitBehindBash(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	flag := filepath.Join(t.TempDir(), "flag")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		done <- call(t, cs, "bash", map[string]any{"timeout": 20,
			"command": fmt.Sprintf("until [ -e %q ]; do sleep 0.02; done; echo released", flag)})
	}()
	if r := call(t, cs, "bash_tasks", map[string]any{}); r.IsError {
		t.Errorf("bash_tasks: %q", text(r))
	}
	r := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("touch %q", flag), "run_in_background": true})
	if r.IsError {
		t.Fatalf("background start: %q", text(r))
	}
	if r := <-done; text(r) != "released" {
		t.Errorf("the running bash: %q", text(r))
	}
}

func TestBackgroundTasks(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash", map[string]any{"command": "echo started; sleep 0.3; echo bgdone; exit 5", "run_in_background": true})
	d := details(t, r)
	if !regexp.MustCompile(`^Started task `+d.TaskID+` \(pid \d+\): echo started`).MatchString(text(r)) ||
		r.IsError || d.Status != result.StatusRunning || d.ArtifactPath == "" {
		t.Fatalf("start: %q %+v", text(r), d)
	}
	var seen strings.Builder
	var final result.Details
	for range 100 {
		o := call(t, cs, "bash_output", map[string]any{"task_id": d.TaskID, "wait_seconds": 2.5})
		seen.WriteString(text(o) + "\n")
		if final = details(t, o); final.Status != result.StatusRunning {
			if !o.IsError || !strings.HasSuffix(text(o), "Command exited with code 5") {
				t.Errorf("final read: isError %v %q", o.IsError, text(o))
			}
			break
		}
	}
	if !strings.Contains(seen.String(), "started\n") || !strings.Contains(seen.String(), "bgdone") ||
		final.Status != result.StatusExited || final.ExitCode == nil || *final.ExitCode != 5 {
		t.Errorf("reads %q, final %+v", seen.String(), final)
	}

	m := newMarker(t)
	r = call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("(exec -a %s sleep 300) & exec -a %s sleep 300", m, m),
		"run_in_background": true})
	kid := details(t, r).TaskID
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 2 }) {
		t.Fatalf("the task's two processes did not show: %v", marked(m))
	}
	l := call(t, cs, "bash_tasks", map[string]any{})
	var list TaskList
	b, _ := json.Marshal(l.StructuredContent)
	_ = json.Unmarshal(b, &list)
	i := slices.IndexFunc(list.Tasks, func(row tasks.Row) bool { return row.TaskID == kid })
	if i < 0 || list.Tasks[i].Status != result.StatusRunning || !strings.Contains(text(l), m) ||
		!strings.HasPrefix(text(l), "ID  ") {
		t.Errorf("bash_tasks: %q %+v", text(l), list)
	}
	k := call(t, cs, "bash_kill", map[string]any{"task_id": kid})
	if kd := details(t, k); kd.Killed == nil || !*kd.Killed || k.IsError || len(marked(m)) != 0 {
		t.Errorf("bash_kill: %q %+v, left %v", text(k), kd, marked(m))
	}
	k = call(t, cs, "bash_kill", map[string]any{"task_id": kid})
	if kd := details(t, k); kd.Killed == nil || *kd.Killed {
		t.Errorf("second bash_kill: %q", text(k))
	}
}

func TestNoTasks(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash_tasks", map[string]any{})
	b, _ := json.Marshal(r.StructuredContent)
	if text(r) != texts.MCPNoTasks || string(b) != `{"output":"`+texts.MCPNoTasks+`","tasks":[]}` || r.IsError {
		t.Errorf("%q %s", text(r), b)
	}
	if r := call(t, cs, "bash_tasks", map[string]any{"all": true}); text(r) != texts.MCPNoTasksAll {
		t.Errorf("all: %q", text(r))
	}
}

// A yielded call still running goes on as a task, and its text points at bash_output.
func TestYield(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	flag := filepath.Join(t.TempDir(), "flag")
	r := call(t, cs, "bash", map[string]any{"yield_seconds": 0.2,
		"command": fmt.Sprintf("echo before; until [ -e %q ]; do sleep 0.02; done; echo after", flag)})
	d := details(t, r)
	want := "before\n\n" + fmt.Sprintf(texts.MCPTaskYielded, d.TaskID, d.Pid, d.TaskID)
	if text(r) != want || d.Status != result.StatusRunning {
		t.Fatalf("yield: %q, want %q", text(r), want)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := call(t, cs, "bash_output", map[string]any{"task_id": d.TaskID, "wait_seconds": 10})
	for details(t, o).Status == result.StatusRunning {
		o = call(t, cs, "bash_output", map[string]any{"task_id": d.TaskID, "wait_seconds": 10})
	}
	if text(o) != "after" && text(o) != texts.NoNewOutput {
		t.Errorf("after the yield: %q", text(o))
	}
	// A command that ends within its yield is a plain run.
	r = call(t, cs, "bash", map[string]any{"yield_seconds": 30, "command": "echo quick"})
	if text(r) != "quick" || details(t, r).TaskID != "" {
		t.Errorf("quick yield: %q %+v", text(r), details(t, r))
	}
}

func TestProgressNotifications(t *testing.T) {
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs, _ := connect(t, testServer(t, nil), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		}})
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": "for i in 1 2 3; do echo line$i; sleep 0.5; done"}}
	params.SetProgressToken("tok")
	r, err := cs.CallTool(context.Background(), params)
	if err != nil || text(r) != "line1\nline2\nline3" {
		t.Fatalf("%v %q", err, text(r))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 {
		t.Fatal("no progress notification")
	}
	prev := 0.0
	for _, p := range got {
		if p.ProgressToken != "tok" || p.Progress <= prev || !strings.HasPrefix(p.Message, "line1") {
			t.Errorf("notification %+v after progress %v", p, prev)
		}
		prev = p.Progress
	}
}

func TestTailText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"a\nb\n", 10, "a\nb"},
		{"first line\nsecond\n", 10, "second"},
		{"abcdefghij", 4, "ghij"},
		{"ééééé", 5, "éé"}, // not from inside a character
		{"", 4, ""},
	} {
		if got := tailText([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("tailText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// As the bash tool's description says: a background start and a yield start from the connection's
// session but leave it as it was.
func TestBackgroundAndYieldLeaveTheSession(t *testing.T) {
	s := testServer(t, nil)
	cs, _ := connect(t, s, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || !strings.Contains(tools.Tools[0].Description, "run_in_background or yield_seconds starts from the state but does not change it") {
		t.Fatalf("the bash description does not say it: %v", err)
	}
	dir := t.TempDir()
	call(t, cs, "bash", map[string]any{"command": "cd " + dir + " && export MARK=kept"})
	for _, args := range []map[string]any{
		{"command": `echo "$MARK"; cd / && export MARK=changed`, "run_in_background": true},
		{"command": `echo "$MARK"; cd / && export MARK=changed`, "yield_seconds": 30},
	} {
		r := call(t, cs, "bash", args)
		if args["yield_seconds"] != nil && !strings.Contains(text(r), "kept") {
			t.Errorf("the yielded command did not start from the session: %q", text(r))
		}
		if id := details(t, r).TaskID; id != "" {
			call(t, cs, "bash_output", map[string]any{"task_id": id, "wait_seconds": 10})
		}
		if got := text(call(t, cs, "bash", map[string]any{"command": `echo "$PWD $MARK"`})); got != dir+" kept" {
			t.Errorf("after %v: %q, want %q", args, got, dir+" kept")
		}
	}
}

func TestSessionName(t *testing.T) {
	a, b := SessionName(), SessionName()
	if a == b || !session.Valid(a) || !regexp.MustCompile(`^mcp-[0-9]+-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("%q %q", a, b)
	}
	if ServerOf(a) != os.Getpid() {
		t.Errorf("ServerOf(%q) = %d, want %d", a, ServerOf(a), os.Getpid())
	}
	for _, name := range []string{"work", "mcp-0123456789ab", "mcp-0-0123456789ab", "mcp-12-0123456789a",
		"mcp-12-0123456789AB", "mcp-99999999-0123456789ab", "mcp-4294967297-0123456789ab", "xmcp-12-0123456789ab"} {
		if pid := ServerOf(name); pid != 0 {
			t.Errorf("ServerOf(%q) = %d, want 0", name, pid)
		}
	}
}

// keepSession makes session name of store hold a state, as a command that ended by itself leaves one (a
// session that never kept a state is not kept at all).
func keepSession(t *testing.T, store session.Store, name string) {
	t.Helper()
	l, err := store.Acquire(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	prelude, err := l.Prelude(session.Prelude{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "x=1")
	cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), "BASH_ENV="+prelude)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, kept, w, err := l.Commit(true); !kept || err != nil {
		t.Fatalf("state not kept: %q, %v", w, err)
	}
}

// The sessions of servers that are gone are removed; those of live servers, named ones and the
// generated names of before (no pid) stay.
func TestRemoveOrphanSessions(t *testing.T) {
	store := session.Store{Dir: t.TempDir()}
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skip(err)
	}
	pidMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	gone := fmt.Sprintf("mcp-%d-0123456789ab", pidMax+1) // no process has it
	live := fmt.Sprintf("mcp-%d-0123456789ab", os.Getpid())
	names := []string{gone, live, "mcp-1-0123456789ab", "work", "mcp-0123456789ab"}
	for _, name := range names {
		keepSession(t, store, name)
	}
	removed, err := RemoveOrphanSessions(store, time.Second)
	if err != nil || !slices.Equal(removed, []string{gone}) {
		t.Errorf("removed %q, %v; want [%s]", removed, err, gone)
	}
	infos, _ := store.List()
	var left []string
	for _, info := range infos {
		left = append(left, info.Name)
	}
	slices.Sort(left)
	want := slices.Sorted(slices.Values(names[1:]))
	if !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if _, err := os.Stat(filepath.Join(store.Dir, gone)); !os.IsNotExist(err) {
		t.Errorf("%s still on disk: %v", gone, err)
	}
}

// The connection's session is ended before Serve returns even when a call is still ending after
// ExitGrace (here a tree that ignores SIGTERM, which the client-gone kill takes 0.5 s to end, against a
// grace of 1 ms): the server exits then, and a session left behind holds its exported variables.
func TestSessionEndedWhenCallsOutlastTheGrace(t *testing.T) {
	ended := make(chan string, 1)
	s := testServer(t, func(o *Options) {
		o.ExitGrace = time.Millisecond
		o.EndSession = func(name string) { ended <- name }
	})
	cs, client, served := connectStdio(t, s)
	m := callIgnoringTERM(t, cs)
	_ = client.Close()
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after the client went away")
	}
	select {
	case name := <-ended:
		if ServerOf(name) != os.Getpid() {
			t.Errorf("ended %q", name)
		}
	default:
		t.Error("Serve returned with the connection's session not ended")
	}
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 0 }) {
		t.Errorf("left: %v", marked(m))
	}
}

// TestTargetArgument: a call's target picks the service of that place (here a second local place with
// its own directories and PLACE=second in its shell environment, opened as the allowed target
// ssh://second), task ids are per target, and a target the server does not allow is an error result naming
// it, cmd:// even when listed.
func TestTargetArgument(t *testing.T) {
	dir := t.TempDir()
	own := testService(filepath.Join(dir, "own"), 30, 1)
	places := service.NewPlaces(own, "local", []string{"ssh://second", "cmd://sh"}, func(uri string) (executor.Executor, error) {
		d := filepath.Join(dir, "second")
		return local.New(local.Config{ArtifactDir: filepath.Join(d, "art"), SessionDir: filepath.Join(d, "sessions"),
			TaskDir: filepath.Join(d, "tasks"), KillLimit: 11 * time.Second, ShellEnv: []string{"PLACE=second"}}), nil
	})
	t.Cleanup(func() { _ = places.Close() })
	s := testServer(t, func(o *Options) { o.Service, o.For, o.Targets = own, places.For, []string{"ssh://second", "cmd://sh"} })
	cs, _ := connect(t, s, nil)

	if r := call(t, cs, "bash", map[string]any{"command": "echo ${PLACE:-own}", "target": "ssh://second"}); text(r) != "second" || r.IsError {
		t.Errorf("bash on the target: %q", text(r))
	}
	if r := call(t, cs, "bash", map[string]any{"command": "echo ${PLACE:-own}"}); text(r) != "own" {
		t.Errorf("bash without a target: %q", text(r))
	}
	for _, tc := range []struct{ target, want string }{
		{"ssh://other", `target "ssh://other": not allowed`},
		{"cmd://sh", `target "cmd://sh": a request never names a cmd:// target`},
	} {
		r := call(t, cs, "bash", map[string]any{"command": "echo hi", "target": tc.target})
		if !r.IsError || !strings.Contains(text(r), tc.want) || strings.Contains(text(r), "hi\n") {
			t.Errorf("bash on %s: %q", tc.target, text(r))
		}
		if r := call(t, cs, "bash_tasks", map[string]any{"target": tc.target}); !r.IsError || !strings.Contains(text(r), tc.want) {
			t.Errorf("bash_tasks on %s: %q", tc.target, text(r))
		}
	}

	r := call(t, cs, "bash", map[string]any{"command": "echo $PLACE; exec sleep 300", "run_in_background": true, "target": "ssh://second"})
	id := details(t, r).TaskID
	if id == "" || r.IsError {
		t.Fatalf("start on the target: %q", text(r))
	}
	if l := call(t, cs, "bash_tasks", map[string]any{"target": "ssh://second"}); !strings.Contains(text(l), "exec sleep 300") {
		t.Errorf("bash_tasks on the target: %q", text(l))
	}
	if l := call(t, cs, "bash_tasks", map[string]any{}); strings.Contains(text(l), "exec sleep 300") {
		t.Errorf("bash_tasks of the server's own place lists the target's task: %q", text(l))
	}
	if o := call(t, cs, "bash_output", map[string]any{"task_id": id}); !o.IsError {
		t.Errorf("bash_output without the target found the target's task: %q", text(o))
	}
	if o := call(t, cs, "bash_output", map[string]any{"task_id": id, "target": "ssh://second", "wait_seconds": 5}); text(o) != "second" {
		t.Errorf("bash_output on the target: %q", text(o))
	}
	if k := call(t, cs, "bash_kill", map[string]any{"task_id": id, "target": "ssh://second"}); k.IsError || *details(t, k).Killed != true {
		t.Errorf("bash_kill on the target: %q", text(k))
	}
	if tools, err := cs.ListTools(context.Background(), nil); err != nil || !strings.Contains(fmt.Sprint(tools.Tools[0].InputSchema), "ssh://second") ||
		strings.Contains(fmt.Sprint(tools.Tools[0].InputSchema), "cmd://") {
		t.Errorf("the target argument's description: %v", err)
	}
}

// The loop the descriptions teach: a python REPL in a terminal, yielded with its prompt on the screen;
// bash_input types "6*7\r" and its own result shows 42; keys C-d ends it; input to the ended task is an
// error result that says so.
func TestInteractiveTerminal(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	y := call(t, cs, "bash", map[string]any{"command": "python3 -q", "tty": true, "cols": 80, "rows": 24, "yield_seconds": 2})
	d := details(t, y)
	checkStructured(t, cs, "bash", y)
	if d.Status != result.StatusRunning || d.Screen == nil || !strings.HasSuffix(strings.TrimRight(d.Screen.Text, "\n "), ">>>") ||
		d.Screen.Cols != 80 || d.Screen.Rows != 24 {
		t.Fatalf("yield: %q %+v", text(y), d.Screen)
	}
	if want := fmt.Sprintf(texts.MCPTaskYieldedInput, d.TaskID, d.Pid, d.TaskID); !strings.HasSuffix(text(y), want) ||
		!strings.Contains(text(y), texts.ScreenHeader+"\n") {
		t.Errorf("yield text %q: want the screen and %q", text(y), want)
	}
	id, _ := strconv.Atoi(d.TaskID)
	i := call(t, cs, "bash_input", map[string]any{"task_id": id, "text": "6*7\r", "wait_seconds": 5})
	sc := checkStructured(t, cs, "bash_input", i)
	screen, _ := sc["screen"].(map[string]any)
	shown, _ := screen["text"].(string)
	if i.IsError || !regexp.MustCompile(`(?m)^42\s*$`).MatchString(text(i)) || !regexp.MustCompile(`(?m)^42\s*$`).MatchString(shown) ||
		sc["status"] != result.StatusRunning {
		t.Errorf("bash_input: %q, screen %q", text(i), shown)
	}
	c := call(t, cs, "bash_input", map[string]any{"task_id": d.TaskID, "keys": []string{"C-d"}, "wait_seconds": 5})
	for st := details(t, c).Status; st == result.StatusRunning; st = details(t, c).Status {
		c = call(t, cs, "bash_output", map[string]any{"task_id": d.TaskID, "wait_seconds": 5})
	}
	if d := details(t, c); d.Status != result.StatusExited || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Errorf("after C-d: %q %+v", text(c), d)
	}
	e := call(t, cs, "bash_input", map[string]any{"task_id": d.TaskID, "text": "1\r"})
	checkStructured(t, cs, "bash_input", e)
	if want := fmt.Sprintf(texts.InputEnded, d.TaskID, result.StatusExited); !e.IsError || text(e) != want {
		t.Errorf("input to the ended task: %q, want %q", text(e), want)
	}
}

// A stdin pipe: a REPL reading lines answers what bash_input writes, keys given as one string; a task
// started without input refuses it.
func TestInteractivePipe(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	r := call(t, cs, "bash", map[string]any{"command": "python3 -q -i", "stdin": "pipe", "run_in_background": true})
	id := details(t, r).TaskID
	if r.IsError || id == "" {
		t.Fatalf("start: %q", text(r))
	}
	seen := ""
	for range 10 {
		if seen += text(call(t, cs, "bash_output", map[string]any{"task_id": id, "wait_seconds": 1})); strings.Contains(seen, ">>>") {
			break
		}
	}
	i := call(t, cs, "bash_input", map[string]any{"task_id": id, "text": "print(6*7)", "keys": "Enter", "wait_seconds": 5})
	if i.IsError || !regexp.MustCompile(`(?m)^42$`).MatchString(text(i)) || details(t, i).Screen != nil {
		t.Errorf("bash_input: %q %+v", text(i), details(t, i))
	}
	call(t, cs, "bash_kill", map[string]any{"task_id": id})

	m := newMarker(t)
	r = call(t, cs, "bash", map[string]any{"command": "exec -a " + m + " sleep 300", "run_in_background": true})
	id = details(t, r).TaskID
	e := call(t, cs, "bash_input", map[string]any{"task_id": id, "text": "x\n"})
	if want := fmt.Sprintf(texts.InputNone, id); !e.IsError || text(e) != want {
		t.Errorf("input to a task without input: %q, want %q", text(e), want)
	}
	call(t, cs, "bash_kill", map[string]any{"task_id": id})
}
