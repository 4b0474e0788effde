package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/service"
)

// decodeTests are request lines with what Decode makes of them: the error (a part of its text) or the
// id and type. The fuzz test starts from them.
var decodeTests = []struct {
	line, err, id, typ string
}{
	{line: `{"id":1,"type":"bash","command":"echo hi"}`, id: `1`, typ: TypeBash},
	{line: `{"type":"bash","command":"echo hi"}`, id: `null`, typ: TypeBash},
	{line: ` {"id" : "a" , "type":"bash","command":"x"} `, id: `"a"`, typ: TypeBash},
	{line: `{"id":1.0,"type":"abort_bash","target":{"z":1,"a":"\u0041"}}`, id: `1.0`, typ: TypeAbort},
	{line: `{"id":true,"type":"tasks"}`, id: `true`, typ: TypeTasks},
	{line: `{"id":2,"type":"start","command":"sleep 9","timeout":5,"env":{"A":"1"}}`, id: `2`, typ: TypeStart},
	{line: `{"id":3,"type":"output","taskId":"7","wait":1.5,"reader":"me"}`, id: `3`, typ: TypeOutput},
	{line: `{"id":4,"type":"kill","taskId":"7","signal":"SIGINT"}`, id: `4`, typ: TypeKill},
	{line: `{"id":5,"type":"wait","taskId":"7","timeout":0}`, id: `5`, typ: TypeWait},
	{line: `{"id":6,"type":"bash","command":"x","background":true,"stream":true,"yield":0}`, id: `6`, typ: TypeBash},
	{line: `{"id":7,"type":"bash","command":"x","timeout":null}`, id: `7`, typ: TypeBash},
	{line: `{"id":8,"type":"bash","command":"x","sandbox":"read-only"}`, id: `8`, typ: TypeBash},
	{line: `{"id":9,"type":"start","command":"x","sandbox":{"mode":"workspace-write","writable":["~/w"]}}`, id: `9`, typ: TypeStart},
	{line: `{"id":10,"type":"bash","command":"x","sandbox":null}`, id: `10`, typ: TypeBash},
	{line: `{"id":11,"type":"start","command":"python3 -q -i","stdin":"pipe"}`, id: `11`, typ: TypeStart},
	{line: `{"id":12,"type":"bash","command":"python3 -q","tty":true,"cols":80,"rows":24,"yield":2}`, id: `12`, typ: TypeBash},
	{line: `{"id":13,"type":"bash","command":"tty","tty":true}`, id: `13`, typ: TypeBash},
	{line: `{"id":14,"type":"input","taskId":"7","text":"6*7\r"}`, id: `14`, typ: TypeInput},
	{line: `{"id":15,"type":"input","taskId":"7","keys":"Enter,C-c","wait":0}`, id: `15`, typ: TypeInput},
	{line: `{"id":16,"type":"input","taskId":"7","keys":["C-d"],"eof":true,"cols":80,"rows":24}`, id: `16`, typ: TypeInput},
	{line: `{"id":17,"type":"input","taskId":"7","keys":null,"text":""}`, id: `17`, typ: TypeInput},

	{line: `{not json`, err: "bad JSON", id: `null`},
	{line: `{"id":1,"type":"bash","command":"x"} {"id":2}`, err: "bad JSON", id: `null`},
	{line: `"bash"`, err: "want a JSON object", id: `null`},
	{line: ``, err: "want a JSON object", id: `null`},
	{line: `{"id":1}`, err: "type: required", id: `1`},
	{line: `{"id":1,"type":7}`, err: "type: want a string", id: `1`},
	{line: `{"id":1,"type":"frobnicate"}`, err: `unknown request type "frobnicate"`, id: `1`},
	{line: `{"id":1,"type":"bash","command":"x","Command":"y"}`, err: `unknown field "Command"`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","stdin":"y"}`, err: `stdin: want "pipe"`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","stdin":true}`, err: `stdin: want "pipe" (a pipe that input writes to), got bool`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","tty":"yes"}`, err: "tty: want true or false", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","tty":true,"cols":1}`, err: "cols: want 2 to 1000, got 1", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"start","command":"x","tty":true,"rows":1001}`, err: "rows: want 2 to 1000, got 1001", id: `1`, typ: TypeStart},
	{line: `{"id":1,"type":"start","command":"x","cols":80}`, err: "a size needs a terminal (tty)", id: `1`, typ: TypeStart},
	{line: `{"id":1,"type":"bash","command":"x","cols":"wide"}`, err: "cols: want a number of columns", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"input","text":"x"}`, err: "taskId: required", id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","keys":"Enter,Frob"}`, err: `keys: unknown key "Frob"; known: Enter, Tab`, id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","keys":["Up","Nope"]}`, err: `keys: unknown key "Nope"`, id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","keys":7}`, err: `keys: want key names: a comma-separated string ("Enter,C-c") or a list (["Enter", "C-c"]), got 7`, id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","keys":[1]}`, err: `keys: want key names`, id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","text":5}`, err: "text: want a string", id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","eof":"yes"}`, err: "eof: want true or false", id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","wait":-0.5}`, err: "wait: want a number of seconds ≥ 0, got -0.5", id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","cols":1,"rows":2000}`, err: "cols: want 2 to 1000, got 1; rows: want 2 to 1000, got 2000", id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"input","taskId":"7","reader":"me"}`, err: `unknown field "reader" in an input request (its fields: id, type, cols, eof, keys, rows, target, taskId, text, wait)`, id: `1`, typ: TypeInput},
	{line: `{"id":1,"type":"start","command":"x","yield":1}`, err: `unknown field "yield"`, id: `1`, typ: TypeStart},
	{line: `{"id":1,"type":"bash","command":"x","timeout":"soon"}`, err: "timeout: want a number of seconds, got string", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","timeout":1e999}`, err: "timeout: want a number of seconds", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","head":1.5}`, err: "head: want a line count", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","tail":-2}`, err: "tail: want a line count ≥ 0, got -2", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","env":{"A":1}}`, err: "env: want an object of string values", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","env":{"A=B":"1"}}`, err: `env: bad variable name "A=B"`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","env":{"K":"a\u0000b"}}`, err: `env: the value of K holds a NUL byte`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","tools":"read"}`, err: "tools: want an array", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","stream":"yes"}`, err: "stream: want true or false", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":42}`, err: "command: want a string", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash"}`, err: "command: required", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"  \n "}`, err: "command: required", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","session":"../x"}`, err: `session "../x"`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","yield":-1}`, err: "yield: want a number of seconds > 0", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","yield":2,"background":true}`, err: "background and yield", id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"abort_bash","target":null}`, err: "target: null names no request", id: `1`, typ: TypeAbort},
	{line: `{"id":1,"type":"abort_bash","target": null }`, err: "leave target out to abort every running command", id: `1`, typ: TypeAbort},
	{line: `{"id":1,"type":"output"}`, err: "taskId: required", id: `1`, typ: TypeOutput},
	{line: `{"id":1,"type":"output","taskId":7}`, err: "taskId: want a task id", id: `1`, typ: TypeOutput},
	{line: `{"id":1,"type":"output","taskId":"1","reader":"a b"}`, err: "reader: bad reader name", id: `1`, typ: TypeOutput},
	{line: `{"id":1,"type":"output","taskId":"1","wait":-1}`, err: "wait: want a number of seconds ≥ 0", id: `1`, typ: TypeOutput},
	{line: `{"id":1,"type":"kill","taskId":"1","signal":"NOPE"}`, err: "signal: unknown signal", id: `1`, typ: TypeKill},
	{line: `{"id":1,"type":"wait","taskId":"1","timeout":-3}`, err: "timeout: want a number of seconds ≥ 0", id: `1`, typ: TypeWait},
	{line: `{"id":1,"type":"tasks","all":1}`, err: "all: want true or false", id: `1`, typ: TypeTasks},
	{line: `{"id":1,"type":"bash","command":"x","sandbox":5}`, err: `sandbox: want a mode ("off", "workspace-write" or "read-only") or an object`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","sandbox":{"denyread":[]}}`, err: `sandbox: unknown key "denyread" (its keys: mode,`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"start","command":"x","sandbox":{"writable":"/w","mode":7}}`, err: "sandbox.mode: want a string (off, workspace-write or read-only), got 7; sandbox.writable: want an array of paths", id: `1`, typ: TypeStart},
	{line: `{"id":1,"type":"bash","command":"x","resolved":{"protocol":1,"command":"x","run":"x","timeout":1,"maxBytes":1,"head":-1,"tail":-1,"nonZeroExit":"error","sandbox":"bogus"}}`, err: `resolved.sandbox.mode: want off, workspace-write or read-only, got "bogus"`, id: `1`, typ: TypeBash},
	{line: `{"id":1,"type":"bash","command":"x","resolved":{"protocol":1,"command":"x","run":"x","timeout":1,"maxBytes":1,"head":-1,"tail":-1,"nonZeroExit":"error","sandbox":{"mode":5,"x":1}}}`, err: `resolved.sandbox.mode: want a string (off, workspace-write or read-only), got 5; resolved.sandbox: unknown key "x"`, id: `1`, typ: TypeBash},
}

