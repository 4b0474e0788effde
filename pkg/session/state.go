package session

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// State is what a session keeps between commands (reference §7.1). Variables and functions are kept as bash
// prints them (`declare -p`, `declare -f`), so restoring them is bash's own re-input format.
type State struct {
	Cwd   run.Raw `json:"cwd"`             // where the command ended, as `pwd` printed it (raw bytes)
	Umask string  `json:"umask,omitempty"` // octal, as `umask` prints it
	// Shell options: the `set -o` and `shopt` options that are on and those that are off.
	SetOn    []string `json:"setOn,omitempty"`
	SetOff   []string `json:"setOff,omitempty"`
	ShoptOn  []string `json:"shoptOn,omitempty"`
	ShoptOff []string `json:"shoptOff,omitempty"`
	// Vars are the variables that differ from the environment the shell started with; Unset the
	// inherited ones the session removed.
	Vars  []Var    `json:"vars,omitempty"`
	Unset []string `json:"unset,omitempty"`
	// Functions is `declare -f`'s text; FunctionNames and ExportedFunctions name them.
	Functions         run.Raw  `json:"functions,omitempty"`
	FunctionNames     []string `json:"functionNames,omitempty"`
	ExportedFunctions []string `json:"exportedFunctions,omitempty"`
	Aliases           []Alias  `json:"aliases,omitempty"`
	// UnsetFunctions and Unaliases are functions and aliases of the rc's snapshot that the session removed.
	UnsetFunctions []string `json:"unsetFunctions,omitempty"`
	Unaliases      []string `json:"unaliases,omitempty"`
	// Sandbox is the strictest policy a command whose state the session kept ran under (reference §13): every
	// later command must be confined at least as much. nil when none was sandboxed.
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// SandboxWorkspace is the workspace of the session's first sandboxed command (absolute): the directory its
	// later sandboxed commands may write as theirs, wherever they cd (reference §13: the session's starting
	// directory).
	SandboxWorkspace string `json:"sandboxWorkspace,omitempty"`
}

