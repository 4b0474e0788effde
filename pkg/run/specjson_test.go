package run

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// specFields is a Spec without its MarshalJSON: what encoding/json makes of its fields by reflection.
type specFields Spec

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
	empty := Spec{}
	empty.Env = RawList{}
	for name, spec := range map[string]Spec{"zero": {}, "empty env": empty, "plain": plainSpec, "every field": every, "odd strings": odd} {
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
