package session

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestUnchanging(t *testing.T) {
	defined := func(name string) bool { return name == "myfn" || name == "ll" || name == "/bin/true" }
	for _, c := range []string{
		``, `true`, `ls -la`, `git status && go test ./...`, `X=1 ls`, `echo "$HOME" | grep x > out.txt 2>&1`,
		"cat <<EOF\n$HOME\nEOF", `ls $(pwd)`, `"ls"`, `l\s`, `'ls'`, `exit 3`, `[ -f x ] && echo y || false`,
		`echo ${x:-d} ${#x} ${x%.go}`, `echo "${arr[@]}"`, `time make -j2`, `! grep -q x f`, `sleep 1 &`,
		`if test -d x; then echo a; else echo b; fi`, `case $x in a) ls;; esac`, `while false; do :; done`,
		`{ ls; pwd; }`, `ls | sort | uniq -c`, `python3 -c 'import os; os.chdir("/")'`, `/usr/bin/env`,
		`cat <(ls)`, `echo a 2>/dev/null >&2`, `[ -f "$HOME" ]`, `[ "$a" = "$b" ]`, `[ ! -f x ]`, `test -n "$x"`,
		`echo ${x@Q}`, `ls # a comment`, "cat <<-EOF\n\t$x\n\tEOF", "cat <<'EOF'\nx\nEOF", `LC_ALL=C sort`, `exit 0`,
	} {
		if !unchanging(c, defined) {
			t.Errorf("%q: not unchanging, want unchanging", c)
		}
	}
	for _, c := range []string{
		`cd /`, `X=1`, `export X=1`, `f() { :; }`, `function f { :; }`, `for i in 1; do :; done`,
		`select x in a; do :; done`, `(( x++ ))`, `echo $((x=1))`, `[[ 1 -eq x=2 ]]`, `read x`, `printf -v x y`,
		`echo ${x:=1}`, `echo ${x=1}`, `echo ${!x}`, `echo ${a[i=1]}`, `echo ${x:y=1:2}`, `exec ls`,
		`source f`, `. f`, `eval x`, `alias a=b`, `unalias a`, `builtin cd /`, `command cd /`, `\cd /`,
		`"cd" /`, `'cd' /`, `$cmd`, `${cmd} x`, `$'ls'`, `l*`, `X=1 :`, `X=1 exit`, `ls {fd}>/dev/null`,
		`coproc cat`, `ls; cd /`, `ls && cd / || true`, `declare x`, `local x`, `typeset x`, `readonly x`,
		`mapfile x`, `readarray x`, `set -x`, `shopt -s extglob`, `umask 077`, `unset X`, `trap 'x' EXIT`,
		`enable -n cd`, `hash -r`, `getopts a x`, `let x=1`, `pushd /`, `popd`, `shift`, `wait -p x`,
		`cat <(cd /)`, `(cd /tmp && ls)`, `if true; then cd /; fi`, `ls | while read l; do :; done`,
		`myfn`, `ll`, `/bin/true`, `ls (`, `{cd,/}`, `{cd,..}`, `x{,}`, `@(cd) /`, `echo "$(cd /)"`, "ls\ncd /", `type x`, `kill 1`,
		`echo ${x@P}`, `[ -v 'a[i=1]' ]`, `test -R x`, `[ "$op" x ]`, `[ ! "$op" x ]`, `[ -n $x ]`, `[ -f x -a "$y" ]`,
		`GLOBIGNORE=x ls`, `POSIXLY_CORRECT=1 ls`, `: X=1`, `exit a[i=1]=1`, `~ /`, `~-`, `$"ls"`, "ls # \\\ncd /",
		"echo $(cat <<EOF\nEOF)\ncd /\nEOF\n)", "cat <<EOF\n\\\nEOF\ncd /\nEOF\n", "cat <<EOF\nE\\\nOF\ncd /\nEOF\n",
		`time -- cd /`, `time -p -- cd /`, `! time -- eval X=1`, `test {-v,'a[i=5]'}`, `[ {-v,'a[i=5]'} ]`,
		`ignoreeof=1 /bin/ls`, `ls ignoreeof=1`, `ls POSIXLY_CORRECT+=1`,
	} {
		if unchanging(c, defined) {
			t.Errorf("%q: unchanging, want not", c)
		}
	}
}

