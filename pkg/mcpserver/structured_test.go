package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gojsonschema "github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/texts"
)

// declared is the output schema each tool declares in tools/list, as JSON.
func declared(t *testing.T, cs *mcp.ClientSession) map[string]json.RawMessage {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil || tool.OutputSchema == nil {
			t.Fatalf("%s: no output schema (%v)", tool.Name, err)
		}
		out[tool.Name] = b
	}
	return out
}

// checkStructured checks what every result of tool must be: structuredContent.output is the text of
// content, and structuredContent is valid against the output schema the tool declares, by the SDK's
// validator (jsonschema-go) and by another one (santhosh-tekuri, draft 2020-12).
func checkStructured(t *testing.T, cs *mcp.ClientSession, tool string, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(r.StructuredContent)
	var sc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("%s: structuredContent %s is no object: %v", tool, b, err)
	}
	if out, ok := sc["output"].(string); !ok || out != text(r) {
		t.Errorf("%s: structuredContent.output %q, content %q", tool, sc["output"], text(r))
	}
	raw := declared(t, cs)[tool]

	var s gojsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	resolved, err := s.Resolve(nil)
	if err == nil {
		err = resolved.Validate(sc)
	}
	if err != nil {
		t.Errorf("%s: jsonschema-go: %s against %s: %v", tool, b, raw, err)
	}

	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	c := jsonschema.NewCompiler()
	if err == nil {
		err = c.AddResource("mem://"+tool, doc)
	}
	var compiled *jsonschema.Schema
	if err == nil {
		compiled, err = c.Compile("mem://" + tool)
	}
	if err == nil {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		err = compiled.Validate(inst)
	}
	if err != nil {
		t.Errorf("%s: santhosh-tekuri: %s: %v", tool, b, err)
	}
	return sc
}

// Every tool's every kind of result carries the text as structuredContent.output and validates against
// the tool's declared output schema; a cut view also carries its notice in structuredContent.truncation.
func TestStructuredContent(t *testing.T) {
	cs, _ := connect(t, testServer(t, nil), nil)
	check := func(tool string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		r := call(t, cs, tool, args)
		return r, checkStructured(t, cs, tool, r)
	}
	check("bash", map[string]any{"command": "echo hi"})
	check("bash", map[string]any{"command": "echo out; exit 3"})
	check("bash", map[string]any{"command": "sleep 5", "timeout": 0.2})
	check("bash", map[string]any{"command": "pwd", "cwd": "/nonexistent-mcp"})
	check("bash", map[string]any{"command": "seq 1 10", "head": 2})

	r, sc := check("bash", map[string]any{"command": "seq 1 100000"})
	tr, _ := sc["truncation"].(map[string]any)
	notice := regexp.MustCompile(`\[Showing lines \d+-100000 of 100000 \(50\.0KB limit\)\. Full: artifact://\d+\]$`).FindString(text(r))
	if notice == "" || tr["notice"] != notice || tr["maxBytes"] != float64(51200) || tr["totalLines"] != float64(100000) {
		t.Errorf("truncation %v, text ends %q", tr, text(r)[len(text(r))-100:])
	}
	if _, sc := check("bash", map[string]any{"command": "echo short"}); sc["truncation"] != nil {
		t.Errorf("truncation of a whole output: %v", sc["truncation"])
	}

	m := newMarker(t)
	_, sc = check("bash", map[string]any{"command": "seq 1 30000; exec -a " + m + " sleep 300", "run_in_background": true})
	id, _ := sc["taskId"].(string)
	if !waitFor(10*time.Second, func() bool { return len(marked(m)) == 1 }) {
		t.Fatalf("the task did not start: %v", sc)
	}
	_, sc = check("bash_output", map[string]any{"task_id": id})
	if tr, _ := sc["truncation"].(map[string]any); tr == nil && sc["lossy"] == true {
		t.Errorf("a lossy read without its notice in truncation: %v", sc)
	}
	check("bash_output", map[string]any{"task_id": id})
	check("bash_tasks", map[string]any{})
	check("bash_tasks", map[string]any{"all": true})
	check("bash_kill", map[string]any{"task_id": id})
	check("bash_kill", map[string]any{"task_id": id})
	check("bash_output", map[string]any{"task_id": id})
	check("bash_output", map[string]any{"task_id": "999999"})
	check("bash", map[string]any{"command": "sleep 3; echo late", "yield_seconds": 0.2})
	check("bash_tasks", map[string]any{"bogus": 1})
}

// With a progress token a silent command still gets a notification at each heartbeat, each progress
// above the last, with the tail of the output so far; output after it goes on from there.
func TestProgressHeartbeat(t *testing.T) {
	type note struct {
		progress float64
		message  string
	}
	notes := make(chan note, 16)
	beat := make(chan time.Time)
	p := newProgress(func(progress float64, message string) { notes <- note{progress, message} }, 0, beat, func() {})
	next := func(what string) note {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-time.After(10 * time.Second): // a bound against a hang, not a timing assertion
			t.Fatalf("no notification for %s", what)
			return note{}
		}
	}
	p.observe(run.LiveText{Text: "one\n", TotalBytes: 4, TotalLines: 1})
	want := []note{{4, "one"}}
	got := []note{next("output")}
	for range 2 {
		beat <- time.Now()
		got = append(got, next("a heartbeat"))
	}
	want = append(want, note{5, "one"}, note{6, "one"})
	p.observe(run.LiveText{Text: "two\n", TotalBytes: 8, TotalLines: 2})
	got = append(got, next("more output"))
	want = append(want, note{10, "one\ntwo"})
	p.stop()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notifications %v, want %v", got, want)
	}
}

// A command with no output at all: the heartbeats alone, progress 1, 2, 3.
func TestProgressHeartbeatWithoutOutput(t *testing.T) {
	var mu sync.Mutex
	var got []float64
	beat := make(chan time.Time)
	p := newProgress(func(progress float64, _ string) { mu.Lock(); got = append(got, progress); mu.Unlock() }, time.Second, beat, func() {})
	for range 3 {
		beat <- time.Now() // taken by the sender, which notifies before it looks at stop
	}
	p.stop()
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("progress %v, want 1, 2, 3", got)
	}
}

// A yielded run on a target ends with the MCP hint naming the target as the tools' argument, not the CLI's.
func TestYieldHintOnATarget(t *testing.T) {
	for _, tc := range []struct{ cli, want string }{
		{fmt.Sprintf(texts.TaskYielded, "4", 9, "4 --target ssh://b"), fmt.Sprintf(texts.MCPTaskYieldedOn, "4", 9, "4", "ssh://b")},
		// A task that takes input: the CLI's hint as the target's rpc gives it, or with --target.
		{fmt.Sprintf(texts.TaskYieldedInput, "4", 9, "4", "4"), fmt.Sprintf(texts.MCPTaskYieldedInputOn, "4", 9, "4", "ssh://b")},
		{fmt.Sprintf(texts.TaskYieldedInput, "4", 9, "4 --target ssh://b", "4 --target ssh://b"),
			fmt.Sprintf(texts.MCPTaskYieldedInputOn, "4", 9, "4", "ssh://b")},
	} {
		r := result.Result{Details: result.Details{Status: result.StatusRunning, TaskID: "4", Pid: 9, Target: "ssh://b"},
			Footer: []string{tc.cli}}
		if got := mcpYield(r).Footer[0]; got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.cli, got, tc.want)
		}
	}
}
