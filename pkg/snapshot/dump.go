package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// dumpScript sources the rc file in an interactive-looking shell (so `case $- in *i*` guards pass) with
// its output discarded, tracing it to fd 3 to learn which files it read (see [readTrace]), then prints
// what it defined as NUL-separated records on stdout:
//
//	P PATH            the PATH after the rc
//	F NAME BODY       a function, as `declare -f` prints it
//	O LINE            a `shopt -p` line
//	S NAME            a `set -o` option that is on
//	A NAME VALUE      an alias
//
// The whole script is one `{ … }` group, parsed before the rc runs, so aliases the rc defines cannot
// change it (the one process substitution is parsed when it runs, so its `builtin` is quoted); builtins
// are called through `builtin` so functions the rc defines cannot change it either. PS4 and
// BASH_XTRACEFD are read-only while the rc runs: an rc that sets its own PS4 keeps working (the
// assignment fails quietly, its output is discarded) and the trace stays readable.
const dumpScript = `{
PS4=$'\x1e''${BASH_SOURCE[0]}'$'\x1f''${PWD}'$'\x1f'
BASH_XTRACEFD=3
builtin readonly PS4 BASH_XTRACEFD
builtin set -x
builtin source "$AGENTBASH_RC" </dev/null >/dev/null 2>&1
builtin set +x
builtin exec 3>&-
builtin printf 'P\0%s\0' "$PATH"
builtin mapfile -t __agentbash_fns < <(\builtin compgen -A function)
for __agentbash_f in "${__agentbash_fns[@]}"; do
  builtin printf 'F\0%s\0' "$__agentbash_f"; builtin declare -f -- "$__agentbash_f"; builtin printf '\0'
done
builtin shopt -p | while IFS= builtin read -r __agentbash_l; do builtin printf 'O\0%s\0' "$__agentbash_l"; done
builtin set -o | while builtin read -r __agentbash_n __agentbash_s; do
  builtin test "$__agentbash_s" = on && builtin printf 'S\0%s\0' "$__agentbash_n"
done
for __agentbash_a in "${!BASH_ALIASES[@]}"; do
  builtin printf 'A\0%s\0%s\0' "$__agentbash_a" "${BASH_ALIASES[$__agentbash_a]}"
done
}`

// generate runs the dump in its own session, with no inherited stdio, killed after o.Timeout, and
// builds the snapshot script from it. It returns the files the rc read (sourced, directly or not), also
// when the dump failed, so that a failure is retried when any of them changes.
func generate(ctx context.Context, o Options) (script []byte, sources []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Shell, "--norc", "--noprofile", "-i", "-c", dumpScript)
	var env []string
	inheritedPath := ""
	for _, kv := range o.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "BASH_ENV", "ENV", "PS4", "BASH_XTRACEFD":
			continue
		case "PATH":
			inheritedPath = v
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "AGENTBASH_RC="+o.RCFile)
	traceR, traceW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("trace pipe: %w", err)
	}
	defer traceR.Close()
	var out bytes.Buffer
	cmd.Stdout = &out // stdin and stderr are /dev/null
	cmd.ExtraFiles = []*os.File{traceW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 200 * time.Millisecond // a background job of the rc holding stdout cannot hang us
	if err := cmd.Start(); err != nil {
		traceW.Close()
		return nil, nil, err
	}
	traceW.Close()
	traced := make(chan trace, 1)
	go func() { traced <- readTrace(traceR) }()
	runErr := cmd.Wait()
	// The shell closed its end; a background job of the rc may still hold one. Read what is buffered,
	// then stop.
	_ = traceR.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	t := <-traced

	if ctx.Err() != nil {
		return nil, t.files(inheritedPath), fmt.Errorf("timed out after %s", o.Timeout)
	}
	if runErr != nil {
		return nil, t.files(inheritedPath), runErr
	}
	d, err := parseDump(out.Bytes())
	if err != nil {
		return nil, t.files(inheritedPath), err
	}
	return d.script(o.RCFile, inheritedPath), t.files(d.path), nil
}

// dump is what the rc defined, as the dump script printed it.
type dump struct {
	path    string
	funcs   []function // in the order bash listed them
	shopts  []string   // `shopt -p` lines
	setOpts []string   // `set -o` names that are on
	aliases [][2]string
}

type function struct{ name, body string }

// parseDump reads the NUL-separated records of [dumpScript].
func parseDump(b []byte) (dump, error) {
	var d dump
	fields := strings.Split(string(b), "\x00")
	if n := len(fields); n > 0 && fields[n-1] == "" {
		fields = fields[:n-1]
	}
	need := map[string]int{"P": 1, "F": 2, "O": 1, "S": 1, "A": 2}
	for i := 0; i < len(fields); {
		kind := fields[i]
		n, ok := need[kind]
		if !ok || i+n >= len(fields) {
			return dump{}, fmt.Errorf("unexpected output of the snapshot shell near record %d", i)
		}
		f := fields[i+1 : i+1+n]
		switch kind {
		case "P":
			d.path = f[0]
		case "F":
			d.funcs = append(d.funcs, function{f[0], f[1]})
		case "O":
			d.shopts = append(d.shopts, f[0])
		case "S":
			d.setOpts = append(d.setOpts, f[0])
		case "A":
			d.aliases = append(d.aliases, [2]string{f[0], f[1]})
		}
		i += 1 + n
	}
	return d, nil
}

// Shell options that are the snapshot shell's own state, not the user's choice, or that would change
// how the command runs (errexit, nounset …) or what it prints (xtrace, verbose).
var (
	skipShopts = []string{"login_shell", "restricted_shell", "progcomp_alias"}
	skipSetOps = []string{"monitor", "history", "histexpand", "emacs", "vi", "onecmd", "restricted",
		"interactive-comments", "errexit", "nounset", "xtrace", "verbose", "noexec"}
)

