package request

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

// TestParseSandbox: a request's sandbox is a mode string or an object of the config's keys; null is none.
// What it reads equals what sandbox.Policy's UnmarshalJSON reads; what it refuses names the field, says what
// it takes and what it got.
func TestParseSandbox(t *testing.T) {
	for in, want := range map[string]*sandbox.Policy{
		`null`:              nil,
		`"workspace-write"`: {Mode: sandbox.ModeWorkspaceWrite},
		`"strict"`:          {Mode: "strict"}, // the service says which modes exist
		`{}`:                {},
		`{"mode": "read-only", "network": "on", "writable": ["~/a b"], "denyRead": [], "cacheDirs": null, "allowHosts": ["h:1"]}`: {
			Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOn, Writable: []string{"~/a b"}, DenyRead: []string{},
			AllowHosts: []string{"h:1"}},
	} {
		got, err := ParseSandbox(json.RawMessage(in))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", in, got, err, want)
		}
		if want == nil {
			continue
		}
		var std sandbox.Policy
		if err := json.Unmarshal([]byte(in), &std); err != nil || !reflect.DeepEqual(&std, got) {
			t.Errorf("%s: UnmarshalJSON reads %+v, %v", in, std, err)
		}
	}
	for in, want := range map[string]string{
		`5`:                        "sandbox: want " + WantSandbox + ", got 5",
		`["read-only"]`:            "sandbox: want " + WantSandbox + `, got ["read-only"]`,
		`true`:                     "sandbox: want " + WantSandbox + ", got true",
		`{"denyread": ["~/x"]}`:    `sandbox: unknown key "denyread" (its keys: mode, network, writable, denyRead, cacheDirs, allowHosts)`,
		`{"mode": 1}`:              "sandbox.mode: want a string (off, workspace-write or read-only), got 1",
		`{"writable": "~/x"}`:      `sandbox.writable: want an array of paths (strings), got "~/x"`,
		`{"allowHosts": ["a", 2]}`: `sandbox.allowHosts: want an array of host:port patterns (strings), got ["a",2]`,
	} {
		if got, err := ParseSandbox(json.RawMessage(in)); err == nil || err.Error() != want {
			t.Errorf("%s: %+v, %v; want %q", in, got, err, want)
		}
	}
}