// withoutBase leaves out of st the functions and aliases that are as base (the rc's snapshot the command
// started from) defines them, and records those of base the command removed: the rc's definitions come
// fresh with each command, and the session keeps only what its own commands defined or changed (README
// "Sessions"). A function the session exported is its own. When the functions cannot be told apart
// (declare -f's text does not split by name), all are kept.
func (st *State) withoutBase(base Base) {
	for _, name := range slices.Sorted(maps.Keys(base.Functions)) {
		if !slices.Contains(st.FunctionNames, name) {
			st.UnsetFunctions = append(st.UnsetFunctions, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(base.Aliases)) {
		if !slices.ContainsFunc(st.Aliases, func(a Alias) bool { return a.Name == name }) {
			st.Unaliases = append(st.Unaliases, name)
		}
	}
	st.Aliases = slices.DeleteFunc(st.Aliases, func(a Alias) bool {
		v, ok := base.Aliases[a.Name]
		return ok && v == string(a.Value)
	})
	defs := splitFunctions(string(st.Functions), st.FunctionNames)
	if len(base.Functions) == 0 || st.Functions == "" || len(defs) != len(st.FunctionNames) {
		return
	}
	var keep, names []string
	for i, name := range st.FunctionNames {
		rc, ok := base.Functions[name]
		if ok && strings.TrimSuffix(rc, "\n") == defs[i] && !slices.Contains(st.ExportedFunctions, name) {
			continue
		}
		keep, names = append(keep, defs[i]), append(names, name)
	}
	st.Functions, st.FunctionNames = run.Raw(strings.Join(keep, "\n")), names
}

// Base is what the command's rc snapshot defines (pkg/snapshot's Definitions): functions as `declare -f
// NAME` prints them and alias values, by name.
type Base struct {
	Functions map[string]string
	Aliases   map[string]string
}

// Var is one variable: its name and `declare -p`'s line(s) for it (`declare -x FOO="bar"`).
type Var struct {
	Name    string  `json:"name"`
	Declare run.Raw `json:"declare"`
}

// flags are the attribute letters of the declare line (`x`, `r`, `a` …), "" for none (`declare --`).
func (v Var) flags() string {
	rest, _ := strings.CutPrefix(string(v.Declare), "declare -")
	f, _, _ := strings.Cut(rest, " ")
	if f == "-" {
		return ""
	}
	return f
}

func (v Var) exported() bool { return strings.Contains(v.flags(), "x") }

// Alias is one alias.
type Alias struct {
	Name  string  `json:"name"`
	Value run.Raw `json:"value"`
}

// Options that are the shell's own condition rather than a choice a later command should inherit, or
// that would stop it from running: they are never restored.
var (
	// verbose is not kept: bash echoes every line it reads, so the next command's prelude would be printed
	// into its output. errexit and nounset are scoped to the command that set them: carried over, they
	// make later, unrelated commands stop silently (`false; echo after` printing nothing two calls later).
	skipSet = []string{"monitor", "history", "histexpand", "emacs", "vi", "onecmd", "restricted", "noexec", "privileged", "verbose",
		"errexit", "nounset"}
	// extdebug is not kept: set at start-up, it makes bash look for its debugger on every command.
	skipShopt = []string{"login_shell", "restricted_shell", "extdebug"}
)

// isIdentifier reports whether s is a name a shell variable can have: `[A-Za-z_][A-Za-z0-9_]*`.
func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !alnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// isUmask reports whether s is what `umask` prints: 3 or 4 octal digits.
func isUmask(s string) bool {
	return (len(s) == 3 || len(s) == 4) && strings.Trim(s, "01234567") == ""
}

// errNoDump, errEmptyDump, errHalfDump: why a command's state could not be kept.
var (
	errNoDump    = errors.New("the shell ended without running agentbash's EXIT trap")
	errEmptyDump = errors.New("the EXIT trap that saves it wrote nothing (the command disabled a builtin it needs, `builtin` itself with `enable -n`?)")
	errHalfDump  = errors.New("the shell's state dump was cut short")
)

// unwrittenDump is what the dump file holds when the EXIT trap never ran: the trap appends the state
// after it (parseDump cuts it off), or empties the file when it could not write the state, so a trap
// that ran but could write nothing is told from one that never ran. (Appending, not `>|`: truncating a
// file makes ext4 write it out when it is closed — its auto_da_alloc — which cost every command in a
// session a few hundred microseconds.)
const unwrittenDump = "agentbash: the EXIT trap has not run\n"

// parseDump reads what the EXIT trap wrote (see [dumpScript]): NUL-separated records, a tag then its
// field, ending with E. The variables kept are those that differ from the shell's initial environment
// (set or changed by this command or an earlier one, or no longer exported), but for bash's own and
// agentbash's per-run ones; an inherited variable that is gone is kept as unset. prev is the state the
// command started from and explicit the names of the request's explicit environment: one the command
// left as the request set it keeps the session's own entry for it (the request's value was for this
// command only).
func parseDump(data []byte, prev *State, explicit []string) (State, error) {
	data, untouched := bytes.CutPrefix(data, []byte(unwrittenDump))
	switch {
	case untouched && len(data) == 0:
		return State{}, errNoDump
	case len(data) == 0:
		return State{}, errEmptyDump
	}
	fields := bytes.Split(data, []byte{0})
	var st State
	var setOn, shoptOn, setNames, shoptNames []string
	var pwd, logical, decls, aliases string
	environ, startup := map[string]string{}, map[string]string{}
	i := 0
	next := func() (string, bool) {
		if i >= len(fields) {
			return "", false
		}
		i++
		return string(fields[i-1]), true
	}
	for {
		tag, ok := next()
		if !ok {
			return State{}, errHalfDump
		}
		if tag == "E" {
			break
		}
		a, ok := next()
		if !ok {
			return State{}, errHalfDump
		}
		switch tag {
		case "O": // SHELLOPTS when the command ended: the set -o options that were on
			setOn = strings.Split(a, ":")
		case "B": // BASHOPTS: the shopt options that were on
			shoptOn = strings.Split(a, ":")
		case "N", "I": // the initial environment, or the values bash gave itself: a count, then the entries
			n, err := strconv.Atoi(a)
			if err != nil || n < 0 || n > len(fields)-i {
				return State{}, errHalfDump
			}
			into := environ
			if tag == "I" {
				into = startup
			}
			for _, kv := range fields[i : i+n] {
				if k, v, ok := strings.Cut(string(kv), "="); ok {
					into[k] = v
				}
			}
			i += n
		case "M":
			if u := strings.TrimSpace(a); isUmask(u) {
				st.Umask = u
			}
		case "P": // `set +o`: every set -o option's name
			setNames = optionNames(a, "set")
		case "S": // `shopt -p`: every shopt option's name
			shoptNames = optionNames(a, "shopt")
		case "C": // `pwd`
			pwd = strings.TrimSuffix(a, "\n")
		case "D": // $PWD, when pwd could not say (the directory was removed)
			logical = a
		case "V":
			decls = a
		case "F":
			st.Functions = run.Raw(strings.TrimSuffix(a, "\n"))
		case "G": // `declare -F`: `declare -f NAME` or `declare -fx NAME` lines
			for _, l := range strings.Split(a, "\n") {
				flags, name, ok := strings.Cut(strings.TrimPrefix(l, "declare "), " ")
				if !ok {
					continue
				}
				st.FunctionNames = append(st.FunctionNames, name)
				if strings.Contains(flags, "x") {
					st.ExportedFunctions = append(st.ExportedFunctions, name)
				}
			}
		case "L":
			aliases = a
		default:
			return State{}, fmt.Errorf("state dump: unknown record %q", tag)
		}
	}
	st.Cwd = run.Raw(cmp.Or(pwd, logical))
	for _, n := range setNames {
		if !slices.Contains(skipSet, n) {
			if slices.Contains(setOn, n) {
				st.SetOn = append(st.SetOn, n)
			} else {
				st.SetOff = append(st.SetOff, n)
			}
		}
	}
	for _, n := range shoptNames {
		// compatNN options are kept through BASH_COMPAT, which setting one of them sets.
		if !slices.Contains(skipShopt, n) && !strings.HasPrefix(n, "compat") {
			if slices.Contains(shoptOn, n) {
				st.ShoptOn = append(st.ShoptOn, n)
			} else {
				st.ShoptOff = append(st.ShoptOff, n)
			}
		}
	}
	vars, err := parseDeclares(decls)
	if err != nil {
		return State{}, err
	}
	set := map[string]bool{}
	for _, v := range vars {
		set[v.Name] = true
		if isExcluded(v.Name) {
			continue
		}
		inherited, isInherited := environ[v.Name]
		flags := v.flags
		if v.Name == "OPTIND" {
			flags = strings.ReplaceAll(flags, "i", "") // bash's own attribute for it, always there
		}
		if isInherited && flags == "x" && v.scalar && v.value == inherited {
			// First, for every variable: one the request set explicitly keeps the session's own entry
			// even when it is also one bash gives itself (TERM, PATH, OPTIND from the environment).
			if slices.Contains(explicit, v.Name) && prev != nil {
				st.keep(prev, v.Name)
			}
			continue // as inherited
		}
		bashFlags := "" // the attributes bash gives it: exported when it came from the environment
		if isInherited {
			bashFlags = "x"
		}
		if value, ok := startup[v.Name]; ok && v.scalar && v.value == value && flags == bashFlags {
			// Bash exports what it took from the environment (IFS and OPTIND keep their own values), and
			// gives these no other attribute: one made read-only, an integer … is kept.
			continue // as bash set it
		}
		if v.Name == "OLDPWD" && !v.scalar && v.flags == "x" && !strings.Contains(string(v.Declare), "=") {
			// Bash declares OLDPWD exported without a value when the environment has none, or one that
			// is not a directory; restored, such a declaration would change nothing anyway.
			continue
		}
		st.Vars = append(st.Vars, v.Var)
	}
	// Unset: what the shell had when it started (from the environment, or given by bash itself: IFS,
	// OPTIND, PS4 …, which bash would set again) and no longer has.
	had := maps.Clone(startup)
	maps.Copy(had, environ)
	for _, k := range slices.Sorted(maps.Keys(had)) {
		if isIdentifier(k) && !isExcluded(k) && !set[k] {
			st.Unset = append(st.Unset, k)
		}
	}
	if st.Aliases, err = parseAliases(aliases); err != nil {
		return State{}, err
	}
	return st, nil
}

// keep copies prev's entry for variable name (its value, or its being unset) into st.
func (st *State) keep(prev *State, name string) {
	if j := slices.IndexFunc(prev.Vars, func(v Var) bool { return v.Name == name }); j >= 0 {
		st.Vars = append(st.Vars, prev.Vars[j])
	}
	if slices.Contains(prev.Unset, name) {
		st.Unset = append(st.Unset, name)
	}
}

// declared is a variable as `declare -p` printed it.
type declared struct {
	Var
	flags  string // the attribute letters, "" for none
	scalar bool   // a plain value (not an array, not declared without one)
	value  string // a scalar's value
}

// parseDeclares reads `declare -p`'s output (bash's own re-input format) with a real shell parser: one
// statement per variable, kept as its text. Bash 5 prints each variable on one line ($'…' for a value
// with a newline), and most lines are the same from one command of a session to the next, so the lines
// are parsed one by one through [declareLines]; output with a statement over several lines (an older
// bash) is parsed whole.
func parseDeclares(text string) ([]declared, error) {
	if out, ok, err := declareLines.parse(text); ok || err != nil {
		return out, err
	}
	return parseDeclaresWhole(text)
}

// parseDeclaresWhole parses `declare -p`'s output as one text.
func parseDeclaresWhole(text string) ([]declared, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return nil, fmt.Errorf("state dump: the variables: %w", err)
	}
	var out []declared
	for _, stmt := range f.Stmts {
		d, ok, err := declaredBy(stmt, text)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// declaredBy is the variable stmt (a statement of text) declares; false for a statement that is not a
// `declare` of one.
func declaredBy(stmt *syntax.Stmt, text string) (d declared, ok bool, err error) {
	dc, ok := stmt.Cmd.(*syntax.DeclClause)
	if !ok || dc.Variant.Value != "declare" {
		return d, false, nil
	}
	for _, a := range dc.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if flag, err := expand.Literal(nil, a.Value); err == nil && strings.HasPrefix(flag, "-") {
				d.flags += strings.TrimLeft(flag, "-")
			}
			continue
		}
		if a.Name == nil {
			continue
		}
		d.Name = a.Name.Value
		if a.Array == nil && !a.Naked {
			d.scalar = true
			if d.value, err = expand.Literal(nil, a.Value); err != nil {
				return d, false, fmt.Errorf("state dump: variable %s: %w", d.Name, err)
			}
		}
	}
	if !isIdentifier(d.Name) {
		return d, false, nil
	}
	d.Declare = run.Raw(text[stmt.Pos().Offset():stmt.End().Offset()])
	return d, true, nil
}

// declareLines parses `declare -p`'s output a line at a time, remembering what each line declared: a
// long-lived server's commands in a session then parse only the lines that changed. The memory is
// bounded: lines over 4 KiB are not remembered, and it is emptied when it holds more than 256 KiB (each
// distinct command adds a line, BASH_EXECUTION_STRING's).
var declareLines = &lineCache{m: map[string]lineDecls{}}

type lineCache struct {
	mu     sync.Mutex
	parser *syntax.Parser
	m      map[string]lineDecls
	bytes  int
}

// lineDecls is what one line declares (none, one, or more).
type lineDecls []declared

const (
	lineCacheMaxLine  = 4 << 10
	lineCacheMaxBytes = 256 << 10
)

// parse parses text line by line; false (and no error) when a line is not whole statements on its
// own, for the caller to parse text whole.
func (c *lineCache) parse(text string) ([]declared, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parser == nil {
		c.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	var out []declared
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if ds, ok := c.m[line]; ok {
			out = append(out, ds...)
			continue
		}
		if strings.HasSuffix(line, "\\") {
			return nil, false, nil // a line continued on the next
		}
		f, err := c.parser.Parse(strings.NewReader(line), "")
		if err != nil {
			return nil, false, nil // a statement over several lines (or not bash's output at all)
		}
		var ds lineDecls
		for _, stmt := range f.Stmts {
			d, ok, err := declaredBy(stmt, line)
			if err != nil {
				return nil, false, err
			}
			if ok {
				ds = append(ds, d)
			}
		}
		out = append(out, ds...)
		if len(line) <= lineCacheMaxLine {
			if c.bytes+len(line) > lineCacheMaxBytes {
				clear(c.m)
				c.bytes = 0
			}
			// A copy: the line is a piece of the whole dump, which it would keep alive (and what ds
			// holds is cut from the line, so it is copied with it).
			line = strings.Clone(line)
			for i := range ds {
				ds[i].Declare = run.Raw(strings.Clone(string(ds[i].Declare)))
				ds[i].Name, ds[i].flags, ds[i].value = strings.Clone(ds[i].Name), strings.Clone(ds[i].flags), strings.Clone(ds[i].value)
			}
			c.m[line] = ds
			c.bytes += 2 * len(line)
		}
	}
	return out, true, nil
}

// parseAliases reads `alias -p`'s output: `alias NAME='VALUE'` lines.
func parseAliases(text string) ([]Alias, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return nil, fmt.Errorf("state dump: the aliases: %w", err)
	}
	var out []Alias
	for _, stmt := range f.Stmts {
		call, ok := stmt.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) != 2 || call.Args[0].Lit() != "alias" {
			continue
		}
		def, err := expand.Literal(nil, call.Args[1])
		if err != nil {
			return nil, fmt.Errorf("state dump: an alias: %w", err)
		}
		if name, value, ok := strings.Cut(def, "="); ok {
			out = append(out, Alias{Name: name, Value: run.Raw(value)})
		}
	}
	return out, nil
}

