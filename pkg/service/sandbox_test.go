package service

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// floorPolicy is a server started with --sandbox workspace-write and one writable path.
var floorPolicy = sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn,
	Writable: []string{"~/proj"}, DenyRead: []string{"~/.ssh"}, CacheDirs: []string{"~/.cache"}}

// settle is what s, with the sandbox floor, hands its executor for c.
func settle(t *testing.T, floor sandbox.Policy, c request.Command) *request.Resolved {
	t.Helper()
	rec := &recorder{}
	New(Config{Timeout: 30, Sandbox: floor}, rec).Run(context.Background(), c, nil)
	return rec.got[0].Resolved
}

// A request's sandbox tightens the server's: the result is the server's policy with the request's
// restrictions; a request that would loosen any field is refused naming it, nothing settled to run
// confined; without a sandbox anywhere nothing is set (the default path is unchanged).
func TestRequestSandboxTightens(t *testing.T) {
	off := sandbox.Policy{Mode: sandbox.ModeOff, Network: sandbox.NetworkOff, DenyRead: []string{"~/.ssh"}}
	for _, tc := range []struct {
		name    string
		floor   sandbox.Policy
		req     *sandbox.Policy
		want    *sandbox.Policy
		refused string
	}{
		{name: "off, no request", floor: off},
		{name: "off, request off", floor: off, req: &sandbox.Policy{Mode: sandbox.ModeOff}},
		{name: "off, request a mode", floor: off, req: &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite},
			want: &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOff, DenyRead: []string{"~/.ssh"}}},
		{name: "off, request with network on", floor: off,
			req:  &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOn, Writable: []string{"/x"}},
			want: &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOn, Writable: []string{"/x"}, DenyRead: []string{"~/.ssh"}}},
		{name: "floor, no request", floor: floorPolicy, want: &floorPolicy},
		{name: "floor, stricter mode and network, fewer paths", floor: floorPolicy,
			req: &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOff, Writable: []string{"~/proj/sub"},
				DenyRead: []string{"~/proj/secret"}},
			want: &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOff, Writable: []string{"~/proj/sub"},
				DenyRead: []string{"~/.ssh", "~/proj/secret"}, CacheDirs: []string{"~/.cache"}}},
		{name: "floor, loosen mode", floor: floorPolicy, req: &sandbox.Policy{Mode: sandbox.ModeOff},
			refused: "sandbox.mode off would loosen this server's workspace-write"},
		{name: "floor, loosen network", floor: sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOff},
			req: &sandbox.Policy{Network: sandbox.NetworkOn}, refused: "sandbox.network on would loosen this server's off"},
		{name: "floor, loosen writable", floor: floorPolicy, req: &sandbox.Policy{Writable: []string{"/etc"}},
			refused: "sandbox.writable: /etc is not within this server's writable"},
		{name: "unknown mode", floor: off, req: &sandbox.Policy{Mode: "strict"},
			refused: `sandbox.mode: want off, workspace-write or read-only, got "strict"`},
		{name: "off, request a network without a mode", floor: off, req: &sandbox.Policy{Network: sandbox.NetworkOff},
			refused: "sandbox: a network, writable, denyRead, cacheDirs or allowHosts setting confines nothing without a mode"},
		{name: "proxy, a bad entry", floor: floorPolicy, req: &sandbox.Policy{Network: sandbox.NetworkProxy, AllowHosts: []string{"a"}},
			refused: `sandbox.allowHosts: "a": want HOST:PORT`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := settle(t, tc.floor, request.Command{Command: "true", Sandbox: tc.req})
			if !strings.HasPrefix(got.Refused, tc.refused) || (tc.refused == "") != (got.Refused == "") {
				t.Errorf("refused %q, want %q", got.Refused, tc.refused)
			}
			if !reflect.DeepEqual(got.Sandbox, tc.want) {
				t.Errorf("sandbox %+v, want %+v", got.Sandbox, tc.want)
			}
		})
	}
}

// A task and a yielded run settle their sandbox as a run does.
func TestTaskSandbox(t *testing.T) {
	rec := &recorder{}
	s := New(Config{Timeout: 30, Sandbox: floorPolicy}, rec)
	s.Yield(context.Background(), request.Command{Command: "true", Sandbox: &sandbox.Policy{Mode: sandbox.ModeReadOnly}}, 1)
	s.Yield(context.Background(), request.Command{Command: "true", Sandbox: &sandbox.Policy{Mode: sandbox.ModeOff}}, 1)
	// The recorder has no tasks: each is refused for that, after its sandbox was settled.
	if len(rec.got) != 2 {
		t.Fatalf("%d commands", len(rec.got))
	}
	if p := rec.got[0].Resolved.Sandbox; p == nil || p.Mode != sandbox.ModeReadOnly {
		t.Errorf("yielded: sandbox %+v", p)
	}
	if p := rec.got[1].Resolved.Sandbox; p != nil {
		t.Errorf("yielded, loosening: sandbox %+v, want none", p)
	}
}

// A command settled by another agentbash meets this server's sandbox too: no sandbox sent takes this
// server's; a sent one looser than it is refused; a stricter one stays, with this server's denied paths
// added; a list the sender left out (empty, so left out of the JSON) stays empty rather than taking this
// server's; a server without a sandbox keeps the sent policy as it is.
func TestSettledCommandMeetsTheServersSandbox(t *testing.T) {
	base := request.Resolved{Protocol: request.Protocol, Command: "true", Run: "true", Head: -1, Tail: -1, Timeout: 7}
	for _, tc := range []struct {
		name    string
		floor   sandbox.Policy
		sent    *sandbox.Policy
		want    *sandbox.Policy
		refused string
	}{
		{name: "neither", floor: sandbox.Policy{Mode: sandbox.ModeOff}},
		{name: "none sent", floor: floorPolicy, want: &floorPolicy},
		{name: "sent, no floor", floor: sandbox.Policy{Mode: sandbox.ModeOff, DenyRead: []string{"~/.ssh"}},
			sent: &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn},
			want: &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn}},
		{name: "looser mode", floor: sandbox.Policy{Mode: sandbox.ModeReadOnly},
			sent: &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite}, refused: "sandbox.mode workspace-write would loosen"},
		{name: "looser writable", floor: floorPolicy,
			sent:    &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{"/"}},
			refused: "sandbox.writable: / is not within"},
		{name: "stricter", floor: floorPolicy,
			sent: &sandbox.Policy{Mode: sandbox.ModeReadOnly, DenyRead: []string{"~/.ssh", "~/.aws"}}, // ~/.ssh once
			want: &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOff, Writable: []string{},
				DenyRead: []string{"~/.ssh", "~/.aws"}, CacheDirs: []string{}, AllowHosts: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			s := New(Config{Timeout: 30, Sandbox: tc.floor}, rec)
			r := base
			r.Sandbox = tc.sent.Clone()
			s.Run(context.Background(), request.Command{Command: "true", Sandbox: &sandbox.Policy{Mode: sandbox.ModeOff},
				Resolved: &r}, nil)
			got := rec.got[0].Resolved
			if !strings.HasPrefix(got.Refused, tc.refused) || (tc.refused == "") != (got.Refused == "") {
				t.Errorf("refused %q, want %q", got.Refused, tc.refused)
			}
			if !reflect.DeepEqual(got.Sandbox, tc.want) {
				t.Errorf("sandbox %+v, want %+v", got.Sandbox, tc.want)
			}
			if !reflect.DeepEqual(r.Sandbox, tc.sent) {
				t.Error("the caller's Resolved was changed")
			}
		})
	}
}
