//go:build linux

package proxy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The proxy serves as whoever runs the supervisor: its tests again as uid 65534 (CI runs as root), the
// refusals, wildcards, rebinding and lifetime among them.
func TestAsUser(t *testing.T) {
	if os.Getuid() != 0 || os.Getenv("AB_PROXY_AS_USER") == "1" {
		t.Skip("runs the proxy's tests as uid 65534 when root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv(1)")
	}
	dir, err := os.MkdirTemp("", "abproxy")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "proxy.test")
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatal(err)
	}
	const run = "^Test(ForwardAllowedAndDenied|Connect|KeepAlive|ResolvedOnceDialledAsResolved|WildcardNotToTheHostsOwn|" +
		"Close|MaxDenied|UnspecifiedLiteralNeverDialled|WildcardNotToTheMachinesOwn|RunsAsUser)$"
	cmd := exec.Command("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", bin, "-test.run="+run, "-test.v")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "AB_PROXY_AS_USER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS") != 10 {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// TestRunsAsUser holds only where TestAsUser runs the tests: as uid 65534.
func TestRunsAsUser(t *testing.T) {
	if os.Getenv("AB_PROXY_AS_USER") != "1" {
		t.Skip("TestAsUser runs it")
	}
	if os.Getuid() != 65534 {
		t.Errorf("uid %d", os.Getuid())
	}
}
