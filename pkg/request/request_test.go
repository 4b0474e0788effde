package request

import (
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

func TestClampTimeout(t *testing.T) {
	for _, tc := range []struct {
		in, want float64
		clamped  bool
	}{
		{300, 300, false}, {1, 1, false}, {3600, 3600, false}, {1.5, 1.5, false},
		{0, 1, true}, {-5, 1, true}, {0.5, 1, true}, {7200, 3600, true},
	} {
		got, clamped := ClampTimeout(tc.in)
		if got != tc.want || clamped != tc.clamped {
			t.Errorf("ClampTimeout(%v) = %v, %v; want %v, %v", tc.in, got, clamped, tc.want, tc.clamped)
		}
	}
}

// TestResolvedValidate: a settled half from another agentbash holds only values this agentbash's own
// service could have settled.
func TestResolvedValidate(t *testing.T) {
	ok := Resolved{Protocol: Protocol, Command: "x", Run: "x", Timeout: 1, KillGrace: 2, MaxBytes: 1, Head: -1,
		Tail: 3, NonZeroExit: "report"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid: %v", err)
	}
	sandboxed := ok
	sandboxed.Sandbox = &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Writable: []string{"~/x"}}
	if err := sandboxed.Validate(); err != nil {
		t.Fatalf("valid, sandboxed: %v", err)
	}
	for name, edit := range map[string]func(*Resolved){
		"protocol":      func(r *Resolved) { r.Protocol = 2 },
		"timeout":       func(r *Resolved) { r.Timeout = 99999 },
		"timeout, zero": func(r *Resolved) { r.Timeout = 0 },
		"killGrace":     func(r *Resolved) { r.KillGrace = 99999 },
		"maxBytes":      func(r *Resolved) { r.MaxBytes = -5 },
		"head":          func(r *Resolved) { r.Head = -2 },
		"nonZeroExit":   func(r *Resolved) { r.NonZeroExit = "bogus" },
		"command":       func(r *Resolved) { r.Run = "" },
		"task":          func(r *Resolved) { r.Task = &TaskOptions{Timeout: -1} },
		"sandbox.mode":  func(r *Resolved) { r.Sandbox = &sandbox.Policy{Mode: "strict"} },
		"sandbox.allowHosts, bad entry": func(r *Resolved) {
			r.Sandbox = &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkProxy, AllowHosts: []string{"github.com"}}
		},
	} {
		r := ok
		edit(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "resolved."+strings.SplitN(name, ",", 2)[0]) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
