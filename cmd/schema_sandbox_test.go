package cmd

import (
	"encoding/json"
	"testing"

	"github.com/agentbash/agentbash/pkg/result"
)

// TestSchemaSandbox: details.sandbox as pkg/result writes it validates against the schema; one without what
// it must say (the mechanisms, at least one, each a known name) does not.
func TestSchemaSandbox(t *testing.T) {
	_, sch := loadSchema(t)
	sandboxed := func(s *result.Sandbox) any {
		r := result.Result{Content: []result.Content{{Type: "text", Text: "x"}}, Details: result.Details{
			Status: result.StatusExited, Command: "true", Cwd: "/", Shell: "/bin/sh", ExitCode: new(0),
			TimeoutSeconds: 300, Sandbox: s}}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	good := &result.Sandbox{Mode: "workspace-write", Network: "off", Enforced: []string{"landlock-fs", "userns", "seccomp"},
		Denied: []result.SandboxDenied{{Host: "example.com", Port: 443, Count: 2}}, Hint: "writable: /w, /tmp"}
	if err := sch.Validate(sandboxed(good)); err != nil {
		t.Errorf("a sandboxed result: %v", err)
	}
	for name, s := range map[string]*result.Sandbox{
		"no mechanism":      {Mode: "read-only", Network: "on", Enforced: []string{}},
		"unknown mechanism": {Mode: "read-only", Network: "on", Enforced: []string{"chroot"}},
		"mode off":          {Mode: "off", Network: "off", Enforced: []string{"seccomp"}},
		"unknown network":   {Mode: "read-only", Network: "some", Enforced: []string{"seccomp"}},
	} {
		if err := sch.Validate(sandboxed(s)); err == nil {
			t.Errorf("%s: validates", name)
		}
	}
}
