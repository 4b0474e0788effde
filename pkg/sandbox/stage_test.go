package sandbox_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

// runStage runs the test binary as the sandbox stage with spec on descriptor 3 and returns its output.
func runStage(t *testing.T, spec sandbox.StageSpec) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/proc/self/exe", sandbox.StageCommand)
	cmd.ExtraFiles = []*os.File{r}
	b, _ := json.Marshal(spec)
	go func() { w.Write(b); w.Close() }()
	out, err := cmd.CombinedOutput()
	r.Close()
	return string(out), err
}

// The writes-only level (stage 2 alone): writes only under the writable set, rm and chmod included; no
// capabilities, also for root; no new namespaces; no signal to a process outside. As root and, through
// TestStageAsUser, as uid 65534.
func TestStageConfinesWrites(t *testing.T) {
	if sandbox.Probe().LandlockABI < 6 {
		t.Skip("this kernel has no Landlock ABI 6: the stage refuses (TestStageFailsClosed)")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	w, out := filepath.Join(dir, "w"), filepath.Join(dir, "out")
	for _, d := range []string{w, out} {
		os.Mkdir(d, 0o777)
		os.Chmod(d, 0o777)
	}
	os.WriteFile(filepath.Join(out, "keep"), []byte("x"), 0o666)
	script := `touch w/a; touch out/b; rm -f out/keep; echo "rm=$?"; grep CapEff /proc/self/status; ` +
		`unshare -U true 2>/dev/null; echo "userns=$?"; kill -0 ` + strconv.Itoa(os.Getpid()) + ` 2>/dev/null; echo "kill=$?"`
	got, err := runStage(t, sandbox.StageSpec{Writable: []string{w}, Argv: []string{"sh", "-c", "cd " + dir + " && " + script},
		Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	_, errA := os.Stat(filepath.Join(w, "a"))
	_, errB := os.Stat(filepath.Join(out, "b"))
	_, errKeep := os.Stat(filepath.Join(out, "keep"))
	if errA != nil || errB == nil || errKeep != nil || !strings.Contains(got, "rm=1") ||
		!strings.Contains(got, "CapEff:\t0000000000000000") || strings.Contains(got, "userns=0") ||
		strings.Contains(got, "kill=0") {
		t.Errorf("a %v, b %v, keep %v, output:\n%s", errA, errB, errKeep, got)
	}
}

// A stage that cannot confine runs nothing: exit 125 and the reason.
func TestStageFailsClosed(t *testing.T) {
	got, err := runStage(t, sandbox.StageSpec{Writable: []string{"/nonexistent/dir"}, Argv: []string{"sh", "-c", "echo RAN"}})
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || strings.Contains(got, "RAN") ||
		!strings.HasPrefix(got, "Sandbox unavailable: ") {
		t.Errorf("%v: %q", err, got)
	}
}

// The stage tests again as an ordinary user (CI runs as root).
func TestStageAsUser(t *testing.T) {
	if os.Getuid() != 0 || os.Getenv("AB_PROBE_AS_USER") == "1" {
		t.Skip("runs the stage tests as uid 65534 when root")
	}
	out, err := asUser(t, "^TestStage(ConfinesWrites|FailsClosed)$")
	if err != nil || strings.Count(out, "--- PASS") != 2 {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// A user's process that holds a capability (ambient, as setpriv --ambient-caps gives it) execs the command
// with none all the same.
func TestStageDropsAmbientCapabilities(t *testing.T) {
	if os.Getuid() != 0 || os.Getenv("AB_PROBE_AS_USER") == "1" {
		t.Skip("needs root to give uid 65534 an ambient capability")
	}
	out, err := asUser(t, "^TestStageConfinesWrites$", "--inh-caps=+net_raw", "--ambient-caps=+net_raw")
	if err != nil || strings.Count(out, "--- PASS") != 1 {
		t.Errorf("as uid 65534 with CAP_NET_RAW ambient: %v\n%s", err, out)
	}
}
