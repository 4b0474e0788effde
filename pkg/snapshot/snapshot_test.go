package snapshot

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

func snapshotText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Functions a kept function or alias needs are kept, however they are named; the rest of the `_`
// functions are not (issue: `usehelper() { _helper x; }` failed with `_helper: command not found`).
func TestSnapshotKeepsHelperFunctions(t *testing.T) {
	o := options(t, `_helper() { echo "HELPED-$1"; }
usehelper() { _helper x; }
_deep() { echo deep; }
_mid() { _deep; }
chain() { _mid; }
_fromalias() { echo via-alias; }
alias va='_fromalias'
_cleanup() { echo cleaned; }
withtrap() { trap _cleanup EXIT; }
_dflt() { echo default-cmd; }
computed() { local c=${1:-_dflt}; "$c"; }
_private() { echo PRIVATE; }
`)
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	if s := snapshotText(t, path); strings.Contains(s, "PRIVATE") {
		t.Errorf("an unused _ function was kept:\n%s", s)
	}
	got := runWith(t, path, "usehelper\nchain\nva\n(withtrap)\ncomputed")
	want := "HELPED-x\ndeep\nvia-alias\ncleaned\ndefault-cmd\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNeededFunctions(t *testing.T) {
	fn := func(name, body string) function { return function{name, name + " () \n{ \n    " + body + "\n}"} }
	for _, c := range []struct {
		name    string
		funcs   []function
		aliases [][2]string
		want    []string
	}{
		{"public kept, private dropped", []function{fn("a", "echo"), fn("_b", "echo")}, nil, []string{"a"}},
		{"helper of a kept function", []function{fn("_h", "echo"), fn("a", "_h x")}, nil, []string{"_h", "a"}},
		{"transitive", []function{fn("_c", ":"), fn("_b", "_c"), fn("a", "_b")}, nil, []string{"_c", "_b", "a"}},
		{"through an alias", []function{fn("_h", ":")}, [][2]string{{"x", "_h --flag"}}, []string{"_h"}},
		{"shadowing alias mentions nothing", []function{fn("_h", ":")}, [][2]string{{"ls", "_h"}}, nil},
		{"in an expansion", []function{fn("_h", ":"), fn("a", `"${1:-_h}"`)}, nil, []string{"_h", "a"}},
		{"in an assignment", []function{fn("_h", ":"), fn("a", "cmd=_h; $cmd")}, nil, []string{"_h", "a"}},
		{"dashed name", []function{fn("_my-helper", ":"), fn("a", "_my-helper;")}, nil, []string{"_my-helper", "a"}},
		{"common tools never", []function{fn("ls", "command ls -F"), fn("a", "ls")}, nil, []string{"a"}},
		{"prefix is not a mention", []function{fn("_h", ":"), fn("a", "_hx")}, nil, []string{"a"}},
	} {
		var got []string
		for _, f := range neededFunctions(c.funcs, c.aliases, func(n string) bool { return slices.Contains(CommonTools, n) }) {
			got = append(got, f.name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// The PATH the rc builds: entries the inherited PATH lacks are added in the rc's order, before or after
// it as the rc put them, and only when the command's PATH lacks them.
func TestSnapshotPathAdditions(t *testing.T) {
	o := options(t, `export PATH="$HOME/bin:$HOME/.local/bin:$PATH:/opt/tail/bin"
PATH="$HOME/bin:$PATH"
export SECRET=1
`)
	home := filepath.Dir(o.RCFile)
	o.Env = append(o.Env, "HOME="+home, "PATH=/usr/bin:/bin")
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	for _, c := range []struct{ path, want string }{
		{"/usr/bin:/bin", home + "/bin:" + home + "/.local/bin:/usr/bin:/bin:/opt/tail/bin"},
		{home + "/bin:/usr/bin:/bin", home + "/.local/bin:" + home + "/bin:/usr/bin:/bin:/opt/tail/bin"},
		{"/bin:/usr/bin:/opt/tail/bin", home + "/bin:" + home + "/.local/bin:/bin:/usr/bin:/opt/tail/bin"},
	} {
		cmd := exec.Command("/bin/bash", "-c", `echo "$PATH [${SECRET-unset}]"`)
		cmd.Env = []string{"PATH=" + c.path, "BASH_ENV=" + path}
		out, _ := cmd.CombinedOutput()
		if got := strings.TrimSpace(string(out)); got != c.want+" [unset]" {
			t.Errorf("with PATH=%s: got %q, want %q", c.path, got, c.want+" [unset]")
		}
	}
}

func TestPathAdditions(t *testing.T) {
	for _, c := range []struct{ inherited, final, before, after string }{
		{"/usr/bin:/bin", "/h/bin:/usr/bin:/bin", "/h/bin", ""},
		{"/usr/bin:/bin", "/usr/bin:/bin:/opt/x", "", "/opt/x"},
		{"/usr/bin:/bin", "/a:/usr/bin:/b:/bin:/c", "/a", "/b,/c"},
		{"/usr/bin", "/a:/a:/usr/bin::/a", "/a", ""},
		{"/usr/bin", "/only/these:/two", "/only/these,/two", ""},
		{"/usr/bin:/bin", "/usr/bin:/bin", "", ""},
		{"", "/h/bin:", "/h/bin", ""},
	} {
		before, after := pathAdditions(c.inherited, c.final)
		if strings.Join(before, ",") != c.before || strings.Join(after, ",") != c.after {
			t.Errorf("pathAdditions(%q, %q) = %v, %v; want %s | %s", c.inherited, c.final, before, after, c.before, c.after)
		}
	}
}

// The snapshot is made again when any file the rc read changes — a file it sources, one that file
// sources, one found through PATH, one that only defines functions, one that was empty — not only the
// rc itself.
func TestSnapshotRefreshWhenSourcedFileChanges(t *testing.T) {
	o := options(t, "")
	home := filepath.Dir(o.RCFile)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, "lib"), 0o700)
	write(".bashrc", `[ -f ~/.bash_aliases ] && . ~/.bash_aliases
source "$HOME/lib/a.sh"
PATH=$HOME/lib:$PATH
source onpath.sh
`)
	write(".bash_aliases", "")
	write("lib/a.sh", "cd \"$HOME/lib\" && . ./b.sh; cd /\n")
	write("lib/b.sh", "bfunc() { echo b1; }\n")
	write("lib/onpath.sh", "alias op='echo op1'\n")
	o.Env = append(o.Env, "HOME="+home)

	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	if got := runWith(t, path, "bfunc; op"); got != "b1\nop1\n" {
		t.Fatalf("first snapshot: %q", got)
	}
	for _, c := range []struct{ file, text, command, want string }{
		{".bash_aliases", "alias ba='echo ba'\n", "ba", "ba\n"},
		{"lib/b.sh", "bfunc() { echo b2; }\n", "bfunc", "b2\n"},
		{"lib/onpath.sh", "alias op='echo op2'\n", "op", "op2\n"},
	} {
		write(c.file, c.text)
		path, warn = Ensure(context.Background(), o)
		if got := runWith(t, path, c.command); path == "" || warn != "" || got != c.want {
			t.Errorf("after changing %s: %q, %q, ran %q; want %q", c.file, path, warn, got, c.want)
		}
	}
}

// Options come before functions: a function using an extglob pattern only parses once extglob is on.
func TestSnapshotExtglobFunction(t *testing.T) {
	o := options(t, "shopt -s extglob\nisnum() { case $1 in +([0-9])) echo num;; *) echo no;; esac; }\n")
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	if got := runWith(t, path, "isnum 42 2>&1; isnum x"); got != "num\nno\n" {
		t.Errorf("got %q", got)
	}
}

// The rc's aliases and functions named like builtins do not break the dump, and an rc that sets its own
// PS4 still has its sourced files watched.
func TestSnapshotHostileRC(t *testing.T) {
	o := options(t, "")
	home := filepath.Dir(o.RCFile)
	os.WriteFile(o.RCFile, []byte(`alias printf='echo HIJACK'
alias builtin='echo HIJACK'
export PS4='+ ${BASH_SOURCE}:${LINENO}: '
read() { echo HIJACK; }
compgen() { echo HIJACK; }
. "$HOME/more.sh"
mine() { echo mine; }
`), 0o600)
	os.WriteFile(filepath.Join(home, "more.sh"), []byte("extra() { echo extra1; }\n"), 0o600)
	o.Env = append(o.Env, "HOME="+home)
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	if got := runWith(t, path, "mine; extra"); got != "mine\nextra1\n" {
		t.Errorf("got %q", got)
	}
	os.WriteFile(filepath.Join(home, "more.sh"), []byte("extra() { echo extra2; }\n"), 0o600)
	path, _ = Ensure(context.Background(), o)
	if got := runWith(t, path, "extra"); got != "extra2\n" {
		t.Errorf("after change: %q", got)
	}
}

// A bash-completion-heavy rc: the completion machinery (about 80 `_` functions, 57 KB) stays out unless
// something kept calls it, so sourcing the snapshot stays cheap; the completion file is watched.
func TestSnapshotCompletionHeavyRC(t *testing.T) {
	const bc = "/usr/share/bash-completion/bash_completion"
	if !fileExists(bc) {
		t.Skip("bash-completion not installed")
	}
	o := options(t, ". "+bc+"\nwords() { local cur; _get_comp_words_by_ref cur; echo \"[$cur]\"; }\n")
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	s := snapshotText(t, path)
	if len(s) > 16<<10 {
		t.Errorf("snapshot is %d bytes", len(s))
	}
	if !strings.Contains(s, "_get_comp_words_by_ref ()") || strings.Contains(s, "_filedir ()") {
		t.Errorf("want the helper words() needs and not the rest of the machinery")
	}
	if got := runWith(t, path, "words 2>&1 | head -1; echo done"); !strings.HasSuffix(got, "done\n") || strings.Contains(got, "syntax error") {
		t.Errorf("got %q", got)
	}
	var st stamp
	b, _ := os.ReadFile(strings.TrimSuffix(path, ".sh") + ".stamp")
	json.Unmarshal(b, &st)
	found := false
	for _, f := range st.Files {
		found = found || f.Path == bc
	}
	if !found {
		t.Errorf("%s not watched: %+v", bc, st.Files)
	}
}

func TestReadTrace(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "found.sh"), nil, 0o600)
	in := "\x1e\x1f/home/u\x1fbuiltin source /home/u/.bashrc\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1f. /home/u/.bash_aliases\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1fx='multi\n" +
		"line'\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1fsource 'my dir/f.sh' arg\n" +
		"\x1e\x1e\x1e./rel.sh\x1f/home/u/p\x1fcd /\n" +
		"\x1e\x1e\x1e./rel.sh\x1f/\x1fecho later\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1fcommand . found.sh\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1fsource nowhere.sh\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1fecho source of nothing\n" +
		"\x1e\x1e/home/u/.bashrc\x1f/home/u\x1f" + strings.Repeat("y", 200<<10) + "\n"
	got := readTrace(strings.NewReader(in)).files("/nonexistent:" + dir)
	want := []string{"/home/u/.bashrc", "/home/u/p/rel.sh", "/home/u/.bash_aliases", "/home/u/my dir/f.sh",
		filepath.Join(dir, "found.sh"), "/home/u/nowhere.sh"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A background job the rc starts inherits the trace descriptor; the snapshot does not wait for it.
func TestSnapshotBackgroundJobDoesNotHold(t *testing.T) {
	o := options(t, "sleep 30 &\necho $! > \"${BASH_SOURCE%/*}/bg.pid\"\nalias bg1='echo bg1'\n")
	defer func() {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(o.RCFile), "bg.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}()
	done := make(chan string, 1)
	go func() {
		path, warn := Ensure(context.Background(), o)
		if warn != "" {
			t.Errorf("warning %q", warn)
		}
		done <- path
	}()
	select {
	case path := <-done:
		if got := runWith(t, path, "bg1"); got != "bg1\n" {
			t.Errorf("got %q", got)
		}
	case <-time.After(15 * time.Second): // a guard against hanging for the job's 30 s, not a timing check
		t.Fatal("Ensure waited for the rc's background job")
	}
}

// TestMain lets the test binary be the snapshot's helper: Ensure re-executes it as `<test> __snapshot`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// The snapshot keeps the rc's own inherit_errexit (on when it set it, else off, as in bash) and sets no
// BASH_COMPAT: the dump's moment in POSIX mode turned inherit_errexit on in every snapshot, and its
// `shopt -u compat44` set BASH_COMPAT, so `set -e` worked differently in every command.
func TestSnapshotKeepsShellSemantics(t *testing.T) {
	for _, tc := range []struct{ rc, want string }{
		{"alias x=y\n", "shopt -u inherit_errexit\n[]\nafter-false\n"},
		{"shopt -s inherit_errexit\n", "shopt -s inherit_errexit\n[]\n"},
	} {
		path, warn := Ensure(context.Background(), options(t, tc.rc))
		if path == "" || warn != "" {
			t.Fatalf("Ensure = %q, %q", path, warn)
		}
		got := runWith(t, path, `shopt -p inherit_errexit; echo "[${BASH_COMPAT-}]"; set -e; x=$(false; echo after-false); echo "$x"`)
		if got != tc.want {
			b, _ := os.ReadFile(path)
			t.Errorf("rc %q: got %q, want %q\nsnapshot:\n%s", tc.rc, got, tc.want, b)
		}
	}
}

// The rc's options reach the command, set in one command each way: `shopt -u` of those off, `shopt -s`
// of those on, one `set` for the `set -o` ones (every command sources the snapshot).
func TestSnapshotOptionsInOneCommandEachWay(t *testing.T) {
	o := options(t, "shopt -s extglob nullglob globstar\nshopt -u cmdhist promptvars\nset -o pipefail\nset -o noclobber\n")
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	got := runWith(t, path, `for o in extglob nullglob globstar cmdhist promptvars expand_aliases; do shopt -q $o && echo "$o on" || echo "$o off"; done
[[ -o pipefail ]] && echo pipefail on; [[ -o noclobber ]] && echo noclobber on`)
	want := "extglob on\nnullglob on\nglobstar on\ncmdhist off\npromptvars off\nexpand_aliases on\npipefail on\nnoclobber on\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b, _ := os.ReadFile(path)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, `\builtin shopt -`) || strings.HasPrefix(l, `\builtin set `) {
			lines = append(lines, strings.Join(strings.Fields(l)[:3], " "))
		}
	}
	if w := []string{`\builtin shopt -u`, `\builtin shopt -s`, `\builtin set -o`, `\builtin shopt -s`}; !slices.Equal(lines, w) {
		t.Errorf("option commands %q, want %q (the last: expand_aliases after the aliases)\n%s", lines, w, b)
	}
}

// A process that asks again (rpc, mcp: before every command) gets the same snapshot from what it
// remembers of the stamp, and a new one when the rc changed or the script is gone, as from the files.
func TestSnapshotAskedAgain(t *testing.T) {
	o := options(t, "alias one='echo 1'\n")
	path, warn := Ensure(context.Background(), o)
	if path == "" || warn != "" {
		t.Fatalf("Ensure = %q, %q", path, warn)
	}
	stampFile := strings.TrimSuffix(path, ".sh") + ".stamp"
	if err := os.Remove(stampFile); err != nil { // remembered: not read again
		t.Fatal(err)
	}
	if again, _ := Ensure(context.Background(), o); again != path || runWith(t, again, "one") != "1\n" {
		t.Fatalf("asked again: %q", again)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := Ensure(context.Background(), o); again != path || runWith(t, again, "one") != "1\n" {
		t.Fatalf("after the script was removed: %q", again)
	}
	time.Sleep(10 * time.Millisecond) // a modification time of its own
	if err := os.WriteFile(o.RCFile, []byte("alias one='echo uno'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if again, _ := Ensure(context.Background(), o); runWith(t, again, "one") != "uno\n" {
		t.Fatalf("after the rc changed: %q ran %q", again, runWith(t, again, "one"))
	}
}