// script writes the snapshot: options first (a function using extglob patterns only parses once extglob
// is on), then the PATH entries the rc added, the functions kept functions and aliases need (defined
// before the aliases, as `declare -f` printed them with the rc's aliases already expanded), the aliases,
// and last expand_aliases, so aliases work in the command.
func (d dump) script(rc, inheritedPath string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# agentbash shell snapshot of %s: options, PATH additions, functions and aliases\n", rc)
	for _, l := range d.shopts {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "shopt" && !slices.Contains(skipShopts, f[2]) {
			b.WriteString(l + "\n")
		}
	}
	for _, name := range d.setOpts {
		if !slices.Contains(skipSetOps, name) {
			b.WriteString("set -o " + name + "\n")
		}
	}
	before, after := pathAdditions(inheritedPath, d.path)
	b.WriteString(pathScript(before, after))
	for _, f := range neededFunctions(d.funcs, d.aliases) {
		b.WriteString(f.body + "\n")
	}
	for _, a := range d.aliases {
		if !slices.Contains(CommonTools, a[0]) {
			b.WriteString("alias -- " + quote(a[0]+"="+a[1]) + "\n")
		}
	}
	// Quoted, so that an alias of the user's named like them does not apply.
	b.WriteString("\\builtin shopt -s expand_aliases\n\\builtin unset BASH_ENV\n")
	return []byte(b.String())
}

func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil { // only a NUL byte, which no bash string holds
		return "''"
	}
	return q
}

// neededFunctions keeps, in their order, the functions the agent can call — every function whose name
// does not start with "_" and is not one of [CommonTools] — and every function those, or the kept
// aliases, need: the closure over the names their text mentions. A name counts as mentioned when it
// appears as a word of the text split at shell punctuation, or split at every character that cannot be
// in a plain name (so `${x:-_h}`, `trap _h EXIT` and `cmd=_h` count); mentioning too much only costs a
// few bytes, missing one costs a "command not found". Helpers only called through a computed name
// (`"_$1"`) are not found. The rest — completion machinery such as bash-completion's ~80 `_` functions
// (57 KB) that no command calls — is left out.
func neededFunctions(funcs []function, aliases [][2]string) []function {
	index := map[string]int{}
	for i, f := range funcs {
		index[f.name] = i
	}
	keep := make([]bool, len(funcs))
	var queue []int
	mark := func(name string) {
		if i, ok := index[name]; ok && !keep[i] && !slices.Contains(CommonTools, name) {
			keep[i] = true
			queue = append(queue, i)
		}
	}
	for _, f := range funcs {
		if !strings.HasPrefix(f.name, "_") {
			mark(f.name)
		}
	}
	for _, a := range aliases {
		if !slices.Contains(CommonTools, a[0]) {
			for _, w := range mentions(a[1]) {
				mark(w)
			}
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for _, w := range mentions(funcs[i].body) {
			mark(w)
		}
	}
	var out []function
	for i, f := range funcs {
		if keep[i] {
			out = append(out, f)
		}
	}
	return out
}

// mentions splits shell text into the words a function name could be: runs between shell punctuation
// (blanks, operators, quotes, `$`, braces, `=`), and runs of letters, digits and underscores.
func mentions(text string) []string {
	coarse := strings.FieldsFunc(text, func(r rune) bool {
		return strings.ContainsRune(" \t\n;&|()<>'\"`$\\{}[]=!*?,#", r)
	})
	fine := strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	return append(coarse, fine...)
}

// pathAdditions returns the entries of the rc's final PATH that the inherited PATH lacks, split into
// those the rc put before every inherited entry (prepended) and the rest (appended), each in the rc's
// order, without duplicates or empty entries (an empty entry would mean the current directory).
func pathAdditions(inherited, final string) (before, after []string) {
	have := map[string]bool{}
	for _, e := range strings.Split(inherited, ":") {
		have[e] = true
	}
	seen := map[string]bool{}
	front := true
	for _, e := range strings.Split(final, ":") {
		if have[e] && e != "" {
			front = false
			continue
		}
		if e == "" || seen[e] {
			continue
		}
		seen[e] = true
		if front {
			before = append(before, e)
		} else {
			after = append(after, e)
		}
	}
	return before, after
}

// pathScript adds the entries to PATH when the command's PATH lacks them, before and after it. The
// check is made when the snapshot is sourced, so a command run with another PATH still gets exactly the
// entries it lacks.
func pathScript(before, after []string) string {
	if len(before)+len(after) == 0 {
		return ""
	}
	words := func(es []string) string {
		q := make([]string, len(es))
		for i, e := range es {
			q[i] = quote(e)
		}
		return strings.Join(q, " ")
	}
	var b strings.Builder
	b.WriteString("__agentbash_pre=\n")
	if len(before) > 0 {
		fmt.Fprintf(&b, "for __agentbash_d in %s; do case \":$PATH:\" in *\":$__agentbash_d:\"*) ;; "+
			"*) __agentbash_pre=$__agentbash_pre$__agentbash_d: ;; esac; done\n", words(before))
	}
	b.WriteString("if [ -n \"$PATH\" ]; then PATH=$__agentbash_pre$PATH; else PATH=${__agentbash_pre%:}; fi\n")
	if len(after) > 0 {
		fmt.Fprintf(&b, "for __agentbash_d in %s; do case \":$PATH:\" in *\":$__agentbash_d:\"*) ;; "+
			"*) PATH=${PATH:+$PATH:}$__agentbash_d ;; esac; done\n", words(after))
	}
	b.WriteString("export PATH\nunset __agentbash_pre __agentbash_d\n")
	return b.String()
}
