package cmd

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaNode is a JSON Schema object as decoded from the file.
type schemaNode = map[string]any

func loadSchema(t *testing.T) (schemaNode, *jsonschema.Schema) {
	t.Helper()
	path, _ := filepath.Abs("../schema/result.schema.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc schemaNode
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	sch, err := jsonschema.NewCompiler().Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return doc, sch
}

// resolve follows local $refs ("#/$defs/x").
func resolve(root, n schemaNode) schemaNode {
	for range 20 {
		ref, ok := n["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return n
		}
		var cur any = root
		for _, part := range strings.Split(ref[2:], "/") {
			m, _ := cur.(schemaNode)
			cur = m[strings.NewReplacer("~1", "/", "~0", "~").Replace(part)]
		}
		n, _ = cur.(schemaNode)
	}
	return n
}

// properties is every property an object schema lists, also through allOf/anyOf/oneOf.
func properties(root, n schemaNode) map[string]schemaNode {
	n = resolve(root, n)
	out := map[string]schemaNode{}
	if props, ok := n["properties"].(schemaNode); ok {
		for k, v := range props {
			out[k], _ = v.(schemaNode)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		subs, _ := n[k].([]any)
		for _, sub := range subs {
			if s, ok := sub.(schemaNode); ok {
				for name, v := range properties(root, s) {
					out[name] = v
				}
			}
		}
	}
	return out
}

// undocumented returns the paths of doc ("details.meta.truncation.complete", "content[].type") that the
// schema n does not list, and records every path in seen.
func undocumented(root, n schemaNode, doc any, path string, seen map[string]bool) []string {
	var missing []string
	switch v := doc.(type) {
	case map[string]any:
		props := properties(root, n)
		for k, val := range v {
			p := strings.TrimPrefix(path+"."+k, ".")
			seen[p] = true
			sub, ok := props[k]
			if !ok {
				missing = append(missing, p)
				continue
			}
			missing = append(missing, undocumented(root, sub, val, p, seen)...)
		}
	case []any:
		items, _ := resolve(root, n)["items"].(schemaNode)
		for _, x := range v {
			if _, isObj := x.(map[string]any); isObj && items == nil {
				missing = append(missing, path+"[]")
				continue
			}
			missing = append(missing, undocumented(root, items, x, path+"[]", seen)...)
		}
	}
	return missing
}

// readmeFields is the set of fields the README's JSON table documents. A row's first cell names fields in
// backticks: the first is a full path (`details.meta.truncation.direction`), the others are its siblings
// (`truncatedBy`) or paths below its parent (`shownRange.end`). A path documents its ancestors too.
func readmeFields(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## JSON result\n")
	if start < 0 {
		t.Fatal("README has no JSON result section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	names := regexp.MustCompile("`([^`]+)`")
	fields := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line[1:], " | ", 2)[0]
		var parent string
		for i, m := range names.FindAllStringSubmatch(cell, -1) {
			p := strings.ReplaceAll(m[1], "[0]", "[]")
			if i == 0 {
				parent = p[:max(0, strings.LastIndex(p, "."))]
			} else if parent != "" {
				p = parent + "." + p
			}
			for q := p; q != ""; { // p and its ancestors: content[].type, content[], content
				fields[q] = true
				if trimmed, ok := strings.CutSuffix(q, "[]"); ok {
					q = trimmed
				} else {
					q = q[:max(0, strings.LastIndex(q, "."))]
				}
			}
		}
	}
	if len(fields) < 20 {
		t.Fatalf("README's JSON table: only %d fields found: %v", len(fields), fields)
	}
	return fields
}

// TestEveryFieldDocumented runs real commands that give results of every kind and requires every field
// they carry to be in the schema (and valid against it) and in the README's JSON table (reference §3.10), so
// a field added without docs fails here. It also requires each kind to show the fields it is there for,
// so the cases keep covering them.
func TestEveryFieldDocumented(t *testing.T) {
	root, sch := loadSchema(t)
	readme := readmeFields(t)
	dir := isolate(t)
	art := filepath.Join(dir, "art")
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("timeout: abc\n"), 0o600)

	type kind struct {
		name string
		env  []string // KEY=VALUE for this run
		args []string
		want []string // fields this kind is there to show
	}
	kinds := []kind{
		{"exited", nil, []string{"run", "echo hello"}, []string{"content[].type", "content[].text", "isError", "details.status"}},
		{"non-zero", nil, []string{"run", "echo out; exit 3"}, []string{"details.exitCode"}},
		{"timed out", nil, []string{"run", "--timeout", "1", "--kill-grace", "1", "sleep 30"}, []string{"details.timedOut"}},
		{"clamped timeout", nil, []string{"run", "--timeout", "7200", "true"}, []string{"details.timeoutRequested", "details.warnings"}},
		{"blocked", nil, []string{"run", "--intercept", "--tools", "read", "cat f.txt"}, []string{"details.blocked.tool", "details.blocked.message", "details.blocked.pattern"}},
		{"bad cwd", nil, []string{"run", "--cwd", "/nonexistent", "true"}, nil},
		{"no shell", nil, []string{"run", "--shell", "/nonexistent/sh", "true"}, nil},
		{"bad config", []string{"AGENTBASH_TIMOUT=5"}, []string{"run", "--config", "bad.yaml", "true"}, []string{"details.warnings"}},
		{"unknown variable", []string{"AGENTBASH_TIMOUT=5"}, []string{"run", "true"}, []string{"details.warnings"}},
		{"signaled", nil, []string{"run", "kill -TERM $$"}, []string{"details.signal"}},
		{"truncated by bytes", nil, []string{"run", "--artifact-dir", art, "seq 1 100000"},
			[]string{"details.artifactId", "details.artifactPath", "details.meta.truncation.shownRange.start", "details.meta.truncation.maxBytes"}},
		{"one long line", nil, []string{"run", "--artifact-dir", art, "head -c 200000 /dev/zero | tr '\\0' y"}, []string{"details.meta.truncation"}},
		{"tail limit", nil, []string{"run", "--artifact-dir", art, "seq 1 100 | tail -n 3"}, []string{"details.tail", "details.normalizedCommand"}},
		{"head limit", nil, []string{"run", "--artifact-dir", art, "seq 1 100 | head -n 3"}, []string{"details.head"}},
		{"head limit, pipe closed", nil, []string{"run", "--artifact-dir", art, "yes | head -n 5"},
			[]string{"details.producerStatus.exitCode", "details.producerStatus.signal"}},
		{"nothing shown", nil, []string{"run", "--artifact-dir", art, "seq 1 10 | head -n 0"}, nil},
		{"binary", nil, []string{"run", "--artifact-dir", art, "printf 'a\\0b'"}, []string{"details.artifactPath"}},
		{"capped artifact", nil, []string{"run", "--artifact-dir", art, "--artifact-max-bytes", "100000", "seq 1 100000"},
			[]string{"details.meta.truncation.artifactCapped"}},
		{"leftover process", nil, []string{"run", "--timeout", "10", "(exec -a abschemaleftover sleep 30) & echo x"}, []string{"details.leftoverPids"}},
		{"bad utf-8", nil, []string{"run", "printf '\\xff\\xfe bad \\x1b[31mred\\x1b[0m'"}, nil},
		{"session", nil, []string{"run", "--session", "schema-s", "cd /"}, []string{"details.session", "details.finalCwd"}},
		{"bad target", nil, []string{"run", "--target", "nosuch://x", "true"}, []string{"details.target"}},
		{"terminal", nil, []string{"run", "--tty", "--cols", "40", "--rows", "5", "printf 'Name: '"},
			[]string{"details.screen.text", "details.screen.rows", "details.screen.cursor.col", "details.screen.altScreen"}},
	}

	seen := map[string]bool{}
	check := func(name, out string, want []string) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%s: not JSON: %v\n%s", name, err, out)
			return
		}
		if err := sch.Validate(any(doc)); err != nil {
			t.Errorf("%s: invalid against the schema: %v\n%s", name, err, out)
		}
		if d, ok := doc["details"].(map[string]any); ok {
			pids, _ := d["leftoverPids"].([]any)
			for _, pid := range pids {
				syscall.Kill(int(pid.(float64)), syscall.SIGKILL)
			}
		}
		local := map[string]bool{}
		for _, p := range undocumented(root, root, doc, "", local) {
			t.Errorf("%s: field %s is not in the schema", name, p)
		}
		for p := range local {
			seen[p] = true
			if !readme[p] {
				t.Errorf("%s: field %s is not in the README's JSON table", name, p)
			}
		}
		for _, w := range want {
			if !local[w] {
				t.Errorf("%s: no %s in %s", name, w, out[max(0, len(out)-600):])
			}
		}
	}
	for _, k := range kinds {
		for _, kv := range k.env {
			name, val, _ := strings.Cut(kv, "=")
			t.Setenv(name, val)
		}
		out, _, _ := runCLI(t, k.args...)
		for _, kv := range k.env {
			name, _, _ := strings.Cut(kv, "=")
			os.Unsetenv(name)
		}
		check(k.name, out, k.want)
	}

	// Cancelled: agentbash's own context ends while the command runs.
	ctx, cancel := context.WithCancel(context.Background())
	started := filepath.Join(dir, "started")
	done := make(chan string)
	go func() {
		var out strings.Builder
		Run(ctx, BuildInfo{}, IO{In: strings.NewReader(""), Out: &out, Err: &strings.Builder{}},
			[]string{"run", "touch " + started + "; sleep 30"})
		done <- out.String()
	}()
	waitFor(t, started)
	cancel()
	out := <-done
	check("cancelled", out, []string{"details.cancelled"})
	if !strings.Contains(out, `"status":"cancelled"`) {
		t.Errorf("cancelled: %s", out)
	}

	// Background tasks: start (running), output (lossy), wait (the final result), kill, a lost task.
	startOut, _, _ := runCLI(t, "start", "--artifact-dir", art, "seq 1 30000; echo end")
	check("task started", startOut, []string{"details.taskId", "details.pid", "details.supervisorPid", "details.startedAt"})
	tid := taskIDOf(t, startOut)
	waitOut, _, _ := runCLI(t, "wait", tid)
	check("task waited", waitOut, []string{"details.endedAt"})
	readOut, _, _ := runCLI(t, "output", tid)
	check("task read lossy", readOut, []string{"details.lossy", "details.skippedBytes"})
	killOut, _, _ := runCLI(t, "kill", tid)
	check("task kill", killOut, []string{"details.killed"})
	lostOut := lostTask(t, art)
	check("task lost", lostOut, []string{"details.error"})

	// And the other way: every field the README documents is one the schema lists.
	for p := range readme {
		n := root
		for _, part := range strings.Split(strings.ReplaceAll(p, "[]", ".[]"), ".") {
			if part == "[]" {
				n, _ = resolve(root, n)["items"].(schemaNode)
			} else {
				n = properties(root, n)[part]
			}
			if n == nil {
				t.Errorf("README documents %s, which the schema does not list", p)
				break
			}
		}
	}

	// The acceptance floor: the kinds above show most of what the schema lists.
	if len(seen) < 35 {
		t.Errorf("only %d distinct fields seen: %v", len(seen), slices.Sorted(maps.Keys(seen)))
	}
}

// taskIDOf is details.taskId of a result.
func taskIDOf(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		Details struct {
			TaskID        string `json:"taskId"`
			SupervisorPid int    `json:"supervisorPid"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Details.TaskID == "" {
		t.Fatalf("no task id in %q (%v)", out, err)
	}
	return r.Details.TaskID
}

// lostTask starts a task, SIGKILLs its supervisor, and returns `wait`'s result: status error, the reason
// in details.error.
func lostTask(t *testing.T, art string) string {
	t.Helper()
	out, _, _ := runCLI(t, "start", "--artifact-dir", art, "sleep 30")
	var r struct {
		Details struct {
			SupervisorPid int `json:"supervisorPid"`
		} `json:"details"`
	}
	tid := taskIDOf(t, out)
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Details.SupervisorPid <= 0 {
		t.Fatalf("no supervisor pid in %q", out)
	}
	syscall.Kill(r.Details.SupervisorPid, syscall.SIGKILL)
	for {
		// The supervisor is a child of this test process: reap it, so it is gone rather than a zombie.
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(r.Details.SupervisorPid, &ws, syscall.WNOHANG, nil); pid != 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	wait, _, _ := runCLI(t, "wait", tid)
	if !strings.Contains(wait, `"status":"error"`) {
		t.Errorf("lost task: %s", wait)
	}
	return wait
}

// waitFor waits until path exists (the command has started); the test's own timeout bounds it.
func waitFor(t *testing.T, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSchemaIsOpen: no object schema from the top down closes its field list, so a client validating
// with today's schema accepts a later version's output (reference §3.10); a result with unknown fields at
// every level validates.
func TestSchemaIsOpen(t *testing.T) {
	root, sch := loadSchema(t)
	var walk func(n any, path string)
	walk = func(n any, path string) {
		switch v := n.(type) {
		case map[string]any:
			for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
				if b, ok := v[k].(bool); ok && !b {
					t.Errorf("%s.%s is false", path, k)
				}
			}
			for k, sub := range v {
				walk(sub, path+"."+k)
			}
		case []any:
			for _, sub := range v {
				walk(sub, path+"[]")
			}
		}
	}
	walk(root, "schema")

	var doc any
	json.Unmarshal([]byte(`{"content":[{"type":"text","text":"x","annotations":{}}],"isError":false,"later":1,
		"details":{"status":"exited","command":"c","cwd":"/","shell":"/bin/sh","exitCode":0,"timedOut":false,
		"cancelled":false,"timeoutSeconds":300,"durationMs":1,"later":{"x":1},"artifactId":"1","artifactPath":"/a/1.log",
		"producerStatus":{"exitCode":null,"later":true},"blocked":{"tool":"t","message":"m","pattern":"p","later":1},
		"meta":{"later":1,"truncation":{"direction":"tail","truncatedBy":"bytes","complete":true,"totalLines":1,"totalBytes":1,
		"outputLines":1,"outputBytes":1,"shownRange":{"start":1,"end":1,"later":1},"maxBytes":1,"later":"x"}}}}`), &doc)
	if err := sch.Validate(doc); err != nil {
		t.Errorf("a result with fields the schema does not list: %v", err)
	}
	// Still a schema: a wrong type of a listed field fails.
	doc.(map[string]any)["details"].(map[string]any)["exitCode"] = "zero"
	if err := sch.Validate(doc); err == nil {
		t.Error("exitCode \"zero\" validates")
	}
}
