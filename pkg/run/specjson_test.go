package run

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// TestSpecMarshalJSON: Spec's own encoding is encoding/json's, byte for byte, with HTML escaping and
// without, inside a message as on its own, for a spec with nothing set, a plain one, one with every field
// set, and strings that need escaping, HTML characters, U+2028 and bytes that are not UTF-8.
func TestSpecMarshalJSON(t *testing.T) {
	plainSpec := Spec{Command: "true", Shell: "/usr/bin/bash", Dir: "/tmp", Env: RawList{"A=1", "B=2"},
		Timeout: 30 * time.Second, KillGrace: 3 * time.Second,
		Output: Output{MaxBytes: 51200, Head: -1, Tail: -1, ArtifactDir: "/s/artifacts", ArtifactMaxBytes: 1 << 30,
			Command: "true", Cwd: "/tmp"}}
	every := plainSpec
	every.Wrapper = RawList{"nice", "-n", "10"}
	every.Output.Keep = true
	every.Task = &Task{Dir: "/s/tasks", ID: "t1", Attached: true}
	every.Sandbox = &sandbox.Confinement{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkProxy,
		Writable: []string{"/w <&>"}, Dir: "/d", AllowHosts: []string{"h:1"}}
	every.Interactive = &console.Options{TTY: true, Cols: 80, Rows: 24}
	// A field added to Spec or Output must be set here, and so be written by MarshalJSON, or this fails.
	for _, v := range []reflect.Value{reflect.ValueOf(every), reflect.ValueOf(every.Output)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("every field: %s.%s is not set", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	odd := plainSpec
	odd.Command = "echo \"<a & b>\"\n\tx\u2028y\\ \xff\xfe"
	odd.Shell, odd.Dir = "/b<in>/sh", "/tmp/caf\xe9"
	odd.Env = RawList{"X=\u2029&", "Y=\x01", "Z=\xc3"}
	odd.Wrapper = RawList{"a\"b"}
	odd.Output.Command, odd.Output.Cwd = "<&>\u2028 \xff\"", "/tmp/\x7f\\"
	odd.Output.ArtifactDir = "/a\xff"
	odd.Task = &Task{Dir: "/t\xff", ID: "<id>"}
	plainTask := plainSpec
	plainTask.Task = &Task{Dir: "/t", ID: "t1"}
	empty := Spec{}
	empty.Env = RawList{}
	for name, spec := range map[string]Spec{"zero": {}, "empty env": empty, "plain": plainSpec, "every field": every, "odd strings": odd, "task": plainTask} {
		t.Run(name, func(t *testing.T) {
			for _, escape := range []bool{true, false} {
				type message struct {
					Op   string `json:"op"`
					Spec any    `json:"spec"`
				}
				got, want := encode(t, message{"start", &spec}, escape), encode(t, message{"start", (*specFields)(&spec)}, escape)
				if !bytes.Equal(got, want) {
					t.Errorf("escape HTML %v:\ngot  %s\nwant %s", escape, got, want)
				}
				if got, want := encode(t, spec, escape), encode(t, specFields(spec), escape); !bytes.Equal(got, want) {
					t.Errorf("alone, escape HTML %v:\ngot  %s\nwant %s", escape, got, want)
				}
			}
		})
	}
}

func encode(t *testing.T, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSpecUnmarshalJSON: Spec's own decoding is encoding/json's: the same spec, or an error both times,
// into a zero spec and into one already set (a field the text leaves out keeps its value), for what
// MarshalJSON writes (plain, or with strings to unescape, a task, a sandbox, a terminal) and for texts
// it never writes: fields in another order, blanks, a field twice, unknown or differently cased fields,
// nulls, numbers with a fraction or an exponent or out of range, a keep of false.
func TestSpecUnmarshalJSON(t *testing.T) {
	base := Spec{Command: "true", Shell: "/usr/bin/bash", Dir: "/tmp", Env: RawList{"A=1"}, Timeout: time.Second,
		KillGrace: 3, Output: Output{MaxBytes: 100, Head: -1, Tail: 7, ArtifactDir: "/a", ArtifactMaxBytes: 1 << 40,
			Command: "true", Cwd: "/tmp"}}
	wrapped := base
	wrapped.Wrapper, wrapped.Output.Keep = RawList{"nice", "-n", "1"}, true
	escaped := base
	escaped.Command, escaped.Env, escaped.Output.Cwd = "echo \"]\" \xff", RawList{"X=]\"", "Y=\xfe"}, "/t\tab"
	task := base
	task.Task = &Task{Dir: "/t", ID: "x"}
	boxed := base
	boxed.Sandbox = &sandbox.Confinement{Mode: sandbox.ModeReadOnly, Dir: "/d"}
	boxed.Interactive = &console.Options{TTY: true}
	quoted := base // what agents' commands hold: quotes, newlines, redirections (\u003e), other characters
	quoted.Command, quoted.Env = "grep -n \"a\\b\" *.go > out && echo 'héllo' 🙂\n\tdone", RawList{"X=]\"", "Y=a,b"}
	quoted.Output.Command, quoted.Output.Cwd = string(quoted.Command), "/t\tab/é"
	var texts []string
	for _, s := range []Spec{{}, base, wrapped, escaped, task, boxed, quoted} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	plainText := texts[1]
	// A plain run's, with a wrapper and keep, a task's, one with escapes and other characters: the parser's.
	for _, text := range []string{texts[1], texts[2], texts[4], texts[6]} {
		if p := (specParser{data: []byte(text)}); !p.spec(new(Spec)) || len(p.data) > 0 {
			t.Errorf("the parser does not read %s", text)
		}
	}
	for _, edit := range [][2]string{
		{`{"command":"true",`, `{ "command" : "true" ,`},
		{`"shell":"/usr/bin/bash",`, ``},
		{`"shell":"/usr/bin/bash",`, `"shell":"/usr/bin/bash","shell":"/bin/sh",`},
		{`"dir":"/tmp"`, `"Dir":"/tmp"`},
		{`"dir":"/tmp"`, `"dir":"/tmp","nosuch":1`},
		{`"env":["A=1"]`, `"env":null`},
		{`"env":["A=1"]`, `"env":[]`},
		{`"env":["A=1"]`, `"env":["A=1",2]`},
		{`"timeout":1000000000`, `"timeout":1.5`},
		{`"timeout":1000000000`, `"timeout":1e9`},
		{`"timeout":1000000000`, `"timeout":-1`},
		{`"timeout":1000000000`, `"timeout":99999999999999999999`},
		{`"timeout":1000000000`, `"timeout":"1"`},
		{`"timeout":1000000000`, `"timeout":01000000000`},
		{`"timeout":1000000000`, `"timeout":-0`},
		{`"head":-1`, `"head":-01`},
		{`"head":-1`, `"head":+1`},
		{`"head":-1`, `"head":-`},
		{`"head":-1`, `"head":null`},
		{`"cwd":"/tmp"}`, `"cwd":"/tmp","keep":false}`},
		{`"cwd":"/tmp"}`, `"cwd":"/tmp","keep":true}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\u00e9"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\u00E9\/\b\f\r"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\ud83d\ude42"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\ud83d"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\ud83dx"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\ude42\ud83d"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\ud83d\u0041"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\u12"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\'"}`},
		{`"cwd":"/tmp"}`, `"cwd":"/t\x41"}`},
		{`"cwd":"/tmp"}`, "\"cwd\":\"/t\xff\"}"},
		{`"cwd":"/tmp"}`, "\"cwd\":\"/t\x01\"}"},
		{`"env":["A=1"]`, `"env":["A=\"1\"","B=\u0026"]`},
		{`"env":["A=1"]`, `"env":["A=1",]`},
		{`"env":["A=1"]`, `"env":["A=1" ]`},
		{`"command":"true","shell"`, `"command":"a\\\"b","shell"`},
		{`"command":"true","shell"`, `"command":{"base64":"/w=="},"shell"`},
		{`}}`, `},"wrapper":["x"]}`},
		{`}}`, `},"task":null}`},
		{`"output":{`, `"output":{"nosuch":true,`},
	} {
		if !strings.Contains(plainText, edit[0]) {
			t.Fatalf("%s does not hold %s", plainText, edit[0])
		}
		texts = append(texts, strings.Replace(plainText, edit[0], edit[1], 1))
	}
	texts = append(texts, `null`, `{}`, `[]`, `"x"`)
	for _, text := range texts {
		for _, start := range []Spec{{}, wrapped, task} {
			got, want := start, start
			if task := start.Task; task != nil { // two tasks, each decoded into on its own
				t1, t2 := *task, *task
				got.Task, want.Task = &t1, &t2
			}
			gotErr := json.Unmarshal([]byte(text), &got)
			wantErr := json.Unmarshal([]byte(text), (*specFields)(&want))
			if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s into %+v:\ngot  %+v (%v)\nwant %+v (%v)", text, start, got, gotErr, want, wantErr)
			}
			// Called itself, on text encoding/json has not checked first (ParseSpec's callers do so).
			if start.Task == nil {
				got := start
				gotErr := got.UnmarshalJSON([]byte(text))
				if (gotErr == nil) != (wantErr == nil) || wantErr == nil && !reflect.DeepEqual(got, want) {
					t.Errorf("%s into %+v, called itself:\ngot  %+v (%v)\nwant %+v (%v)", text, start, got, gotErr, want, wantErr)
				}
			}
		}
		// In a message, as a supervisor reads one: a nil pointer, made by the decoder.
		type message struct {
			Spec *Spec `json:"spec"`
		}
		type plainMessage struct {
			Spec *specFields `json:"spec"`
		}
		var got message
		var want plainMessage
		gotErr := json.Unmarshal([]byte(`{"spec":`+text+`}`), &got)
		wantErr := json.Unmarshal([]byte(`{"spec":`+text+`}`), &want)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got.Spec, (*Spec)(want.Spec)) {
			t.Errorf("message of %s:\ngot  %+v (%v)\nwant %+v (%v)", text, got.Spec, gotErr, want.Spec, wantErr)
		}
	}
}
