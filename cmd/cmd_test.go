package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adrg/xdg"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentbash/agentbash/pkg/config"
)

// runCLI runs the CLI in-process with stdout off a terminal and returns stdout, stderr and the status.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), BuildInfo{}, IO{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
	return out.String(), errb.String(), code
}

// isolate points HOME, XDG dirs and the config at a temp dir, and clears AGENTBASH_* variables.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AGENTBASH_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	xdg.Reload() // xdg reads the environment once, at start-up
	t.Chdir(dir)
	return dir
}

// TestResultsMatchSchema validates real results of every kind against schema/result.schema.json.
func TestResultsMatchSchema(t *testing.T) {
	schemaPath, _ := filepath.Abs("../schema/result.schema.json")
	dir := isolate(t)
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(dir, "art")
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o600)
	cases := [][]string{
		{"run", "echo hello"},
		{"run", "echo out; echo err >&2; exit 3"},
		{"run", "--timeout", "1", "sleep 5"},
		{"run", "--timeout", "7200", "true"},
		{"run", "--cwd", "/nonexistent", "true"},
		{"run", "--artifact-dir", art, "seq 1 100000"},
		{"run", "--artifact-dir", art, "seq 1 100 | tail -n 3"},
		{"run", "--artifact-dir", art, "yes | head -n 5"},
		{"run", "--artifact-dir", art, "seq 1 10 | head -n 0"},
		{"run", "--intercept", "--tools", "read", "cat f.txt"},
		{"run", "kill -TERM $$"},
		{"run", "--shell", "/nonexistent/sh", "true"},
		{"run", "printf '\\xff\\xfe bad utf8 \\x1b[31mred\\x1b[0m'"},
		{"run", "head -c 3000 /dev/zero"},
		{"wait", "999999"}, // an error result that names no command
		{"output", "07"},
	}
	for _, args := range cases {
		out, stderr, code := runCLI(t, args...)
		var doc any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%q: not JSON (exit %d): %v\n%s%s", args, code, err, out, stderr)
			continue
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%q: %v\n%s", args, err, out)
		}
		if strings.Contains(out, `:""`) {
			t.Errorf("%q: an empty field: %s", args, out)
		}
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Errorf("%q: want one line, got %q", args, out)
		}
	}
}

// TestConfigExampleLoadsStrictly loads config.example.yaml with unknown keys and wrong types rejected,
// and checks that it holds exactly the built-in defaults.
func TestConfigExampleLoadsStrictly(t *testing.T) {
	example, _ := filepath.Abs("../config.example.yaml")
	isolate(t)
	out, stderr, code := runCLI(t, "run", "--config", example, "echo $CI")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	var r struct{ Details map[string]any }
	json.Unmarshal([]byte(out), &r)
	if r.Details["timeoutSeconds"] != 300.0 {
		t.Errorf("timeoutSeconds = %v", r.Details["timeoutSeconds"])
	}
}

func TestConfigErrors(t *testing.T) {
	dir := isolate(t)
	for _, tc := range []struct{ yaml, want string }{
		{"timout: 5\n", "timout"},
		{"timeout: true\n", "timeout"},
		{"timeout: abc\n", "timeout"},
		{"shell:\n  bogus: 1\n", "bogus"},
		{"format: xml\n", "format"},
		{"result:\n  nonZeroExit: maybe\n", "nonZeroExit"},
		{"timeout: [\n", "yaml"},
	} {
		p := filepath.Join(dir, "c.yaml")
		os.WriteFile(p, []byte(tc.yaml), 0o600)
		out, stderr, code := runCLI(t, "run", "--config", p, "true")
		if code != 125 || !strings.Contains(out+stderr, tc.want) {
			t.Errorf("%q: exit %d, out %s err %s; want 125 naming %q", tc.yaml, code, out, stderr, tc.want)
		}
	}
	_, _, code := runCLI(t, "run", "--config", filepath.Join(dir, "missing.yaml"), "true")
	if code != 125 {
		t.Errorf("missing explicit config: exit %d, want 125", code)
	}
}

