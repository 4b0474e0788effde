package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shell runs command in session name of s as the pipeline does: the session's cwd (unless dir is
// given), BASH_ENV naming the prelude, then Commit when the shell exited (not died of a signal).
func shell(t *testing.T, s Store, name, command string, p Prelude, dir string) (out string, finalCwd string, kept bool, warning string) {
	t.Helper()
	l, err := s.Acquire(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	p.Capture = true
	path, err := l.Prelude(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "--", command)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = l.Cwd
	}
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Env = append(os.Environ(), "PWD="+cmd.Dir)
	cmd.Env = append(cmd.Env, p.Env...)
	cmd.Env = append(cmd.Env, "BASH_ENV="+path)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	exited := err == nil || errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Exited()
	finalCwd, kept, warning, err = l.Commit(exited)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), finalCwd, kept, warning
}

func newStore(t *testing.T) Store {
	t.Setenv("FOO", "")
	os.Unsetenv("FOO")
	return Store{Dir: filepath.Join(t.TempDir(), "sessions")}
}

// Each case sets something in one command and reads it back in the next (reference §7.1: what carries over).
func TestStateCarriesOver(t *testing.T) {
	weird := filepath.Join(t.TempDir(), "a dir with\nnewline and 'quotes'")
	if err := os.Mkdir(weird, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AB_INHERITED", "from-env")
	t.Setenv("AB_INHERITED2", "exported")
	cases := []struct {
		name, set, get, want string
	}{
		{"scalar", `x=1`, `echo "$x"`, "1"},
		{"exported stays exported", `export FOO=bar`, `bash -c 'echo $FOO'`, "bar"},
		{"not exported stays unexported", `y=2`, `echo "$y"; bash -c 'echo "[${y-unset}]"'`, "2\n[unset]"},
		{"newlines quotes unicode", `v=$'line1\nli"ne2 \'q\' $HOME \\ é ✓'`, `printf '%s' "$v"`, "line1\nli\"ne2 'q' $HOME \\ é ✓"},
		{"indexed array", `a=(one "two three" $'fo\nur'); a[7]=seven`, `declare -p a`,
			`declare -a a=([0]="one" [1]="two three" [2]=$'fo\nur' [7]="seven")`},
		{"assoc array", `declare -A m=([k]=v ["sp ace"]=w)`, `echo "${m[k]} ${m[sp ace]}"`, "v w"},
		{"integer", `declare -i n=2; n+=3`, `n+=1; echo $n`, "6"},
		{"readonly", `readonly R=fixed`, `echo $R; (R=other) 2>/dev/null; echo $R`, "fixed\nfixed"},
		{"unset inherited", `unset AB_INHERITED`, `echo "[${AB_INHERITED-unset}]"`, "[unset]"},
		{"export -n inherited", `export -n AB_INHERITED2`, `bash -c 'echo "[${AB_INHERITED2-unset}]"'`, "[unset]"},
		{"function", `f() { echo "f:$1"; }`, `f x`, "f:x"},
		{"exported function", `g() { echo g; }; export -f g`, `bash -c g`, "g"},
		{"function named like a builtin", `cd() { builtin cd "$@" && echo "in $PWD"; }`, `cd /`, "in /"},
		{"alias", `alias ll='echo LL'`, `ll`, "LL"},
		{"shopt", `shopt -s extglob nullglob`, `shopt -q extglob && shopt -q nullglob && echo on`, "on"},
		{"shopt off", `shopt -u checkwinsize`, `shopt -q checkwinsize || echo off`, "off"},
		{"extglob function", "shopt -s extglob\nh() { case $1 in @(a|b)) echo ab;; esac; }", `h b`, "ab"},
		{"set -o", `set -o pipefail -o noclobber`, `[[ -o noclobber && -o pipefail ]] && echo on`, "on"},
		{"set +o", `set +o braceexpand`, `echo {a,b}`, "{a,b}"},
		{"errexit is the command's own", `set -e`, `false; echo reached`, "reached"},
		{"nounset is the command's own", `set -u`, `echo "[$nope]"; echo reached`, "[]\nreached"},
		{"errexit is the command's own, other options carry", `set -e -o pipefail`, `false | true; echo "$?"`, "1"},
		{"umask", `umask 027`, `umask`, "0027"},
		{"cwd", `cd /tmp`, `pwd`, "/tmp"},
		{"cwd with spaces and newline", `cd ` + quote(weird), `pwd`, weird},
		{"OLDPWD", `cd / && cd /tmp`, `cd - >/dev/null; pwd`, "/"},
		{"IFS", `IFS=:`, `x="a:b"; set -- $x; echo $#`, "2"},
		{"PATH", `PATH=/nonexistent:$PATH`, `echo "${PATH%%:*}"`, "/nonexistent"},
		{"unset of what bash gives itself", `unset IFS PS4 OPTERR OPTIND SHELL`,
			`echo "[${IFS-u}${PS4-u}${OPTERR-u}${OPTIND-u}${SHELL-u}]"`, "[uuuuu]"},
		{"exit status kept", `export FOO=e; exit 3`, `echo $FOO`, "e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if out, _, kept, w := shell(t, s, "s", c.set, Prelude{}, ""); !kept || w != "" {
				t.Fatalf("set: kept %v, warning %q, output %q", kept, w, out)
			}
			out, _, _, _ := shell(t, s, "s", c.get, Prelude{}, "")
			if got := strings.TrimSuffix(out, "\n"); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// unsetenv unsets each variable for the rest of the test (restored after it).
func unsetenv(t *testing.T, names ...string) {
	for _, n := range names {
		t.Setenv(n, "")
		os.Unsetenv(n)
	}
}

// Variables bash gives itself at start (SHELL, TERM, PATH when the environment lacks them; IFS, OPTIND …
// always; OLDPWD exported without a value) are not kept unless a command changed them: a session begun without TERM must not hold bash's
// TERM=dumb over the TERM of a later command's environment (CI found SHELL kept when it was unset).
func TestStartupVariablesNotKept(t *testing.T) {
	s := newStore(t)
	unsetenv(t, "SHELL", "TERM", "OLDPWD")
	shell(t, s, "s", `true`, Prelude{}, "")
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.state.Vars) != 0 || len(l.state.Unset) != 0 {
		t.Errorf("kept %+v, unset %v", l.state.Vars, l.state.Unset)
	}
	l.Release()
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("SHELL", "/bin/bash")
	if out, _, _, _ := shell(t, s, "s", `echo "$TERM"; bash -c 'echo "$TERM"'`, Prelude{}, ""); out != "xterm-256color\nxterm-256color\n" {
		t.Errorf("TERM of the later environment: %q", out)
	}

	// An OLDPWD from the environment that is not a directory: bash declares it exported without a value,
	// as it does when there is none.
	for _, oldpwd := range []string{"/nonexistent", ""} {
		s = newStore(t)
		t.Setenv("OLDPWD", oldpwd)
		shell(t, s, "s", `true`, Prelude{}, "")
		l, err := s.Acquire(context.Background(), "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.state.Vars) != 0 || len(l.state.Unset) != 0 {
			t.Errorf("OLDPWD=%q: kept %+v, unset %v", oldpwd, l.state.Vars, l.state.Unset)
		}
		l.Release()
	}
	unsetenv(t, "OLDPWD")

	// A command that unsets or rewrites the record of their values does not make them all kept.
	s = newStore(t)
	unsetenv(t, "SHELL", "TERM")
	shell(t, s, "s", `unset __agentbash_i; __agentbash_i=(TERM=x); f() { local __agentbash_i; exit 0; }; f`, Prelude{}, "")
	l, err = s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.state.Vars) != 0 || len(l.state.Unset) != 0 {
		t.Errorf("__agentbash_i changed: kept %+v, unset %v", l.state.Vars, l.state.Unset)
	}
	l.Release()

	// Given another attribute, the value bash gave is kept with it.
	s = newStore(t)
	shell(t, s, "s", `readonly SHELL; declare -l TERM`, Prelude{}, "")
	t.Setenv("SHELL", "/bin/other")
	if out, _, _, _ := shell(t, s, "s", `declare -p SHELL TERM`, Prelude{}, ""); !strings.Contains(out, "declare -r SHELL=") || !strings.Contains(out, "declare -l TERM=") {
		t.Errorf("readonly SHELL, declare -l TERM: %q", out)
	}
	unsetenv(t, "SHELL")
	t.Setenv("TERM", "xterm-256color")

	// Changed by a command, they are kept as any variable.
	s = newStore(t)
	unsetenv(t, "SHELL")
	shell(t, s, "s", `SHELL=/bin/zsh`, Prelude{}, "")
	t.Setenv("SHELL", "/bin/bash")
	if out, _, _, _ := shell(t, s, "s", `echo "$SHELL"`, Prelude{}, ""); out != "/bin/zsh\n" {
		t.Errorf("SHELL set by a command: %q", out)
	}
	s = newStore(t)
	shell(t, s, "s", `export -n TERM`, Prelude{}, "")
	if out, _, _, _ := shell(t, s, "s", `echo "$TERM"; printenv TERM || echo unexported`, Prelude{}, ""); out != "xterm-256color\nunexported\n" {
		t.Errorf("export -n TERM: %q", out)
	}
}

// What a session never keeps: bash's own dynamic variables, traps, agentbash's per-run variables.
func TestNotKept(t *testing.T) {
	s := newStore(t)
	shell(t, s, "s", `trap 'echo trapped' INT; RANDOM=5; SECONDS=100; x=1`, Prelude{}, "")
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, v := range l.state.Vars {
		switch v.Name {
		case "RANDOM", "SECONDS", "BASHPID", "PPID", "SHELLOPTS", "BASH_ENV", "PWD", "SHLVL", "_", "LINENO", "IFS", "OPTIND", "PS4":
			t.Errorf("kept %s: %s", v.Name, v.Declare)
		}
	}
	l.Release()
	// A second command keeps nothing more: restoring the state sets no variable of its own (such as
	// BASH_COMPAT, which restoring the compatNN options would set).
	shell(t, s, "s", `true`, Prelude{}, "")
	if l, err = s.Acquire(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if len(l.state.Vars) != 1 || l.state.Vars[0].Name != "x" {
		t.Errorf("vars: %+v", l.state.Vars)
	}
	if strings.Contains(l.state.body(), "trap") {
		t.Errorf("a trap is kept:\n%s", l.state.body())
	}
}

// The command's line numbers are those of a run without a session (the prelude is BASH_ENV's, not the
// command's), and nothing of the prelude or the dump shows in its output, xtrace on or not.
func TestCommandUnchanged(t *testing.T) {
	s := newStore(t)
	shell(t, s, "s", `set -x; f() { :; }; alias a=b; X=1`, Prelude{}, "")
	out, _, kept, _ := shell(t, s, "s", "echo $LINENO\n\nnosuchcommand_ab\necho $LINENO", Prelude{}, "")
	want := "+ echo 1\n1\n+ nosuchcommand_ab\nbash: line 3: nosuchcommand_ab: command not found\n+ echo 4\n4\n"
	if out != want || !kept {
		t.Errorf("got %q (kept %v), want %q", out, kept, want)
	}
}

// A command that defines functions named like the builtins the prelude and the dump use, aliases named
// like keywords, a DEBUG trap and set -euo pipefail still has its state kept, and the next command works.
func TestHostileCommand(t *testing.T) {
	s := newStore(t)
	set := `set -euo pipefail; shopt -s expand_aliases nocasematch
builtin() { echo HIJACK-builtin; }; printf() { echo HIJACK-printf; }; declare() { echo HIJACK-declare; }
read() { echo HIJACK-read; }; umask() { echo HIJACK-umask; }; shopt() { echo HIJACK-shopt; }
alias if=echo for=echo while=echo case=echo
trap 'echo DEBUG' DEBUG
export KEEP=yes`
	out, _, kept, w := shell(t, s, "s", set, Prelude{}, "")
	if !kept || w != "" || strings.Contains(out, "HIJACK") || strings.Count(out, "DEBUG") > 3 {
		t.Fatalf("kept %v, warning %q, output %q", kept, w, out)
	}
	out, _, kept, _ = shell(t, s, "s", `unalias if for while case; unset -f printf declare read; echo "$KEEP"`, Prelude{}, "")
	if !kept || !strings.HasSuffix(out, "yes\n") || strings.Contains(out, "HIJACK") {
		t.Errorf("kept %v, output %q", kept, out)
	}
}

// A command that ends without the EXIT trap (exec, its own EXIT trap) keeps nothing and says so; a shell
// killed by a signal keeps nothing (its state is not committed).
func TestNotSaved(t *testing.T) {
	for _, c := range []string{`export FOO=new; exec true`, `export FOO=new; trap 'true' EXIT`} {
		s := newStore(t)
		shell(t, s, "s", `export FOO=old`, Prelude{}, "")
		_, _, kept, w := shell(t, s, "s", c, Prelude{}, "")
		if kept || !strings.Contains(w, "EXIT trap") {
			t.Errorf("%s: kept %v, warning %q", c, kept, w)
		}
		out, _, _, _ := shell(t, s, "s", `echo $FOO`, Prelude{}, "")
		if out != "old\n" {
			t.Errorf("%s: next command sees %q", c, out)
		}
	}
	s := newStore(t)
	shell(t, s, "s", `export FOO=old`, Prelude{}, "")
	if _, _, kept, _ := shell(t, s, "s", `export FOO=new; kill -9 $$`, Prelude{}, ""); kept {
		t.Error("a killed shell's state was kept")
	}
	if out, _, _, _ := shell(t, s, "s", `echo $FOO`, Prelude{}, ""); out != "old\n" {
		t.Errorf("after a kill: %q", out)
	}
}

// The request's explicit environment wins over the session's value for that command, and a command that
// leaves it as given does not make it the session's: for any variable, those bash gives itself at start
// included (an explicit TERM or PATH for one command once dropped the session's own).
func TestExplicitEnvWins(t *testing.T) {
	for _, name := range []string{"FOO", "TERM", "PATH", "SHELL", "IFS", "OPTIND", "PS4"} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			unsetenv(t, "SHELL", "TERM")
			session, explicit, changed := "/session", "/explicit", "/changed"
			switch name {
			case "PATH":
				session, explicit, changed = os.Getenv("PATH")+":/session", os.Getenv("PATH")+":/explicit", os.Getenv("PATH")+":/changed"
			case "OPTIND":
				session, explicit, changed = "7", "8", "9"
			}
			get := `printf '%s\n' "$` + name + `"`
			shell(t, s, "s", `export `+name+`=`+session, Prelude{}, "")
			out, _, _, _ := shell(t, s, "s", get, Prelude{Env: []string{name + "=" + explicit}}, "")
			if out != explicit+"\n" {
				t.Errorf("explicit: %q", out)
			}
			if out, _, _, _ := shell(t, s, "s", get, Prelude{}, ""); out != session+"\n" {
				t.Errorf("after: %q", out)
			}
			shell(t, s, "s", name+`=`+changed, Prelude{Env: []string{name + "=" + explicit}}, "")
			if out, _, _, _ := shell(t, s, "s", get, Prelude{}, ""); out != changed+"\n" {
				t.Errorf("changed by the command: %q", out)
			}
		})
	}
}

