package snapshot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The PATH the rc builds does not depend on the PATH of the run that happened to make the snapshot
// first (hostile test: `PATH=$HOME/bin:… agentbash run mytool`, then `PATH=/usr/bin:/bin agentbash run
// mytool` said `mytool: command not found`).
func TestSnapshotPathWhateverRunMadeIt(t *testing.T) {
	for _, c := range []struct{ name, rc string }{
		{"prepend", `export PATH="$HOME/bin:$PATH"`},
		{"append", `export PATH="$PATH:$HOME/bin"`},
		{"only when missing", `case ":$PATH:" in *":$HOME/bin:"*) ;; *) PATH=$HOME/bin:$PATH ;; esac`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options(t, c.rc+"\n")
			home := filepath.Dir(o.RCFile)
			os.MkdirAll(filepath.Join(home, "bin"), 0o700)
			os.WriteFile(filepath.Join(home, "bin", "mytool"), []byte("#!/bin/sh\necho MYTOOL\n"), 0o700)
			for _, inherited := range []string{home + "/bin:/usr/bin:/bin", "/usr/bin:/bin"} {
				o.Env = append(os.Environ(), "HOME="+home, "PATH="+inherited)
				path, warn := Ensure(context.Background(), o)
				if path == "" || warn != "" {
					t.Fatalf("Ensure = %q, %q", path, warn)
				}
				cmd := exec.Command("/bin/bash", "-c", "mytool")
				cmd.Env = []string{"PATH=" + inherited, "BASH_ENV=" + path}
				if out, _ := cmd.CombinedOutput(); string(out) != "MYTOOL\n" {
					t.Errorf("with PATH=%s after a snapshot made with another: %q", inherited, out)
				}
			}
		})
	}
}

func newMarker() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return "absnap" + hex.EncodeToString(b)
}

// liveMarked lists the live processes whose command line starts with m.
func liveMarked(m string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		stat, _ := os.ReadFile(d + "/stat")
		if err != nil || !strings.HasPrefix(string(b), m) {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// Nothing the rc starts outlives the making of the snapshot, when it succeeds or times out: a
// background job, a setsid escapee, a double fork (an orphan, as `eval $(ssh-agent)` leaves), a process
// that ignores SIGTERM (hostile test: a `setsid sleep 300 &` outlived the 2 s kill).
func TestSnapshotLeavesNothingRunning(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	for _, c := range []struct {
		name, rc string
		timeout  bool
	}{
		{"background job", `(exec -a M sleep 300) &`, false},
		{"setsid", `setsid bash -c 'exec -a M sleep 300' &`, false},
		{"double fork", `( setsid bash -c 'exec -a M sleep 300' & )`, false},
		{"ignores TERM", `( trap '' TERM; setsid bash -c "trap '' TERM; exec -a M sleep 300" & )`, false},
		{"setsid, then hangs", "setsid bash -c 'exec -a M sleep 300' &\nsleep 30", true},
		{"double fork, then hangs", "( setsid bash -c 'exec -a M sleep 300' & )\nexec sleep 30", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMarker()
			o := options(t, strings.ReplaceAll(c.rc, "exec -a M", "exec -a "+m)+"\nalias ok='echo ok'\n")
			o.Timeout = time.Second
			defer func() {
				for _, p := range liveMarked(m) {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}()
			path, warn := Ensure(context.Background(), o)
			if c.timeout != (path == "") || c.timeout != strings.Contains(warn, "timed out") {
				t.Fatalf("Ensure = %q, %q", path, warn)
			}
			var left []int
			// The kills were sent before Ensure returned; give the kernel a moment to finish them.
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if left = liveMarked(m); len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("processes the rc started outlived the snapshot: %v", left)
			}
		})
	}
}

// Any failure to make the snapshot is no snapshot and one warning, cached against the files (hostile
// test: an rc with `exec sh` or `exit 0` gave neither a snapshot nor a warning).
func TestSnapshotEveryFailureWarns(t *testing.T) {
	for _, rc := range []string{
		"exit 0", "exit 3", "exec sh", "exec true", "alias x=y\nkill -9 $$", "builtin exit 0",
		"readonly -f builtin 2>/dev/null; builtin() { :; }; readonly -f builtin",
	} {
		t.Run(rc, func(t *testing.T) {
			o := options(t, rc+"\n")
			path, warn := Ensure(context.Background(), o)
			if path != "" || !strings.HasPrefix(warn, "shell snapshot of "+o.RCFile+" failed: ") {
				t.Fatalf("Ensure = %q, %q; want no snapshot and a warning", path, warn)
			}
			if path, warn := Ensure(context.Background(), o); path != "" || warn != "" {
				t.Errorf("second Ensure = %q, %q; want the failure cached", path, warn)
			}
		})
	}
}

// Functions the rc defines under the names of builtins, traps and odd settings do not break the dump,
// and the snapshot itself defines none of those names, so it cannot break the loader or itself when it
// is sourced (hostile test: a function named `builtin` hijacked the loader and the snapshot).
func TestSnapshotBuiltinNamesCannotHijack(t *testing.T) {
	for _, rc := range []string{
		`builtin() { echo HIJACK; }`,
		`command() { echo HIJACK; }; eval() { echo HIJACK; }; declare() { echo HIJACK; }`,
		`unset() { echo HIJACK; }; set() { echo HIJACK; }; shopt() { echo HIJACK; }; printf() { echo HIJACK; }`,
		`alias() { echo HIJACK; }; export() { echo HIJACK; }; test() { echo HIJACK; }; read() { echo HIJACK; }`,
		`trap() { echo HIJACK; }; compgen() { echo HIJACK; }; mapfile() { echo HIJACK; }; exec() { echo HIJACK; }`,
		`trap 'echo HIJACK' DEBUG RETURN EXIT ERR`,
		`IFS=:`,
		`set -euo pipefail`,
	} {
		t.Run(rc, func(t *testing.T) {
			o := options(t, "mine() { echo mine; }\nalias al='echo al'\nexport PATH=/snap/bin:$PATH\n"+rc+"\n")
			path, warn := Ensure(context.Background(), o)
			if path == "" || warn != "" {
				t.Fatalf("Ensure = %q, %q", path, warn)
			}
			got := runWith(t, path, `mine; al; builtin echo b; command echo c; eval 'echo e'; case $PATH in /snap/bin:*) echo path;; esac`)
			if got != "mine\nal\nb\nc\ne\npath\n" {
				t.Errorf("got %q", got)
			}
			_, s, _ := strings.Cut(snapshotText(t, path), "\n") // the first line names the rc (and the test)
			if strings.Contains(s, "HIJACK") && !strings.HasPrefix(rc, "trap '") {
				t.Errorf("the snapshot defines a builtin's name:\n%s", s)
			}
		})
	}
}

// makeRC is an rc with n functions (each calling a `_` helper) and n aliases.
func makeRC(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "f%d() { _h%d \"$@\"; }\n_h%d() { echo %d; }\nalias a%d='echo %d'\n", i, i, i, i, i, i)
	}
	return b.String()
}

