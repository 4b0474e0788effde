package target

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// TestSandboxTravels: the policy a command was settled with goes to the target in its resolved half (the
// far side's service makes it meet its own, pkg/service); what the far side says of its sandbox comes
// back, its text sanitized as all its text is.
func TestSandboxTravels(t *testing.T) {
	sent := filepath.Join(t.TempDir(), "sent")
	uri := fake(t, `read l; echo '{"id":0,"type":"response","success":true,"data":{"protocol":1,"version":"dev"}}'
read l; printf '%s\n' "$l" > `+sent+`
printf '%s\n' '{"id":1,"type":"response","success":true,"data":{"content":[{"type":"text","text":"x"}],"details":{"status":"exited","exitCode":0,`+
		`"sandbox":{"mode":"read-only","network":"off","enforced":["landlock-fs","seccomp"],"hint":"\u001b[31mwritable: /w",`+
		`"denied":[{"host":"\u001b]0;x\u0007evil.example","port":443,"count":2}]}}},"parts":{"output":"x","footer":[]}}'`)
	c := command("true")
	c.Resolved.Sandbox = &sandbox.Policy{Mode: sandbox.ModeReadOnly, Network: sandbox.NetworkOff, DenyRead: []string{"~/.ssh"}}
	r := open(t, uri).Run(ctx(t), c, nil)

	b, err := os.ReadFile(sent)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Resolved *request.Resolved `json:"resolved"`
	}
	if err := json.Unmarshal(b, &line); err != nil || line.Resolved == nil || line.Resolved.Validate() != nil {
		t.Fatalf("sent %s: %v", b, err)
	}
	if p := line.Resolved.Sandbox; p == nil || p.Mode != sandbox.ModeReadOnly || !slices.Equal(p.DenyRead, []string{"~/.ssh"}) {
		t.Errorf("sent sandbox %+v", p)
	}
	want := result.Sandbox{Mode: "read-only", Network: "off", Enforced: []string{"landlock-fs", "seccomp"}, Hint: "writable: /w",
		Denied: []result.SandboxDenied{{Host: "evil.example", Port: 443, Count: 2}}}
	if s := r.Details.Sandbox; s == nil || s.Hint != want.Hint || !slices.Equal(s.Denied, want.Denied) ||
		!slices.Equal(s.Enforced, want.Enforced) || s.Mode != want.Mode {
		t.Errorf("details.sandbox %+v, want %+v", s, want)
	}
}