// optionNames takes the option names from `set +o` / `shopt -p` lines (`set -o errexit`, `shopt -u extglob`).
func optionNames(text, command string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == command {
			out = append(out, f[2])
		}
	}
	return out
}

// definer reports whether a name is a function or an alias the command's shell may have: the session's,
// the rc's (p.Base), or a function exported through the environment (this process's, which the command
// inherits, or p.Env's).
func (l *Lease) definer(p Prelude) func(string) bool {
	exported := map[string]bool{} // functions exported through the environment: BASH_FUNC_NAME%%=…
	for _, env := range [][]string{os.Environ(), p.Env} {
		for _, kv := range env {
			if rest, ok := strings.CutPrefix(kv, "BASH_FUNC_"); ok {
				if name, _, ok := strings.Cut(rest, "%%="); ok {
					exported[name] = true
				}
			}
		}
	}
	return func(name string) bool {
		if _, ok := p.Base.Functions[name]; ok {
			return true
		}
		if _, ok := p.Base.Aliases[name]; ok {
			return true
		}
		return exported[name] || slices.Contains(l.state.FunctionNames, name) ||
			slices.ContainsFunc(l.state.Aliases, func(a Alias) bool { return a.Name == name })
	}
}

// evaluating reports whether the state makes the shell evaluate something on its own as a command runs:
// xtrace expands PS4 before each command (PS4='$((n++))' assigns), and reading a nameref to an array
// element evaluates its subscript (declare -n r='a[i=1]'). No command is taken for [unchanging] then.
func (st *State) evaluating() bool {
	return slices.Contains(st.SetOn, "xtrace") || slices.ContainsFunc(st.Vars, func(v Var) bool {
		return strings.Contains(v.flags(), "n") && strings.Contains(string(v.Declare), "[")
	})
}

