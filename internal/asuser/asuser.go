// Package asuser runs a test binary's tests again as an ordinary user (uid 65534), for packages whose
// guarantees must hold for a user too while CI runs as root (docs/architecture.md, "The sandbox").
package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Env is set to "1" in the environment of the tests Run starts: a test that calls Run skips itself there.
const Env = "AB_AS_USER"

// Again says whether this process is the run as a user that Run started.
func Again() bool { return os.Getenv(Env) == "1" }

// Run runs this test binary's tests matching run as uid 65534 (a copy in a directory that user can read),
// with setpriv's further options, and returns their verbose output. It skips t when setpriv(1) is missing.
func Run(t *testing.T, run string, setpriv ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv(1)")
	}
	dir, err := os.MkdirTemp("", "abasuser")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, filepath.Base(os.Args[0]))
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil || os.Chmod(dir, 0o755) != nil {
		t.Fatal(err)
	}
	args := append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups"}, setpriv...)
	cmd := exec.Command("setpriv", append(args, bin, "-test.run="+run, "-test.v")...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), Env+"=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
