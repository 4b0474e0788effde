package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/local"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/service"
)

// recorder is a place that keeps the commands it is given and runs none: each gets an error result, the
// refusal's when it was refused.
type recorder struct {
	mu  sync.Mutex
	got []request.Command
}

func (r *recorder) Run(_ context.Context, c request.Command, _ executor.Observer) result.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
	err := errors.New("recorded, not run")
	if c.Resolved.Refused != "" {
		err = errors.New(c.Resolved.Refused)
	}
	return local.Failed(c.Command, c.Cwd, err)
}
func (r *recorder) Tasks() executor.Tasks         { return nil }
func (r *recorder) Sessions() executor.Sessions   { return nil }
func (r *recorder) Artifacts() executor.Artifacts { return nil }
func (r *recorder) Close() error                  { return nil }

func (r *recorder) last() *request.Resolved {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1].Resolved
}

// The bash tool's sandbox argument, a mode or an object, becomes the policy the command is settled with,
// over the server's own (here workspace-write with network on); a looser one is refused naming the field.
func TestSandboxArgument(t *testing.T) {
	rec := &recorder{}
	floor := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, DenyRead: []string{"~/.ssh"}}
	svc := service.New(service.Config{Timeout: 30, NonZeroExit: result.NonZeroError, Sandbox: floor}, rec)
	cs, _ := connect(t, testServer(t, func(o *Options) { o.Service = svc; o.NoSession = true }), nil)
	for _, tc := range []struct {
		arg     any
		want    *sandbox.Policy
		refused string
	}{
		{nil, &floor, ""},
		{"read-only", &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOn, DenyRead: []string{"~/.ssh"}}, ""},
		{map[string]any{"network": "off", "denyRead": []string{"~/.aws"}}, &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite,
			Network: sandbox.NetworkOff, DenyRead: []string{"~/.ssh", "~/.aws"}}, ""},
		{"off", nil, "sandbox.mode off would loosen this server's workspace-write"},
		{map[string]any{"writable": []string{"/etc"}}, nil, "sandbox.writable: /etc is not within this server's writable"},
	} {
		args := map[string]any{"command": "true"}
		if tc.arg != nil {
			args["sandbox"] = tc.arg
		}
		call(t, cs, "bash", args)
		got := rec.last()
		if !reflect.DeepEqual(got.Sandbox, tc.want) || !strings.HasPrefix(got.Refused, tc.refused) ||
			(tc.refused == "") != (got.Refused == "") {
			t.Errorf("sandbox %v: settled %+v, refused %q; want %+v, %q", tc.arg, got.Sandbox, got.Refused, tc.want, tc.refused)
		}
	}
	// Broken ones are the call's error, naming the argument or the key in it; nothing reaches the place.
	before := len(rec.got)
	for arg, want := range map[string]string{
		`5`:                   "sandbox must be a mode (\"off\", \"workspace-write\" or \"read-only\") or an object with the keys mode, network, writable, denyRead, cacheDirs and allowHosts, got 5",
		`["read-only"]`:       `sandbox must be a mode`,
		`{"mode": true}`:      "sandbox.mode: want a string (off, workspace-write or read-only), got true",
		`{"Writable": ["x"]}`: `sandbox: unknown key "Writable" (its keys: mode, network, writable, denyRead, cacheDirs, allowHosts)`,
	} {
		var v any
		_ = json.Unmarshal([]byte(arg), &v)
		r := call(t, cs, "bash", map[string]any{"command": "true", "sandbox": v})
		if !r.IsError || !strings.Contains(text(r), want) {
			t.Errorf("sandbox %s: isError %v, text %q; want %q", arg, r.IsError, text(r), want)
		}
	}
	// The refusals of broken arguments went through the service's Refuse: refused, not run.
	for _, c := range rec.got[before:] {
		if c.Resolved.Refused == "" {
			t.Errorf("a broken sandbox argument reached the place to run: %+v", c.Resolved)
		}
	}
}

// The sandbox argument's schema is a mode or an object of the config's keys and nothing else, and says the
// server's own sandbox.
func TestSandboxSchema(t *testing.T) {
	sc := sandboxSchema(sandbox.Policy{Mode: sandbox.ModeReadOnly})
	if len(sc.OneOf) != 2 || sc.OneOf[0].Type != "string" || len(sc.OneOf[0].Enum) != 3 || sc.OneOf[1].Type != "object" {
		t.Fatalf("oneOf %+v", sc.OneOf)
	}
	var keys []string
	for k := range sc.OneOf[1].Properties {
		keys = append(keys, k)
	}
	if len(keys) != len(request.SandboxKeys) {
		t.Errorf("object keys %v, want %v", keys, request.SandboxKeys)
	}
	b, _ := json.Marshal(sc.OneOf[1])
	if !strings.Contains(string(b), `"additionalProperties":false`) {
		t.Errorf("object schema allows other keys: %s", b)
	}
	if !strings.HasSuffix(sc.Description, "Left out, the server's own: read-only, network off") {
		t.Errorf("description %q", sc.Description)
	}
}