// An explicit cwd wins, and the session's cwd becomes where the command ended.
func TestExplicitCwd(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	shell(t, s, "s", `cd /tmp`, Prelude{}, "")
	if out, cwd, _, _ := shell(t, s, "s", `pwd`, Prelude{}, dir); out != dir+"\n" || cwd != dir {
		t.Errorf("got %q, final %q", out, cwd)
	}
	if out, _, _, _ := shell(t, s, "s", `pwd`, Prelude{}, ""); out != dir+"\n" {
		t.Errorf("next: %q", out)
	}
}

// State files are private; a task's prelude empties itself once read.
func TestFilesPrivate(t *testing.T) {
	s := newStore(t)
	shell(t, s, "s", `export SECRET=x`, Prelude{}, "")
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	task, err := l.Prelude(Prelude{Env: []string{"TOKEN=t"}})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if out, err := exec.Command("bash", "-c", `echo "$SECRET $TOKEN"`).CombinedOutput(); err != nil {
		t.Fatal(err)
	} else if string(out) != " \n" {
		t.Fatalf("without BASH_ENV: %q", out)
	}
	cmd := exec.Command("bash", "-c", `echo "$SECRET $TOKEN"`)
	cmd.Env = append(os.Environ(), "BASH_ENV="+task)
	if out, _ := cmd.CombinedOutput(); string(out) != "x t\n" {
		t.Errorf("task: %q", out)
	}
	if b, _ := os.ReadFile(task); len(b) != 0 {
		t.Errorf("the task's prelude was not emptied: %q", b)
	}
	err = filepath.Walk(s.Dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v", p, info.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestValid(t *testing.T) {
	for _, n := range []string{"a", "A-1", "x.y_z", "0", strings.Repeat("n", 64)} {
		if !Valid(n) {
			t.Errorf("%q is a name", n)
		}
	}
	for _, n := range []string{"", ".", "..", "../x", "a/b", "/etc", ".x", "-x", "a b", "é", "semi;colon", strings.Repeat("n", 65), "a\n"} {
		if Valid(n) {
			t.Errorf("%q is not a name", n)
		}
	}
}

// Acquire waits for the running command, in order, and a cancel ends the wait.
func TestAcquireWaitsInOrder(t *testing.T) {
	s := newStore(t)
	first, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	// The order is recorded as each waiter gets the lock, and every release is over before the part
	// below (a release of this stateless session removes its directory).
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	tickets := make([]*ticket, 3)
	cancelled := make(chan int, len(tickets))
	for i := range tickets {
		if tickets[i], err = s.enqueue("s"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	for i, tk := range tickets {
		c := context.Background()
		if i == 1 {
			c = ctx
		}
		wg.Go(func() {
			l, err := tk.Acquire(c)
			if err != nil {
				cancelled <- i
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Release()
		})
	}
	cancel()
	if got := <-cancelled; got != 1 {
		t.Fatalf("the cancelled waiter: %d", got)
	}
	first.Release()
	wg.Wait()
	if len(order) != 2 || order[0] != 0 || order[1] != 2 {
		t.Errorf("order %v", order)
	}
	// Across processes (a flock taken by another open file): a cancel ends the wait too. (The session kept
	// no state, so its last release removed it: the other process makes the lock file, as lock does.)
	if err := os.MkdirAll(filepath.Join(s.Dir, "s"), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "s", lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("held by another: %v", err)
	}
}

func TestListShowRemove(t *testing.T) {
	s := newStore(t)
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("empty store: %v %v", l, err)
	}
	shell(t, s, "b", `cd /tmp; export SECRET=s3cr3t; f() { :; }; alias a=b`, Prelude{}, "")
	shell(t, s, "a", `true`, Prelude{}, "/")
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" || list[1].Cwd != "/tmp" {
		t.Fatalf("list %+v %v", list, err)
	}
	info, err := s.Show("b", false)
	if err != nil || info.Values != "" || strings.Join(info.Variables, ",") != "OLDPWD,SECRET" ||
		strings.Join(info.Exported, ",") != "OLDPWD,SECRET" || strings.Join(info.Functions, ",") != "f" || strings.Join(info.Aliases, ",") != "a" {
		t.Fatalf("show %+v %v", info, err)
	}
	if info, _ := s.Show("b", true); !strings.Contains(info.Values, "s3cr3t") {
		t.Errorf("show --values: %q", info.Values)
	}
	if _, err := s.Show("nosuch", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("show nosuch: %v", err)
	}
	// rm waits for a running command, then gives up.
	l, err := s.Acquire(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("b", 20*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Errorf("rm while busy: %v", err)
	}
	l.Release()
	if err := s.Remove("b", time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "b")); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
	if err := s.Remove("b", time.Second); !errors.Is(err, ErrNotFound) {
		t.Errorf("rm twice: %v", err)
	}
	if err := s.Remove("../x", time.Second); !errors.Is(err, ErrBadName) {
		t.Errorf("rm ../x: %v", err)
	}
	if out, _, _, _ := shell(t, s, "b", `echo "[${SECRET-unset}]"`, Prelude{}, "/"); out != "[unset]\n" {
		t.Errorf("after rm: %q", out)
	}
}

func TestIsIdentifierAndUmask(t *testing.T) {
	for s, want := range map[string]bool{"a": true, "_x9": true, "A_B": true, "": false, "9a": false, "a-b": false, "é": false, "a b": false} {
		if isIdentifier(s) != want {
			t.Errorf("isIdentifier(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"0022": true, "022": true, "0778": false, "22": false, "00022": false, "": false} {
		if isUmask(s) != want {
			t.Errorf("isUmask(%q) = %v", s, !want)
		}
	}
}

// States that once broke a session for good (every later command failed the same way) now restore, or
// are never kept (from a hostile test).
func TestStateThatBrokeSessions(t *testing.T) {
	t.Run("extglob function after extglob off", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `shopt -s extglob`, Prelude{}, "")
		shell(t, s, "s", `f() { case $1 in @(a|b)) echo ab;; esac; }; h() { echo h; }; shopt -u extglob`, Prelude{}, "")
		// As in one live shell: f is defined, and with extglob off its pattern matches nothing.
		out, _, kept, w := shell(t, s, "s", `f a; h; shopt -q extglob || echo off; shopt -s extglob; f b`, Prelude{}, "")
		if out != "h\noff\nab\n" || !kept || w != "" {
			t.Errorf("output %q, kept %v, warning %q", out, kept, w)
		}
	})
	t.Run("25000 functions and 30000 aliases", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `for ((i=0;i<25000;i++)); do eval "f$i(){ echo $i; }"; alias a$i="echo a$i"; done; for ((;i<30000;i++)); do alias a$i="echo a$i"; done`, Prelude{}, "")
		out, _, kept, _ := shell(t, s, "s", `f24999; a29999`, Prelude{}, "")
		if out != "24999\na29999\n" || !kept {
			t.Errorf("output %q, kept %v", out, kept)
		}
	})
	t.Run("a function bash cannot read again costs only itself", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", "g(){ cat <<X\nh () \nX\n}; function a=b { echo ab; }; h(){ echo h; }", Prelude{}, "")
		out, _, _, _ := shell(t, s, "s", `g; h`, Prelude{}, "")
		if out != "h () \nh\n" {
			t.Errorf("output %q", out)
		}
	})
	t.Run("14000 variables", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `for i in $(seq 1 14000); do eval "V_$i=$i"; done`, Prelude{}, "")
		out, _, kept, _ := shell(t, s, "s", `echo $V_13999; unset ${!V_*}`, Prelude{}, "")
		if out != "13999\n" || !kept {
			t.Errorf("output %q, kept %v", out, kept)
		}
	})
	t.Run("enable -n declare", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `export KEEP=1; f() { :; }`, Prelude{}, "")
		_, _, _, _ = shell(t, s, "s", `enable -n declare`, Prelude{}, "")
		out, _, _, _ := shell(t, s, "s", `echo "KEEP=$KEEP"; type -t f; [ -n "$PATH" ] && echo path`, Prelude{}, "")
		if out != "KEEP=1\nfunction\npath\n" {
			t.Errorf("output %q", out)
		}
	})
	t.Run("enable -n builtin", func(t *testing.T) {
		// The trap runs but can write nothing: the warning says so, not that the trap never ran.
		s := newStore(t)
		shell(t, s, "s", `export KEEP=1`, Prelude{}, "")
		_, _, kept, w := shell(t, s, "s", `enable -n builtin; KEEP=2`, Prelude{}, "")
		if kept || !strings.Contains(w, "wrote nothing") || strings.Contains(w, "ran exec") {
			t.Errorf("kept %v, warning %q", kept, w)
		}
		_, _, kept, w = shell(t, s, "s", `trap 'echo bye' EXIT; KEEP=3`, Prelude{}, "")
		if kept || w != fmt.Sprintf(NotSavedWarning, "s") {
			t.Errorf("own EXIT trap: kept %v, warning %q", kept, w)
		}
		if out, _, _, _ := shell(t, s, "s", `echo "KEEP=$KEEP"`, Prelude{}, ""); out != "KEEP=1\n" {
			t.Errorf("output %q", out)
		}
	})
	t.Run("set -v", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `set -v`, Prelude{}, "")
		out, _, _, _ := shell(t, s, "s", `echo hi`, Prelude{}, "")
		if out != "hi\n" {
			t.Errorf("output %q", out)
		}
	})
}