// trapLine is the prelude's line that sets the EXIT trap dumping into path. The same few paths come back
// command after command (one per session), and quoting the dump script is a good part of writing a
// prelude, so the last line made is kept.
func trapLine(path string) string {
	lastTrap.mu.Lock()
	defer lastTrap.mu.Unlock()
	if lastTrap.path != path {
		lastTrap.path, lastTrap.line = path, "\\builtin trap -- "+quote(dumpScript(path))+" EXIT\n"
	}
	return lastTrap.line
}

var lastTrap struct {
	mu         sync.Mutex
	path, line string
}

// quote is s as one bash word.
func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil { // a NUL byte, which no bash string holds
		return "''"
	}
	return q
}

// body is the shell text that restores st, but for the `set -o` options (see [State.setLine]): shopt
// options first, variables, the inherited variables the session unset, the umask; then the functions,
// each read on its own with alias expansion off (declare -f printed them with their aliases already
// expanded) and extglob on, and the aliases. Every builtin is called as `\builtin`, so no function or
// alias the state defines can change the rest; errors go to /dev/null (see [writeGroups]).
func (st *State) body() string {
	var b strings.Builder
	b.WriteString("\\builtin shopt -u expand_aliases\n")
	// expand_aliases stays off until the prelude's last line (see [State.setLine]).
	notAliases := func(n string) bool { return n == "expand_aliases" }
	var lines []string
	if on := slices.DeleteFunc(slices.Clone(st.ShoptOn), notAliases); len(on) > 0 {
		lines = append(lines, "\\builtin shopt -s "+strings.Join(on, " "))
	}
	if off := slices.DeleteFunc(slices.Clone(st.ShoptOff), notAliases); len(off) > 0 {
		lines = append(lines, "\\builtin shopt -u "+strings.Join(off, " "))
	}
	for _, v := range st.Vars {
		lines = append(lines, string(v.Declare)) // `declare`, not `\builtin declare`: only the keyword takes a=(…)
		if !v.exported() {
			lines = append(lines, "\\builtin declare +x -- "+v.Name) // inherited, then unexported
		}
	}
	for _, n := range st.Unset {
		lines = append(lines, "\\builtin unset -v -- "+n)
	}
	if st.Umask != "" {
		lines = append(lines, "\\builtin umask "+st.Umask)
	}
	writeGroups(&b, lines)
	if st.Functions != "" {
		// Read with extglob on whatever the state says (a function defined while it was on parses only
		// then; the options are restored after), each function on its own: one that bash cannot read
		// again costs only itself, and no list grows long enough to overflow bash's stack.
		if !slices.Contains(st.ShoptOn, "extglob") {
			b.WriteString("\\builtin shopt -s extglob\n")
		}
		for _, f := range splitFunctions(string(st.Functions), st.FunctionNames) {
			b.WriteString("\\builtin eval -- " + quote(f) + " 2>/dev/null\n")
		}
		if !slices.Contains(st.ShoptOn, "extglob") {
			b.WriteString("\\builtin shopt -u extglob\n")
		}
	}
	lines = lines[:0]
	for _, f := range st.ExportedFunctions {
		lines = append(lines, "\\builtin export -f -- "+quote(f))
	}
	for _, a := range st.Aliases {
		lines = append(lines, "\\builtin alias -- "+quote(a.Name+"="+string(a.Value)))
	}
	for _, n := range st.UnsetFunctions {
		lines = append(lines, "\\builtin unset -f -- "+quote(n))
	}
	for _, n := range st.Unaliases {
		lines = append(lines, "\\builtin unalias -- "+quote(n))
	}
	writeGroups(&b, lines)
	return b.String()
}

