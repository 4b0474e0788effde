package snapshot

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dumpScript sources the rc file in an interactive-looking shell (so `case $- in *i*` guards pass) with
// its output discarded, tracing it to fd 3 to learn which files it read (see [readTrace]), then prints
// what it defined as NUL-separated records on stdout:
//
//	B NAME            a builtin of the shell, listed before the rc runs
//	P PATH            the PATH after the rc
//	F NAME BODY       a function, as `declare -f` prints it
//	O LINE            a `shopt -p` line
//	S NAME            a `set -o` option that is on
//	A NAME LINE       an alias, as `alias NAME` prints it (see [aliasValue])
//	E                 the end: a dump without it failed (an `exit` or `exec` in the rc, say)
//
// The whole script is one `{ … }` group, parsed before the rc runs, so aliases the rc defines cannot
// change it (the process substitutions are parsed when they run, so their `builtin` is quoted). Every
// builtin is called through `builtin`, and [unhijack] makes `builtin` the builtin again before the rc
// and after it, so functions named like builtins (`builtin`, `command`, `declare`, `printf` …), which
// are found before builtins, cannot change it either. After the rc, the traps it set are cleared (a
// DEBUG trap runs before each command, an EXIT trap at the end), everything up to the records writes to
// /dev/null (the records go to fd 4, a copy of stdout), IFS is reset, and errexit and nounset are turned
// off (the snapshot keeps neither). PS4 and BASH_XTRACEFD are read-only while the rc runs: an rc that
// sets its own PS4 keeps working (the assignment fails quietly, its output is discarded) and the trace
// stays readable.
//
// Aliases are listed with `compgen -a` and printed one by one: reading `${BASH_ALIASES[name]}` rebuilds
// the whole array on each access, which made the dump quadratic in the number of aliases.
const dumpScript = `{
` + unhijack + `then
builtin mapfile -t __agentbash_bs < <(\builtin compgen -b)
for __agentbash_b in "${__agentbash_bs[@]}"; do builtin printf 'B\0%s\0' "$__agentbash_b"; done
PS4=$'\x1e''${BASH_SOURCE[0]-}'$'\x1f''${PWD-}'$'\x1f'
BASH_XTRACEFD=3
builtin readonly PS4 BASH_XTRACEFD
builtin set -x
builtin source "$AGENTBASH_RC" </dev/null >/dev/null 2>&1
{
` + unhijack + `then
builtin trap - DEBUG RETURN ERR EXIT
builtin set +x +e +u
builtin exec 3>&-
IFS=$' \t\n'
{
builtin printf 'P\0%s\0' "$PATH"
builtin mapfile -t __agentbash_fns < <(\builtin compgen -A function)
for __agentbash_f in "${__agentbash_fns[@]}"; do
  builtin printf 'F\0%s\0' "$__agentbash_f"; builtin declare -f -- "$__agentbash_f"; builtin printf '\0'
done
builtin shopt -p | while IFS= builtin read -r __agentbash_l; do builtin printf 'O\0%s\0' "$__agentbash_l"; done
builtin set -o | while builtin read -r __agentbash_n __agentbash_s; do
  builtin test "$__agentbash_s" = on && builtin printf 'S\0%s\0' "$__agentbash_n"
done
builtin mapfile -t __agentbash_as < <(\builtin compgen -a)
for __agentbash_a in "${__agentbash_as[@]}"; do
  builtin printf 'A\0%s\0' "$__agentbash_a"; builtin alias -- "$__agentbash_a"; builtin printf '\0'
done
builtin printf 'E\0'
} >&4
fi
} 4>&1 >/dev/null 2>&1
fi
}`

// unhijack opens an `if` whose body runs only once `builtin` is the builtin: it turns POSIX mode on
// for a moment (by assigning POSIXLY_CORRECT, which no function can intercept), in which special
// builtins such as `unset` are found before functions, removes a function named `builtin`, and restores
// the mode the shell had. Turning POSIX mode on also turns inherit_errexit on, and turning it off does
// not turn that off again: its state is read before (from BASHOPTS, read-only) and put back, or every
// snapshot would hold `shopt -s inherit_errexit` and `set -e` would work differently in every command.
// A read-only function named `builtin`, or a read-only POSIXLY_CORRECT, skips the body: the dump then
// has no end, and the snapshot fails with a warning.
const unhijack = `case :$SHELLOPTS: in *:posix:*) __agentbash_posix=y ;; *) __agentbash_posix= ;; esac
case :$BASHOPTS: in *:inherit_errexit:*) __agentbash_ie=y ;; *) __agentbash_ie= ;; esac
POSIXLY_CORRECT=y
if [[ :$SHELLOPTS: == *:posix:* ]] && unset -f builtin && { [[ -n $__agentbash_posix ]] || unset POSIXLY_CORRECT; } &&
  { [[ -n $__agentbash_ie ]] || builtin shopt -u inherit_errexit; }; `

