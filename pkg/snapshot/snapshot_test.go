package snapshot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func options(t *testing.T, rc string) Options {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	rcFile := filepath.Join(dir, ".bashrc")
	if rc != "" {
		os.WriteFile(rcFile, []byte(rc), 0o600)
	}
	return Options{Shell: bash, RCFile: rcFile, CacheDir: filepath.Join(dir, "cache"), Env: os.Environ()}
}

func runWith(t *testing.T, snap, command string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Env = append(os.Environ(), "BASH_ENV="+snap)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func TestSnapshotAliasesFunctionsOptions(t *testing.T) {
	o := options(t, `case $- in *i*) ;; *) return;; esac
alias gs='echo GS'
alias ls='echo HIJACKED'
greet() { echo "hello $1"; }
_private() { :; }
shopt -s globstar
export SECRET_TOKEN=abc
echo noise from bashrc
`)
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	b, _ := os.ReadFile(path)
	s := string(b)
	for _, bad := range []string{"HIJACKED", "_private", "SECRET_TOKEN", "noise"} {
		if strings.Contains(s, bad) {
			t.Errorf("snapshot holds %q:\n%s", bad, s)
		}
	}
	got := runWith(t, path, "gs\ngreet you\nshopt -q globstar && echo globstar\necho \"[$BASH_ENV]\"\nls /nonexistent-x 2>/dev/null || echo real-ls")
	want := "GS\nhello you\nglobstar\n[]\nreal-ls\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSnapshotNoRCFile(t *testing.T) {
	o := options(t, "")
	if path, warn := Ensure(context.Background(), o); path != "" || warn != "" {
		t.Errorf("Ensure = %q, %q; want nothing", path, warn)
	}
	if fileExists(o.CacheDir) {
		t.Errorf("cache dir created without an rc file")
	}
}

func TestSnapshotSlowRCIsBoundedAndCached(t *testing.T) {
	o := options(t, "alias x='echo x'\nsleep 30\n")
	o.Timeout = 300 * time.Millisecond
	start := time.Now()
	path, warn := Ensure(context.Background(), o)
	if path != "" || !strings.Contains(warn, "timed out") {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	// Cached: the second call does not run the rc again.
	start = time.Now()
	path, warn = Ensure(context.Background(), o)
	if path != "" || warn != "" || time.Since(start) > 200*time.Millisecond {
		t.Errorf("second Ensure = %q, %q after %v", path, warn, time.Since(start))
	}
	// Fixing the rc refreshes the cache.
	os.WriteFile(o.RCFile, []byte("alias x='echo fixed'\n"), 0o600)
	path, warn = Ensure(context.Background(), o)
	if path == "" || warn != "" || runWith(t, path, "x") != "fixed\n" {
		t.Errorf("after fix: %q, %q", path, warn)
	}
}

// A cancel while the snapshot is made is not a failure of the rc file: it is not cached (hostile test).
func TestSnapshotCancelIsNotCached(t *testing.T) {
	o := options(t, "sleep 1\nalias zz='echo zz'\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if path, warn := Ensure(ctx, o); path != "" || warn != "" {
		t.Errorf("cancelled Ensure = %q, %q", path, warn)
	}
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" || runWith(t, path, "zz") != "zz\n" {
		t.Errorf("after cancel: %q, %q", path, warn)
	}
}