// writeGroups writes lines as `{ … } 2>/dev/null` groups of at most linesPerGroup lines: a restore that
// fails (a read-only variable set again) says nothing, and bash, which recurses through a group's list,
// never meets a list long enough to overflow its stack (14,000 variables in one group did: SIGSEGV before
// the command ran, on every command of the session).
func writeGroups(b *strings.Builder, lines []string) {
	for len(lines) > 0 {
		n := min(len(lines), linesPerGroup)
		b.WriteString("{\n" + strings.Join(lines[:n], "\n") + "\n} 2>/dev/null\n")
		lines = lines[n:]
	}
}

// splitFunctions cuts the text of `declare -f` into one definition per function. names are the functions
// in the order `declare -F` gave them, the order `declare -f` prints them in; a definition starts at the
// line `NAME () ` of the next name expected followed by the line `{ ` (as declare -f prints every body), so
// a heredoc line that looks like one does not cut. When the
// text does not split into len(names) definitions it is returned whole.
func splitFunctions(text string, names []string) []string {
	var defs []string
	next, start := 0, 0
	lines := strings.SplitAfter(text, "\n")
	at := 0
	for i, l := range lines {
		if next < len(names) && l == names[next]+" () \n" && i+1 < len(lines) && lines[i+1] == "{ \n" {
			if next > 0 {
				defs = append(defs, strings.TrimSuffix(text[start:at], "\n"))
			}
			start = at
			next++
		}
		at += len(l)
	}
	if next == 0 {
		return []string{text}
	}
	defs = append(defs, strings.TrimSuffix(text[start:], "\n"))
	if len(defs) != len(names) {
		return []string{text}
	}
	return defs
}