// The time to make a snapshot grows about linearly with the rc (it was quadratic in the number of
// aliases: each `${BASH_ALIASES[name]}` rebuilt the whole array).
func BenchmarkGenerate(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	for _, n := range []int{250, 1000, 2000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			rc := filepath.Join(dir, ".bashrc")
			os.WriteFile(rc, []byte(makeRC(n)), 0o600)
			o := Options{Shell: bash, RCFile: rc, Env: os.Environ(), Timeout: 30 * time.Second}
			for b.Loop() {
				if _, _, _, err := generate(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestAliasValue(t *testing.T) {
	for _, c := range []struct {
		name, line, want string
		ok               bool
	}{
		{"gs", "alias gs='git status'\n", "git status", true},
		{"q", `alias q='echo '\''hi'\'' "x"'` + "\n", `echo 'hi' "x"`, true},
		{"-x", "alias -- -x='ls -x'\n", "ls -x", true},
		{"p", "p='posix mode'\n", "posix mode", true},
		{"nl", "alias nl='a\nb'\n", "a\nb", true},
		{"e", "alias e=''\n", "", true},
		{"gs", "alias other='x'\n", "", false},
		{"gs", "alias gs=unquoted\n", "", false},
	} {
		if got, ok := aliasValue(c.name, c.line); got != c.want || ok != c.ok {
			t.Errorf("aliasValue(%q, %q) = %q, %v; want %q, %v", c.name, c.line, got, ok, c.want, c.ok)
		}
	}
}

// A dump must end with its end record, and nothing may follow it.
func TestParseDumpEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		want error // nil: parses; errIncomplete; or any other error (errOther)
	}{
		{"P\x00/bin\x00E\x00", nil},
		{"", errIncomplete},
		{"P\x00/bin\x00F\x00f\x00f () { :; }\x00", errIncomplete},
		{"P\x00/bin\x00E\x00P\x00/x\x00", errOther},
		{"X\x00E\x00", errOther},
		{"A\x00a\x00garbage\x00E\x00", errOther},
	} {
		_, err := parseDump([]byte(c.in))
		if c.want == errOther && (err == nil || err == errIncomplete) || c.want != errOther && err != c.want {
			t.Errorf("parseDump(%q) = %v; want %v", c.in, err, c.want)
		}
	}
}

var errOther = fmt.Errorf("another error")
