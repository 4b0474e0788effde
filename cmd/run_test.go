package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One argument is script text; two or more are an argv, each word quoted (reference §3.1).
func TestCommandText(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"echo a; echo b"}, "echo a; echo b"},
		{[]string{"ls -la | head -5"}, "ls -la | head -5"},
		{[]string{"ls", "-la"}, "ls -la"},
		{[]string{"rm", "my file"}, "rm 'my file'"},
		{[]string{"echo", "$HOME"}, "echo '$HOME'"},
		{[]string{"echo", "it's"}, `echo "it's"`},
		{[]string{"printf", "%s\n", ""}, `printf $'%s\n' ''`},
		{[]string{"echo", "a;b", "|", "*", "~", "x=1", "#c"}, `echo 'a;b' '|' '*' '~' 'x=1' '#c'`},
	} {
		got, err := commandText(IO{}, runFlags{}, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("commandText(%q) = %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

// The quoted argv runs each argument as one word, whatever it holds.
func TestArgvRunsWordsAsGiven(t *testing.T) {
	dir := filepath.Join(isolate(t), "files")
	os.Mkdir(dir, 0o755)
	for _, n := range []string{"my", "file", "my file"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	out, stderr, code := runCLI(t, "run", "--cwd", dir, "--", "rm", "my file")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if strings.Join(left, ",") != filepath.Join(dir, "file")+","+filepath.Join(dir, "my") {
		t.Errorf("left %q", left)
	}
	var r struct {
		Content []struct{ Text string }
		Details map[string]any
	}
	out, _, _ = runCLI(t, "run", "--", "printf", "%s|", "$HOME", "a  b", "`id`")
	json.Unmarshal([]byte(out), &r)
	if r.Content[0].Text != "$HOME|a  b|`id`|" || r.Details["command"] != "printf '%s|' '$HOME' 'a  b' '`id`'" {
		t.Errorf("got %q, command %q", r.Content[0].Text, r.Details["command"])
	}
}

// --wrapper is split like shell words when given: a malformed value is a usage error (exit 2); the same
// from the environment is a config error (exit 125); an empty value turns a configured wrapper off.
func TestWrapperFlagAndEnvironment(t *testing.T) {
	dir := isolate(t)
	text := func(args ...string) (string, int) {
		out, stderr, code := runCLI(t, append([]string{"run"}, args...)...)
		var r struct{ Content []struct{ Text string } }
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Content) == 0 {
			return stderr, code
		}
		return r.Content[0].Text, code
	}
	if got, code := text("--wrapper", "env 'W=a b'", `cd / && echo "$W"`); got != "a b" || code != 0 {
		t.Errorf("flag: %d %q", code, got)
	}
	if got, code := text("--wrapper", "nice $X", "true"); code != 2 || !strings.Contains(got, "$X: nothing is expanded") {
		t.Errorf("bad flag: %d %q", code, got)
	}
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("shell:\n  wrapper: [env, W=file]\n"), 0o600)
	if got, code := text("--config", p, `echo "$W"`); got != "file" || code != 0 {
		t.Errorf("file: %d %q", code, got)
	}
	t.Setenv("AGENTBASH_SHELL_WRAPPER", "env W=env")
	if got, _ := text("--config", p, `echo "$W"`); got != "env" {
		t.Errorf("env over file: %q", got)
	}
	if got, _ := text("--config", p, "--wrapper", "", `echo "${W-none}"`); got != "none" {
		t.Errorf("--wrapper '' turns it off: %q", got)
	}
	t.Setenv("AGENTBASH_SHELL_WRAPPER", "nice $(id)")
	if got, code := text("true"); code != 125 || !strings.Contains(got, "AGENTBASH_SHELL_WRAPPER") {
		t.Errorf("bad env: %d %q", code, got)
	}
	t.Setenv("AGENTBASH_SHELL_WRAPPER", "no-such-wrapper-xyz -n 1")
	if got, code := text("true"); code != 125 || !strings.Contains(got, "wrapper program not found: no-such-wrapper-xyz") {
		t.Errorf("missing wrapper: %d %q", code, got)
	}
}