// dump is what the rc defined, as the dump script printed it.
type dump struct {
	builtins map[string]bool
	path     string
	funcs    []function // in the order bash listed them
	shopts   []string   // `shopt -p` lines
	setOpts  []string   // `set -o` names that are on
	aliases  [][2]string
}

type function struct{ name, body string }

// parseDump reads the NUL-separated records of [dumpScript]; a dump that does not end with its end
// record is [errIncomplete].
func parseDump(b []byte) (dump, error) {
	d := dump{builtins: map[string]bool{}}
	fields := strings.Split(string(b), "\x00")
	if n := len(fields); n > 0 && fields[n-1] == "" {
		fields = fields[:n-1]
	}
	need := map[string]int{"B": 1, "P": 1, "F": 2, "O": 1, "S": 1, "A": 2, "E": 0}
	for i := 0; i < len(fields); {
		kind := fields[i]
		n, ok := need[kind]
		if !ok || i+n >= len(fields) {
			return dump{}, fmt.Errorf("unexpected output of the snapshot shell near record %d", i)
		}
		f := fields[i+1 : i+1+n]
		switch kind {
		case "B":
			d.builtins[f[0]] = true
		case "P":
			d.path = f[0]
		case "F":
			if f[1] != "" { // a name `declare -f` could not find (one with a newline in it)
				d.funcs = append(d.funcs, function{f[0], f[1]})
			}
		case "O":
			d.shopts = append(d.shopts, f[0])
		case "S":
			d.setOpts = append(d.setOpts, f[0])
		case "A":
			v, ok := aliasValue(f[0], f[1])
			if !ok {
				return dump{}, fmt.Errorf("unexpected output of the snapshot shell for alias %q", f[0])
			}
			d.aliases = append(d.aliases, [2]string{f[0], v})
		case "E":
			if i+1 != len(fields) {
				return dump{}, errors.New("unexpected output of the snapshot shell after its end")
			}
			return d, nil
		}
		i += 1 + n
	}
	return dump{}, errIncomplete
}

// aliasValue is the value of alias name from line, what `alias name` printed: `alias name='value'`
// (`alias -- name=…` when name starts with "-", no `alias ` in POSIX mode), the value in single quotes,
// each single quote in it written as the four characters quote, backslash, quote, quote (bash's
// sh_single_quote).
func aliasValue(name, line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimPrefix(line, "alias ")
	line = strings.TrimPrefix(line, "-- ")
	q, ok := strings.CutPrefix(line, name+"=")
	if !ok || len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
		return "", false
	}
	return strings.ReplaceAll(q[1:len(q)-1], `'\''`, "'"), true
}

// leftOut reports whether functions and aliases called name stay out of the snapshot: the names of
// [CommonTools] and of the shell's builtins, so that the agent's commands, the snapshot itself and the
// loader of long commands (pkg/run), which call builtins through `builtin`, get the documented
// behaviour.
func (d dump) leftOut(name string) bool {
	return d.builtins[name] || name == "builtin" || slices.Contains(CommonTools, name)
}

// Shell options that are the snapshot shell's own state, not the user's choice, or that would change
// how the command runs (errexit, nounset …) or what it prints (xtrace, verbose). A compatNN option that
// is off is not written either: `shopt -u compat44` sets BASH_COMPAT (to the shell's own level), which
// the command would then see.
var (
	skipShopts = []string{"login_shell", "restricted_shell", "progcomp_alias"}
	skipSetOps = []string{"monitor", "history", "histexpand", "emacs", "vi", "onecmd", "restricted",
		"interactive-comments", "errexit", "nounset", "xtrace", "verbose", "noexec"}
)

