//go:build linux

package server

import (
	"os"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/internal/asuser"
)

// The proxy serves as whoever runs the supervisor: its tests again as uid 65534 (CI runs as root), the
// refusals, wildcards, rebinding and lifetime among them.
func TestAsUser(t *testing.T) {
	if os.Getuid() != 0 || asuser.Again() {
		t.Skip("runs the proxy's tests as uid 65534 when root")
	}
	const run = "^Test(ForwardAllowedAndDenied|Connect|KeepAlive|ResolvedOnceDialledAsResolved|WildcardNotToTheHostsOwn|" +
		"Close|MaxDenied|UnspecifiedLiteralNeverDialled|WildcardNotToTheMachinesOwn|RunsAsUser)$"
	out, err := asuser.Run(t, run)
	if err != nil || strings.Count(out, "--- PASS") != 10 {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// TestRunsAsUser holds only where TestAsUser runs the tests: as uid 65534.
func TestRunsAsUser(t *testing.T) {
	if !asuser.Again() {
		t.Skip("TestAsUser runs it")
	}
	if os.Getuid() != 65534 {
		t.Errorf("uid %d", os.Getuid())
	}
}