func TestSplitFunctions(t *testing.T) {
	text := "a=b () \n{ \n    echo\n}\nf () \n{ \n    cat <<X\ng () \nX\n\n}\nh () \n{ \n    echo\n}"
	got := splitFunctions(text, []string{"a=b", "f", "h"})
	want := []string{"a=b () \n{ \n    echo\n}", "f () \n{ \n    cat <<X\ng () \nX\n\n}", "h () \n{ \n    echo\n}"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	if got := splitFunctions(text, []string{"a=b", "x"}); len(got) != 1 || got[0] != text {
		t.Errorf("names that do not match: %q", got)
	}
}

// A session whose commands never kept a state (none ran, or none ended by itself) is left as it was
// before them: not there, on disk or in the list; a task's Peek is not listed either (its prelude, which
// empties itself once bash read it, stays until a sweep). Once a state was kept, a command that keeps
// none leaves the session as it is.
func TestStatelessSessionLeavesNothing(t *testing.T) {
	s := newStore(t)
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Prelude(Prelude{Capture: true}); err != nil {
		t.Fatal(err)
	}
	if _, kept, _, _ := l.Commit(false); kept { // timed out, say
		t.Fatal("kept a state of a command that did not end by itself")
	}
	l.Release()
	p, err := s.Peek("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Prelude(Prelude{}); err != nil {
		t.Fatal(err)
	}
	p.Release()
	if infos, err := s.List(); err != nil || len(infos) != 0 {
		t.Fatalf("list %+v, %v", infos, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "s")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("session s left on disk: %v", err)
	}

	shell(t, s, "s", `x=1`, Prelude{}, "")
	l, err = s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	l.Commit(false)
	l.Release()
	if infos, _ := s.List(); len(infos) != 1 || infos[0].Name != "s" {
		t.Fatalf("list after a kept state: %+v", infos)
	}
}

// A session that kept the state of a sandboxed command refuses a command confined less, and records a
// stricter one (reference §13).
func TestRunsUnder(t *testing.T) {
	s := newStore(t)
	ws := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, DenyRead: []string{"~/.ssh"}}
	keep := func(p *sandbox.Policy) error {
		kept, warning, err := runUnder(t, s, p, nil)
		if err != nil {
			return err
		}
		if !kept {
			if warning != "" {
				return errors.New(warning)
			}
			t.Fatalf("commit: not kept")
		}
		return nil
	}
	if err := keep(nil); err != nil {
		t.Fatalf("a plain command in a new session: %v", err)
	}
	if err := keep(ws); err != nil {
		t.Fatalf("a sandboxed command after a plain one: %v", err)
	}
	if err := keep(nil); err == nil || !strings.Contains(err.Error(), "Session s was created with --sandbox workspace-write") {
		t.Errorf("a plain command after a sandboxed one: %v", err)
	}
	if err := keep(&sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, DenyRead: []string{"~/.ssh"}}); err == nil {
		t.Errorf("network on after off ran")
	}
	// A stricter command runs, but its changes are not kept: the session is not ratcheted to read-only.
	if err := keep(&sandbox.Policy{Mode: sandbox.ModeReadOnly, DenyRead: []string{"~/.ssh"}}); err == nil ||
		!strings.Contains(err.Error(), "not kept") ||
		!strings.Contains(err.Error(), "stricter sandbox (read-only, network off) than the session's (workspace-write, network off)") {
		t.Errorf("a stricter command: %v", err)
	}
	if err := keep(ws); err != nil {
		t.Errorf("workspace-write after a read-only command: %v", err)
	}
}