// linesPerGroup is how many lines one `{ … }` group of the restore holds (see [writeGroups]).
const linesPerGroup = 500

// setLine restores expand_aliases (when the state had it on, or there is no state: session shells
// expand aliases) and, unless later, the `set -o` options. It is the prelude's last command, so
// errexit, nounset or xtrace the session turned on apply to the command and to nothing of the prelude.
// nil st: a new session.
func (st *State) setLine(later bool) string {
	words := []string{}
	if st == nil || slices.Contains(st.ShoptOn, "expand_aliases") {
		words = append(words, "\\builtin shopt -s expand_aliases;")
	}
	if set := st.setOptions(); set != "" && !later {
		words = append(words, set+";")
	}
	if len(words) == 0 {
		return ""
	}
	return "{ " + strings.Join(words, " ") + " } 2>/dev/null\n"
}

// setOptions is the `set` command that restores the `set -o` options, "" for none.
func (st *State) setOptions() string {
	if st == nil || len(st.SetOn)+len(st.SetOff) == 0 {
		return ""
	}
	set := []string{"\\builtin set"}
	for _, n := range st.SetOff {
		if !slices.Contains(skipSet, n) { // a state saved before an option was skipped
			set = append(set, "+o", n)
		}
	}
	for _, n := range st.SetOn {
		if !slices.Contains(skipSet, n) {
			set = append(set, "-o", n)
		}
	}
	if len(set) == 1 {
		return ""
	}
	return strings.Join(set, " ")
}

// OptionsPrefix is shell text that restores the session's `set -o` options, to put before a command
// on its first line (`PREFIX COMMAND`, as shell.prefix is) when the prelude left them out
// ([Prelude].OptionsInCommand); "" when there are none.
func (l *Lease) OptionsPrefix() string {
	if set := l.state.setOptions(); set != "" {
		return "{ " + set + "; } 2>/dev/null;"
	}
	return ""
}

// Prelude is how one command enters its session.
type Prelude struct {
	// Env is the request's explicit environment as KEY=VALUE layers (later wins): shell.env, --env, the
	// request's own. It is set again after the state, so it wins over the session's values.
	Env []string
	// BashEnv is the file BASH_ENV would name without the session ("" for none): agentbash's snapshot of
	// ~/.bashrc, or the user's own file. The prelude sources it first.
	BashEnv string
	// KeepBashEnv leaves BASH_ENV set to BashEnv in the command's environment, as it is without a
	// session for a user's own BASH_ENV (the snapshot unsets it).
	KeepBashEnv bool
	// Capture sets the EXIT trap that saves what the command leaves, for [Lease.Commit]. Tasks do not
	// capture: they never write the session back.
	Capture bool
	// Base is what BashEnv defines when it is agentbash's snapshot of the rc (empty otherwise): what the
	// command leaves as Base defines it is not kept, so the rc's definitions come fresh each command.
	Base Base
	// OptionsInCommand leaves the `set -o` options out of the prelude, for [Lease.OptionsPrefix] to
	// restore on the command's first line: for a command that reaches the shell through pkg/run's loader
	// (too long for one argument), which must run without the session's errexit or xtrace.
	OptionsInCommand bool
	// Command is the command's text, and InSessionCwd says it starts where the session's last command
	// ended (the request named no cwd): a command that [unchanging] says cannot change the state then
	// gets no EXIT trap, and Commit keeps the state as it was.
	Command      string
	InSessionCwd bool
	// BaseUnknown says BashEnv is agentbash's snapshot but what it defines could not be read (Base is
	// empty for want of it): no command is taken for unchanging then.
	BaseUnknown bool
}