// script writes the snapshot (and returns with it its definitions, see [Definitions]): options first (a function using extglob patterns only parses once extglob
// is on), then the PATH entries the rc added, the functions kept functions and aliases need (defined
// before the aliases, as `declare -f` printed them with the rc's aliases already expanded), the aliases,
// and last expand_aliases, so aliases work in the command. Its own commands are written `\builtin …`,
// so no alias or function (none named like a builtin is defined) changes them.
func (d dump) script(rc, inheritedPath string) (script, defs []byte) {
	var b strings.Builder
	fmt.Fprintf(&b, "# agentbash shell snapshot of %s: options, PATH additions, functions and aliases\n", rc)
	// Every command sources the snapshot, so its options are set in one command each way (`shopt -u` of
	// those off, `shopt -s` of those on, one `set -o` for the rest) rather than one command an option:
	// the same state (shopt goes through its list in order, each option on its own), for a quarter of the
	// time (0.05 against 0.2 ms with Debian's ~/.bashrc). An option's change is independent of the other
	// shopt options' (compatNN excepted, and only one of those is written); `set -o` still comes after.
	var off, on, set []string
	for _, l := range d.shopts {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "shopt" && !slices.Contains(skipShopts, f[2]) &&
			!(f[1] == "-u" && strings.HasPrefix(f[2], "compat")) {
			switch f[1] {
			case "-u":
				off = append(off, f[2])
			case "-s":
				on = append(on, f[2])
			}
		}
	}
	for _, name := range d.setOpts {
		if !slices.Contains(skipSetOps, name) {
			set = append(set, "-o", name)
		}
	}
	if len(off) > 0 {
		b.WriteString("\\builtin shopt -u " + strings.Join(off, " ") + "\n")
	}
	if len(on) > 0 {
		b.WriteString("\\builtin shopt -s " + strings.Join(on, " ") + "\n")
	}
	if len(set) > 0 {
		b.WriteString("\\builtin set " + strings.Join(set, " ") + "\n")
	}
	before, after := pathAdditions(inheritedPath, d.path)
	b.WriteString(pathScript(before, after))
	var aliases [][2]string
	for _, a := range d.aliases {
		if !d.leftOut(a[0]) {
			aliases = append(aliases, a)
		}
	}
	var ds strings.Builder
	for _, f := range neededFunctions(d.funcs, aliases, d.leftOut) {
		b.WriteString(f.body + "\n")
		ds.WriteString("F\x00" + f.name + "\x00" + f.body + "\x00")
	}
	for _, a := range aliases {
		b.WriteString("\\builtin alias -- " + quote(a[0]+"="+a[1]) + "\n")
		ds.WriteString("A\x00" + a[0] + "\x00" + a[1] + "\x00")
	}
	b.WriteString("\\builtin shopt -s expand_aliases\n\\builtin unset BASH_ENV\n")
	return []byte(b.String()), []byte(ds.String())
}

func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil { // only a NUL byte, which no bash string holds
		return "''"
	}
	return q
}

// neededFunctions keeps, in their order, the functions the agent can call — every function whose name
// does not start with "_" and is not leftOut — and every function those, or the aliases not leftOut,
// need: the closure over the names their text mentions. A name counts as mentioned when it appears as a
// word of the text split at shell punctuation, or split at every character that cannot be in a plain
// name (so `${x:-_h}`, `trap _h EXIT` and `cmd=_h` count); mentioning too much only costs a few bytes,
// missing one costs a "command not found". Helpers only called through a computed name (`"_$1"`) are
// not found. The rest — completion machinery such as bash-completion's ~80 `_` functions (57 KB) that
// no command calls — is left out.
func neededFunctions(funcs []function, aliases [][2]string, leftOut func(name string) bool) []function {
	index := map[string]int{}
	for i, f := range funcs {
		index[f.name] = i
	}
	keep := make([]bool, len(funcs))
	var queue []int
	mark := func(name string) {
		if i, ok := index[name]; ok && !keep[i] && !leftOut(name) {
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
		if !leftOut(a[0]) {
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
	b.WriteString("if \\builtin test -n \"$PATH\"; then PATH=$__agentbash_pre$PATH; else PATH=${__agentbash_pre%:}; fi\n")
	if len(after) > 0 {
		fmt.Fprintf(&b, "for __agentbash_d in %s; do case \":$PATH:\" in *\":$__agentbash_d:\"*) ;; "+
			"*) PATH=${PATH:+$PATH:}$__agentbash_d ;; esac; done\n", words(after))
	}
	b.WriteString("\\builtin export PATH\n\\builtin unset __agentbash_pre __agentbash_d\n")
	return b.String()
}