func TestDecode(t *testing.T) {
	for _, tt := range decodeTests {
		m, err := Decode([]byte(tt.line), request.Command{})
		if tt.err != "" {
			de, ok := errors.AsType[*DecodeError](err)
			if !ok || !strings.Contains(de.Msg, tt.err) || string(de.ID) != tt.id || de.Type != tt.typ {
				t.Errorf("Decode(%s) = %+v, %v; want error %q with id %s type %q", tt.line, m, err, tt.err, tt.id, tt.typ)
			}
			continue
		}
		if err != nil || string(m.ID) != tt.id || m.Type != tt.typ {
			t.Errorf("Decode(%s) = %+v, %v; want id %s type %s", tt.line, m, err, tt.id, tt.typ)
		}
	}
}

func TestDecodeFields(t *testing.T) {
	m, err := Decode([]byte(`{"type":"abort_bash","target":{"z":1,"a":"\u0041"}}`), request.Command{})
	if err != nil || string(m.Abort.Target) != `{"a":"A","z":1}` {
		t.Errorf("target %s, %v", m.Abort.Target, err)
	}
	if m, err := Decode([]byte(`{"type":"abort_bash"}`), request.Command{}); err != nil || m.Abort.Target != nil {
		t.Errorf("no target: target %s, %v (want all)", m.Abort.Target, err)
	}
	m, _ = Decode([]byte(`{"type":"kill","taskId":"3","signal":"hup"}`), request.Command{})
	if m.Kill.Signal != syscall.SIGHUP {
		t.Errorf("signal %v", m.Kill.Signal)
	}
	m, _ = Decode([]byte(`{"type":"kill","taskId":"3"}`), request.Command{})
	if m.Kill.Signal != syscall.SIGTERM {
		t.Errorf("default signal %v", m.Kill.Signal)
	}
	m, _ = Decode([]byte(`{"type":"output","taskId":"3"}`), request.Command{})
	if m.Output.Reader != "default" {
		t.Errorf("default reader %q", m.Output.Reader)
	}
	m, _ = Decode([]byte(`{"type":"input","taskId":"3","text":"6*7\r"}`), request.Command{})
	if in := m.Input; in.Wait != service.DefaultInputWait || string(in.In.Text) != "6*7\r" || in.In.Keys != nil || in.In.EOF {
		t.Errorf("input defaults %+v", in)
	}
	for _, keys := range []string{`"Enter, C-c"`, `["Enter","C-c"]`} {
		m, err = Decode([]byte(`{"type":"input","taskId":"3","keys":`+keys+`,"eof":true,"wait":0,"cols":80,"rows":24}`), request.Command{})
		in := m.Input
		if err != nil || len(in.In.Keys) != 2 || in.In.Keys[0] != "Enter" || in.In.Keys[1] != "C-c" || !in.In.EOF ||
			in.Wait != 0 || in.In.Cols != 80 || in.In.Rows != 24 {
			t.Errorf("input keys %s: %+v, %v", keys, in, err)
		}
	}
	m, _ = Decode([]byte(`{"type":"start","command":"x","stdin":"pipe"}`), request.Command{})
	if m.Bash.StdinMode != request.StdinPipe {
		t.Errorf("stdin %q", m.Bash.StdinMode)
	}
	m, _ = Decode([]byte(`{"type":"bash","command":"x","tty":true,"cols":80,"rows":24}`), request.Command{})
	if !m.Bash.TTY || m.Bash.Cols != 80 || m.Bash.Rows != 24 {
		t.Errorf("tty %+v", m.Bash.Command)
	}
	m, _ = Decode([]byte(`{"type":"start","command":"x"}`), request.Command{})
	if !m.Bash.Background {
		t.Error("start is not background")
	}
	m, err = Decode([]byte(`{"type":"bash","command":"x","sandbox":{"mode":"read-only","network":"on","denyRead":["~/s"]}}`), request.Command{})
	if p := m.Bash.Sandbox; err != nil || p == nil || p.Mode != sandbox.ModeReadOnly || p.Network != sandbox.NetworkOn ||
		len(p.DenyRead) != 1 || p.DenyRead[0] != "~/s" {
		t.Errorf("sandbox %+v, %v", p, err)
	}
	m, _ = Decode([]byte(`{"type":"bash","command":"x","sandbox":"workspace-write"}`), request.Command{})
	if p := m.Bash.Sandbox; p == nil || p.Mode != sandbox.ModeWorkspaceWrite || p.Network != "" {
		t.Errorf("sandbox %+v", p)
	}
}