func TestConfigPrecedence(t *testing.T) {
	dir := isolate(t)
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("timeout: 7\nartifacts:\n  maxBytes: 1000\n"), 0o600)
	timeout := func(args ...string) any {
		out, stderr, _ := runCLI(t, append([]string{"run", "--config", p}, args...)...)
		var r struct{ Details map[string]any }
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s %s", out, stderr)
		}
		return r.Details["timeoutSeconds"]
	}
	if got := timeout("true"); got != 7.0 {
		t.Errorf("config: %v", got)
	}
	t.Setenv("AGENTBASH_TIMEOUT", "9")
	if got := timeout("true"); got != 9.0 {
		t.Errorf("env over config: %v", got)
	}
	if got := timeout("--timeout", "5", "true"); got != 5.0 {
		t.Errorf("flag over env: %v", got)
	}
	t.Setenv("AGENTBASH_TIMEOUT", "nine")
	if _, _, code := runCLI(t, "run", "true"); code != 125 {
		t.Errorf("bad env value: exit %d, want 125", code)
	}
}

// TestConfigExampleHoldsDefaults decodes config.example.yaml strictly and requires exactly the built-in
// defaults: the example documents every key with its default.
func TestConfigExampleHoldsDefaults(t *testing.T) {
	example, _ := filepath.Abs("../config.example.yaml")
	isolate(t)
	root := newRootCmd(BuildInfo{}, IO{})
	runCmd, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runCmd.ParseFlags([]string{"--config", example}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(runCmd)
	if err != nil {
		t.Fatal(err)
	}
	if want := config.Default(); !reflect.DeepEqual(cfg, want) {
		t.Errorf("config.example.yaml decodes to\n%+v\nwant the defaults\n%+v", cfg, want)
	}
}

// slowTerminal is a terminal that cannot keep up with the command's output.
type slowTerminal struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *slowTerminal) Write(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestLiveViewOnSlowTerminalLosesNothing: streaming to a slow terminal must not slow the reading of the
// pipe, or the bounded drain would cut the stream (found by a fresh-user trial).
func TestLiveViewOnSlowTerminalLosesNothing(t *testing.T) {
	isolate(t)
	var term slowTerminal
	code := Run(context.Background(), BuildInfo{}, IO{In: strings.NewReader(""), Out: &term, Err: io.Discard, OutIsTerminal: true},
		[]string{"run", "seq 1 200000; echo END"})
	out := term.b.String()
	if code != 0 || !strings.Contains(out, "of 200001 (50.0KB limit)") || !strings.Contains(out, "\nEND\n") {
		t.Errorf("exit %d, output ends:\n%s", code, out[max(0, len(out)-400):])
	}
}

// A `wait` that blocks past leanAfter makes itself lean (pkg/memlimit), once; one whose task has ended
// already returns before, and does not.
func TestLongWaitIsLean(t *testing.T) {
	isolate(t)
	var leans atomic.Int32
	old := lean
	lean = func() { leans.Add(1) }
	t.Cleanup(func() { lean = old })
	out, _, _ := runCLI(t, "start", fmt.Sprintf("sleep %.1f", (leanAfter+600*time.Millisecond).Seconds()))
	id := taskIDOf(t, out)
	if out, _, code := runCLI(t, "wait", id); code != 0 {
		t.Fatalf("wait: exit %d, %s", code, out)
	}
	if n := leans.Load(); n != 1 {
		t.Errorf("a wait of %v made itself lean %d times, want once", leanAfter+600*time.Millisecond, n)
	}
	if _, _, code := runCLI(t, "wait", id); code != 0 || leans.Load() != 1 {
		t.Errorf("a wait for an ended task: exit %d, leans %d, want none more", code, leans.Load()-1)
	}
	time.Sleep(leanAfter) // a timer left running would fire now
	if n := leans.Load(); n != 1 {
		t.Errorf("%d leans after the waits returned, want 1", n)
	}
}
