//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	// The probe re-executes the test binary as __sandbox-probe: pkg/reexec's init takes that process.
	"github.com/agentbash/agentbash/internal/asuser"
	_ "github.com/agentbash/agentbash/pkg/reexec"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// The probe agrees with the system: a user namespace can be made exactly when `unshare -U true` can make one,
// and then a policy needing namespaces misses nothing namespace-wise.
func TestProbeAgreesWithUnshare(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1) to compare with")
	}
	a, userns := sandbox.Probe(), sandbox.ProbeUserNS()
	sys := exec.Command("unshare", "-U", "true").Run()
	if (userns == nil) != (sys == nil) {
		t.Fatalf("probe says %v, unshare -U says %v", userns, sys)
	}
	t.Logf("Landlock ABI %d (%v), seccomp %v, userns %v", a.LandlockABI, a.LandlockErr, a.SeccompErr, userns)
}

// Fail closed: in a process refused user namespaces (a user namespace whose max_user_namespaces is 0), the
// probe says so, a stage needing them does not start (userns, with the fix in words) and runs nothing, while
// a writes-only policy misses nothing the kernel has and runs.
func TestProbeRefusedUserNS(t *testing.T) {
	if os.Getenv("AB_PROBE_CHILD") == "1" {
		a, userns := sandbox.Probe(), sandbox.ProbeUserNS()
		w, _ := a.Missing(sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn}.Needs())
		dir := t.TempDir()
		marker := filepath.Join(dir, "ran")
		out, err := stageRun(t, sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite}, dir, "touch "+marker+"; echo RAN")
		_, ranErr := os.Stat(marker)
		fmt.Printf("userns=%v start=%q out=%q ran=%v writesOnlyMissing=%q landlock=%d\n", userns != nil, err, out,
			ranErr == nil, w, a.LandlockABI)
		return
	}
	if exec.Command("unshare", "-Ur", "true").Run() != nil {
		t.Skip("this process cannot make the user namespace the refusal is set up in")
	}
	cmd := exec.Command("unshare", "-Ur", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -test.run='^TestProbeRefusedUserNS$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "AB_PROBE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, `userns=true start="Sandbox unavailable: userns: a user namespace cannot be made here`) ||
		!strings.Contains(s, "apparmor_restrict_unprivileged_userns") || !strings.Contains(s, "ran=false") ||
		strings.Contains(s, "RAN") {
		t.Errorf("under a refusal: %s", s)
	}
	if strings.Contains(s, "landlock=0") == strings.Contains(s, `writesOnlyMissing=""`) {
		t.Errorf("writes-only should miss nothing when Landlock is there: %s", s)
	}
}

// The probe tests again as an ordinary user (CI runs as root): the test binary under setpriv --reuid 65534.
func TestProbeAsUser(t *testing.T) {
	if os.Getuid() != 0 || asuser.Again() {
		t.Skip("runs the other probe tests as uid 65534 when root")
	}
	out, err := asUser(t, "^TestProbe(AgreesWithUnshare|RefusedUserNS)$")
	if err != nil || strings.Count(out, "--- PASS") != 2 {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// asUser runs this test binary's tests matching run as uid 65534 (internal/asuser).
func asUser(t *testing.T, run string, setpriv ...string) (string, error) {
	t.Helper()
	return asuser.Run(t, run, setpriv...)
}