// Prelude writes the file the command's shell sources through BASH_ENV and returns its path: the
// user's BASH_ENV (the snapshot), the session's state, the explicit environment, the EXIT trap that dumps
// the state (when p.Capture), and last the `set -o` options. Bash reads a sourced file whole before it
// runs any of it, so a task's prelude empties itself at once (its secrets do not stay on disk after the
// start, and no lease waits for it).
func (l *Lease) Prelude(p Prelude) (string, error) {
	id := nonce()
	var b strings.Builder
	fmt.Fprintf(&b, "# agentbash session %s: the state its last command left, this command's environment", l.Name)
	path := filepath.Join(l.dir, taskPrefix+id+".sh")
	l.unchanging = p.Capture && l.state != nil && p.InSessionCwd && !p.OptionsInCommand &&
		!(p.BashEnv != "" && p.KeepBashEnv) && !p.BaseUnknown && // what the rc defines must be known
		!l.state.evaluating() &&
		unchanging(p.Command, l.definer(p))
	if l.unchanging {
		path = filepath.Join(l.dir, preludeFile)
		b.WriteString(" (this command cannot change it: no EXIT trap)")
	} else if p.Capture {
		path = filepath.Join(l.dir, preludeFile)
		l.dump = filepath.Join(l.dir, dumpFile)
		b.WriteString(", and the EXIT trap that saves what it leaves")
		// Made here, 0600, so the trap's `>>` writes into a private file whatever the command's umask.
		if err := rewrite(l.dump, []byte(unwrittenDump)); err != nil {
			return "", fmt.Errorf("session %s: %w", l.Name, err)
		}
	}
	b.WriteString(".\n")
	if l.dump != "" {
		b.WriteString(startupLine())
	}
	if !p.Capture {
		b.WriteString("{ \\builtin : >| " + quote(path) + "; } 2>/dev/null\n")
	}
	b.WriteString("\\builtin unset BASH_ENV\n")
	if p.BashEnv != "" {
		if p.KeepBashEnv {
			b.WriteString("\\builtin export BASH_ENV=" + quote(p.BashEnv) + "\n")
		}
		b.WriteString("\\builtin source -- " + quote(p.BashEnv) + "\n")
	}
	if l.dump != "" {
		// Before the state: whatever of it fails to restore, the command's end is still saved, so a
		// broken state cannot stick.
		b.WriteString(trapLine(l.dump))
	}
	if l.state != nil {
		b.WriteString(l.state.body())
	}
	var explicit []string
	if len(p.Env) > 0 {
		b.WriteString("{\n")
		for _, kv := range p.Env {
			if k, _, ok := strings.Cut(kv, "="); ok && isIdentifier(k) {
				b.WriteString("\\builtin export -- " + quote(kv) + "\n")
				if !slices.Contains(explicit, k) {
					explicit = append(explicit, k)
				}
			}
		}
		b.WriteString("} 2>/dev/null\n")
	}
	if p.Capture {
		l.explicit, l.base = explicit, p.Base
	}
	b.WriteString(l.state.setLine(p.OptionsInCommand))
	write := func() error { return os.WriteFile(path, []byte(b.String()), 0o600) }
	if p.Capture {
		write = func() error { return rewrite(path, []byte(b.String())) }
	}
	if err := write(); err != nil {
		return "", fmt.Errorf("session %s: %w", l.Name, err)
	}
	if p.Capture {
		l.prelude = path
	}
	return path, nil
}