// TestDecodeDefaults: a field the request gives replaces the default; the others are the defaults, and
// decoding never changes the defaults themselves.
func TestDecodeDefaults(t *testing.T) {
	head, timeout, on := 5, 9.0, true
	defaults := request.Command{Cwd: "/d", Head: &head, Timeout: &timeout, Intercept: &on, Tools: []string{"read", "grep"},
		Env: map[string]string{"D": "1"}, Session: "dflt"}
	m, err := Decode([]byte(`{"type":"bash","command":"x","cwd":"/r","head":1,"timeout":null,"tools":["edit"],`+
		`"env":{"R":"2"},"intercept":false,"session":""}`), defaults)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Bash.Command
	if r.Cwd != "/r" || *r.Head != 1 || r.Timeout != nil || *r.Intercept || len(r.Tools) != 1 || r.Env["R"] != "2" || r.Session != "" {
		t.Errorf("request %+v", r)
	}
	if defaults.Cwd != "/d" || head != 5 || timeout != 9 || !on || defaults.Tools[0] != "read" || len(defaults.Env) != 1 || defaults.Session != "dflt" {
		t.Errorf("defaults changed: %+v", defaults)
	}
	m, _ = Decode([]byte(`{"type":"bash","command":"x"}`), defaults)
	if r := m.Bash.Command; r.Cwd != "/d" || *r.Head != 5 || *r.Timeout != 9 || r.Session != "dflt" {
		t.Errorf("defaults not taken: %+v", r)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		`1`: `1`, `1.0`: `1.0`, `"1"`: `"1"`, ` { "b" : 1, "a" : [ 2 , "<&>" ] } `: `{"a":[2,"<&>"],"b":1}`,
		`"\u00e9"`: `"é"`, `null`: `null`, `true`: `true`,
	} {
		if got := string(Canonical(json.RawMessage(in))); got != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzDecode checks, for any line, that Decode does not panic; that an error is a *DecodeError with a
// message and a valid JSON id; that a decoded request's id is canonical and valid JSON and exactly one of
// its parts is set; and that a line that is not a JSON object is refused with id null.
func FuzzDecode(f *testing.F) {
	for _, tt := range decodeTests {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		m, err := Decode([]byte(line), request.Command{})
		if err != nil {
			de, ok := errors.AsType[*DecodeError](err)
			if !ok || de.Msg == "" || !json.Valid(de.ID) {
				t.Fatalf("Decode(%q): error %#v", line, err)
			}
			if _, err := marshal(Response{ID: de.ID, Type: TypeResponse, Error: de.Msg}); err != nil {
				t.Fatalf("Decode(%q): the error response does not encode: %v", line, err)
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &obj) != nil && !bytes.Equal(de.ID, null) {
				t.Fatalf("Decode(%q): not an object, yet id %s", line, de.ID)
			}
			return
		}
		if !json.Valid(m.ID) || !bytes.Equal(Canonical(m.ID), m.ID) {
			t.Fatalf("Decode(%q): id %s not canonical", line, m.ID)
		}
		set := 0
		for _, p := range []bool{m.Bash != nil, m.Abort != nil, m.Output != nil, m.Input != nil, m.Kill != nil, m.Wait != nil, m.Tasks != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Fatalf("Decode(%q): %d parts set", line, set)
		}
		if m.Bash != nil && normalize.Trim(m.Bash.Command.Command) == "" {
			t.Fatalf("Decode(%q): command %q", line, m.Bash.Command.Command)
		}
	})
}