// A session's first command, confined more than the server it came through (a request that narrowed the
// server's sandbox), runs without its changes kept: the session is not locked to that command's sandbox,
// and the server's own policy still runs in it.
func TestRunsUnderFloor(t *testing.T) {
	s := newStore(t)
	floor := &sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkProxy, AllowHosts: []string{"*.example.com:443"}}
	narrow := floor.Clone()
	narrow.AllowHosts = []string{"api.example.com:443"}
	run := func(p, f *sandbox.Policy) (kept bool, warning string) {
		kept, warning, err := runUnder(t, s, p, f)
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return kept, warning
	}
	if kept, warning := run(narrow, floor); kept || !strings.Contains(warning, "(workspace-write, network proxy to api.example.com:443) than its server's (workspace-write, network proxy to *.example.com:443)") {
		t.Errorf("the first, narrowed command: kept %v, %q", kept, warning)
	}
	if kept, warning := run(floor, nil); !kept || warning != "" {
		t.Errorf("the server's own policy after it: kept %v, %q", kept, warning)
	}
	if kept, _ := run(narrow, floor); kept {
		t.Error("a narrowed command's changes were kept")
	}
}

// runUnder runs `true` in session "s" of store s as a command confined by p under a server's floor (nil:
// none) would: refused is RunsUnder's error; else whether Commit kept its state, and its warning.
func runUnder(t *testing.T, s Store, p, floor *sandbox.Policy) (kept bool, warning string, refused error) {
	t.Helper()
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.RunsUnder(p, floor, ""); err != nil {
		return false, "", err
	}
	path, err := l.Prelude(Prelude{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "true")
	cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), "BASH_ENV="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	_, kept, warning, err = l.Commit(true)
	if err != nil {
		t.Fatal(err)
	}
	return kept, warning, nil
}