// Each command here changes the state in bash, with the session's setup before it, and is not unchanging.
func TestUnchangingAgreesWithBash(t *testing.T) {
	dump := `{ declare -p | grep -Ev '^declare -[-a-zA-Z]* (_|BASH_[A-Z0-9_]*|PIPESTATUS|RANDOM|SRANDOM|SECONDS|LINENO|EPOCH[A-Z]*|PPID|BASHPID|SHLVL|PWD|OLDPWD|BASHOPTS|SHELLOPTS|GROUPS|FUNCNAME|COMP_WORDBREAKS)(=|$)'; declare -f; alias -p; shopt -p; set +o; umask; pwd; } 2>&1`
	for _, c := range [][2]string{ // setup, command
		{"x='$((y=5))'", "echo ${x@P}"},
		{"a=(1)", "[ -v 'a[y=5]' ]"},
		{"op=-v", "test \"$op\" 'a[y=5]'"},
		{"shopt -s dotglob", "GLOBIGNORE=x ls"},
		{"", "POSIXLY_CORRECT=1 ls"},
		{"set -k -o posix", ": X=1"},
		{"alias if='cd /; if'", "if true; then :; fi"},
		{"alias time='cd /; time'", "time ls"},
		{"HOME=cd", "~ /"},
		{"", "echo $(cat <<EOF\nEOF)\ncd /\nEOF\n)"},
		{"", "cat <<EOF\nE\\\nOF\ncd /\nEOF\n"},
		{"", "ls # \\\ncd /"},
		{"", "time -- cd /"},
		{"", "time -p -- cd /"},
		{"a=(); i=0", "test {-v,'a[i=5]'}"},
		{"set -o ignoreeof", "ignoreeof=1 /bin/true"},
		{"set -k -o ignoreeof", "/bin/true ignoreeof=1"},
	} {
		dir := t.TempDir()
		prelude := "shopt -s expand_aliases\n" + c[0] + "\n__d() " + "{ " + dump + "; }\n__d >" + dir + "/before\ntrap '__d >" + dir + "/after' EXIT\n"
		if err := os.WriteFile(dir+"/prelude", []byte(prelude), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "-c", "--", c[1])
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "BASH_ENV="+dir+"/prelude")
		_ = cmd.Run()
		before, _ := os.ReadFile(dir + "/before")
		after, _ := os.ReadFile(dir + "/after")
		if len(before) == 0 || string(before) == string(after) {
			t.Errorf("%q after %q: the state did not change in bash", c[1], c[0])
		}
		names, _ := exec.Command("bash", "-c", c[0]+"\ncompgen -A function; compgen -a").Output()
		defined := func(name string) bool { return slices.Contains(strings.Fields(string(names)), name) }
		if unchanging(c[1], defined) {
			t.Errorf("%q after %q: unchanging, but it changes the state", c[1], c[0])
		}
	}
}

// A command that cannot change the state runs without the EXIT trap and leaves the state as it was; a
// function of the session, one exported through the environment, or an explicit cwd makes it run with it.
func TestUnchangingCommandInSession(t *testing.T) {
	s := newStore(t)
	dir := t.TempDir()
	shell(t, s, "s", `export A=1; ls() { cd /; }; cd `+quote(dir), Prelude{}, "")
	run := func(command string, p Prelude, cwd string) (out, finalCwd string, trap bool) {
		t.Helper()
		l, err := s.Acquire(context.Background(), "s")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		p.Capture, p.Command = true, command
		path, err := l.Prelude(p)
		if err != nil {
			t.Fatal(err)
		}
		prelude, _ := os.ReadFile(path)
		cmd := exec.Command("bash", "-c", "--", command)
		cmd.Dir = cmp.Or(cwd, l.Cwd)
		cmd.Env = append(os.Environ(), "PWD="+cmd.Dir, "BASH_ENV="+path)
		cmd.Env = append(cmd.Env, p.Env...)
		b, _ := cmd.CombinedOutput()
		finalCwd, kept, w, err := l.Commit(true)
		if err != nil || !kept {
			t.Fatalf("%q: kept %v, %v %q", command, kept, err, w)
		}
		return string(b), finalCwd, strings.Contains(string(prelude), "trap --")
	}
	if out, cwd, trap := run(`echo "$A"; pwd`, Prelude{InSessionCwd: true}, ""); trap || out != "1\n"+dir+"\n" || cwd != dir {
		t.Errorf("unchanging: trap %v, out %q, cwd %q", trap, out, cwd)
	}
	if _, cwd, trap := run(`ls`, Prelude{InSessionCwd: true}, ""); !trap || cwd != "/" {
		t.Errorf("the session's function ls: trap %v, cwd %q", trap, cwd)
	}
	if _, _, trap := run(`foo`, Prelude{InSessionCwd: true, Env: []string{"BASH_FUNC_foo%%=() { cd /; }"}}, ""); !trap {
		t.Error("a function of the environment: no trap")
	}
	other := t.TempDir()
	if _, cwd, trap := run(`true`, Prelude{}, other); !trap || cwd != other {
		t.Errorf("an explicit cwd: trap %v, cwd %q", trap, cwd)
	}
	if out, _, _ := run(`echo "$A"`, Prelude{InSessionCwd: true}, ""); out != "1\n" {
		t.Errorf("A: %q", out)
	}
}

// A state that makes the shell evaluate on its own (xtrace's PS4, a nameref to an array element) takes no
// command for unchanging: the trap runs and what the evaluation assigned is kept.
func TestEvaluatingStateKeepsTheTrap(t *testing.T) {
	for name, setup := range map[string]string{
		"xtrace":  `m=0; PS4='+$((m++)) '; set -x`,
		"nameref": `m=0; a=(); declare -n r='a[m=m+1]'`,
	} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			shell(t, s, "s", setup, Prelude{}, "")
			l, err := s.Acquire(context.Background(), "s")
			if err != nil {
				t.Fatal(err)
			}
			command := `echo $r`
			path, err := l.Prelude(Prelude{Capture: true, Command: command, InSessionCwd: true})
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			if b, _ := os.ReadFile(path); !strings.Contains(string(b), "trap --") {
				t.Errorf("no EXIT trap for %q after %q", command, setup)
			}
		})
	}
}