// Commit keeps what the command left as the session's state when it ended by itself (status exited,
// whatever its exit code): finalCwd is then where it ended and kept is true. A command that timed out,
// was cancelled or killed leaves the state as it was (nothing is read). A command that ended by itself
// but whose shell never ran the EXIT trap (it set one of its own, or ran exec) also leaves it, and
// warning says so. err is a state that could not be written.
func (l *Lease) Commit(endedByItself bool) (finalCwd string, kept bool, warning string, err error) {
	if !endedByItself || l.dump == "" && !l.unchanging {
		return "", false, "", nil
	}
	if l.stricter {
		whose := "the session's"
		if l.state == nil || l.state.Sandbox == nil {
			whose = "its server's" // the session's first command, narrowed by its request
		}
		return "", false, fmt.Sprintf(StricterWarning, l.Name, describe(l.sandbox), whose, describe(l.than)), nil
	}
	var st State
	if l.unchanging {
		st = *l.state
	} else {
		data, err := readRegular(l.dump)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			// The command replaced its dump by something else (a link, a FIFO, a huge file).
			return "", false, fmt.Sprintf("session %s: the state was not saved (%v); the session keeps the state it had", l.Name, err), nil
		}
		if err != nil {
			return "", false, "", fmt.Errorf("session %s: read the state: %w", l.Name, err)
		}
		st, err = parseDump(data, l.state, l.explicit)
		if errors.Is(err, errNoDump) {
			return "", false, fmt.Sprintf(NotSavedWarning, l.Name), nil
		}
		if err != nil {
			return "", false, fmt.Sprintf("session %s: the state was not saved (%v); the session keeps the state it had", l.Name, err), nil
		}
		st.withoutBase(l.base)
	}
	st.Sandbox, st.SandboxWorkspace = l.sandbox, l.workspace
	if l.state != nil {
		if l.sandbox == nil { // RunsUnder was not asked: the recorded policy stays
			st.Sandbox = l.state.Sandbox
		}
		st.SandboxWorkspace = cmp.Or(st.SandboxWorkspace, l.state.SandboxWorkspace)
	}
	out, err := json.Marshal(stored{Name: l.Name, State: st})
	// Most commands (a build, a test, a grep) leave the state as it was. Replacing a file by a rename
	// makes ext4 write the new one out at once (its auto_da_alloc), which costs a command in a session
	// a few hundred microseconds: an unchanged state is not written again.
	if err == nil && !bytes.Equal(out, l.saved) {
		err = writeFile(filepath.Join(l.dir, stateFile), out)
	}
	if err != nil {
		return "", false, "", fmt.Errorf("session %s: save the state: %w", l.Name, err)
	}
	l.state, l.Cwd, l.saved = &st, string(st.Cwd), out
	return string(st.Cwd), true, "", nil
}

// StricterWarning is the warning of a command that ran in a sandboxed session under a stricter sandbox than
// the session's, or as a session's first command than its server's (%s: the session's name, the command's
// sandbox (describe), whose, theirs).
const StricterWarning = "session %s: this command ran under a stricter sandbox (%s) than %s (%s), so what it " +
	"changed (cd, variables, functions) was not kept: the session goes on as it was"

// describe is a policy in a few words: its mode and network, and with the proxy its hosts.
func describe(p *sandbox.Policy) string {
	s := fmt.Sprintf("%s, network %s", p.Mode, cmp.Or(p.Network, sandbox.NetworkOff))
	if p.Network == sandbox.NetworkProxy {
		s += " to " + cmp.Or(strings.Join(p.AllowHosts, ", "), "no host")
	}
	return s
}

// NotSavedWarning is the warning of a command whose shell ended without running the EXIT trap that saves
// the session's state (%s: the session's name).
const NotSavedWarning = "session %s: the state was not saved: the shell ended without running agentbash's " +
	"EXIT trap (the command set an EXIT trap of its own, or ran exec); the session keeps the state it had"

// RunsUnder checks that a command confined by policy (nil: not sandboxed) may run in the session: once a
// command of the session ran sandboxed and the session kept its state, every later command must be confined
// at least as much (reference §13), so what a sandboxed command defined never runs unconfined. The error is
// the refusal's text. On success policy is what Commit records (it is at least as strict as the recorded),
// with workspace, the command's sandboxed workspace ("" for none), unless the session has one already.
// floor, when set, is the sandbox of the server the command came through, which the request tightened: a
// session's first command confined more than its server runs, but its changes are not kept, as for a
// command confined more than the session (else one request that narrowed its hosts would lock an MCP
// connection's session out of its server's own policy).
func (l *Lease) RunsUnder(policy, floor *sandbox.Policy, workspace string) error {
	var recorded *sandbox.Policy
	if l.state != nil {
		recorded = l.state.Sandbox
	}
	if recorded == nil {
		l.sandbox, l.workspace = policy, workspace
		if floor != nil && floor.On() && policy != nil && floor.Within(*policy) != nil {
			l.stricter, l.than = true, floor
		}
		return nil
	}
	p := sandbox.Policy{}
	if policy != nil {
		p = *policy
	}
	if err := p.Within(*recorded); err != nil {
		return fmt.Errorf("Session %s was created with --sandbox %s (network %s), and this command's sandbox is "+
			"looser (%v): what the session's commands defined runs only as confined as they were; run the "+
			"command with the session's sandbox, or in another session", l.Name, recorded.Mode,
			cmp.Or(recorded.Network, sandbox.NetworkOff), err)
	}
	l.sandbox, l.workspace = policy, workspace
	// A command confined more than the session's would ratchet it: after one read-only command, the session
	// could never write again (an MCP connection's session could not be left). It runs in the session's state
	// but its own changes are not kept, and Commit says so.
	l.stricter, l.than = recorded.Within(p) != nil, recorded
	return nil
}

// SandboxWorkspace is the workspace the session's sandboxed commands write as theirs ("" when none ran):
// the first one's, wherever the session has cd'd since.
func (l *Lease) SandboxWorkspace() string {
	if l.state == nil {
		return ""
	}
	return l.state.SandboxWorkspace
}
