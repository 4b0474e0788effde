package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"agentbash": main})
}

// TestScripts runs the end-to-end scripts in testscripts/, one behaviour per script. UPDATE_SCRIPTS=1
// rewrites their golden files.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testscripts"))
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
			return os.MkdirAll(home, 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"json":     cmdJSON,
			"cmptext":  cmdCmptext,
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
