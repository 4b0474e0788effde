package intercept

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// simpleCommands parses command as Bash and returns the text that patterns see for each simple command
// (syntax.CallExpr with at least one word), in source order: every command of `&&`, `||`, `;` lists,
// pipelines, subshells, `{ }` groups, if/for/while/case bodies, functions, `$(…)`, backticks and `<(…)`.
// It reports false when the command does not parse.
//
// The text of a simple command is built from the source bytes, not reprinted:
//
//   - a later stage of a pipeline starts with its operator and a space (`| grep x`, `|& tail -f`), so a
//     pattern anchored at the command name (`^grep`) never sees a filter that reads its stdin from the pipe;
//   - then the words as written, joined by single spaces (assignments before the name are left out:
//     `LC_ALL=C grep x f` reads `grep x f`), except that leading wrapper words that run the rest as a
//     command are left out (`sudo -n cat f`, `env X=1 cat f`, `command cat f`, `nice -n 5 cat f`,
//     `timeout 5 cat f` all read `cat f`; see unwrap, which also says why xargs is kept) and the command
//     name is unquoted and reduced to its base name (`\cat f`, `'cat' f`, `/bin/cat f` read `cat f`);
//   - then the command's redirections as written (a heredoc as its operator and delimiter, `<<EOF`, without
//     the body), then those of the enclosing compound commands (`{ echo a; } > f` gives `echo a > f`);
//     a pipeline's earlier stages inherit none, their output goes to the pipe.
//
// Redirections that write no file are left out: descriptor duplications (`2>&1`, `>&2`, `<&3`, `>&-`),
// redirections to or from /dev/null, /dev/stdin, /dev/stdout, /dev/stderr, /dev/tty, /dev/fd/N and
// /proc/self/fd/N, `>&` to a target with an expansion (`>&${fd}`, taken for a descriptor number), and
// redirections to a process substitution (`> >(tee log)`, whose commands are walked on their own). Input
// redirections from a file (`< in.txt`) are kept: they are reads, not writes.
func simpleCommands(command string) ([]string, bool) {
	w, ok := walk(command)
	if !ok {
		return nil, false
	}
	return w.cmds, true
}

// walk parses command and collects its simple commands: cmds as patterns see them (unwrapped), and
// written, for each, the same text with the wrapper words and the command name as written ("" when it is
// the same), so that a rule about the wrapper itself (`^sudo\b`) still fires.
func walk(command string) (*walker, bool) {
	src := strings.TrimSpace(command)
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	w := &walker{src: src}
	for _, st := range file.Stmts {
		w.stmt(st, nil, "")
	}
	return w, true
}

type walker struct {
	src     string
	cmds    []string
	written []string
}

// stmt records the simple commands of s. inherited are the kept redirections of the enclosing compound
// commands; pipeOp is the pipe operator before s when s is a later stage of a pipeline.
func (w *walker) stmt(s *syntax.Stmt, inherited []string, pipeOp string) {
	redirs := slices.Concat(w.redirs(s.Redirs), inherited)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		if len(c.Args) > 0 {
			text, written := w.text(pipeOp, c.Args, redirs, true), w.text(pipeOp, c.Args, redirs, false)
			if written == text {
				written = ""
			}
			w.cmds = append(w.cmds, text)
			w.written = append(w.written, written)
		}
		for _, a := range c.Assigns {
			w.substs(a)
		}
		for _, a := range c.Args {
			w.substs(a)
		}
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.stmt(c.X, nil, pipeOp)
			w.stmt(c.Y, redirs, c.Op.String())
		default:
			w.stmt(c.X, redirs, "")
			w.stmt(c.Y, redirs, "")
		}
	default:
		syntax.Walk(c, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				w.stmt(n, redirs, "")
				return false
			case *syntax.CmdSubst, *syntax.ProcSubst:
				w.substs(n)
				return false
			}
			return true
		})
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			w.substs(r.Word)
		}
		if r.Hdoc != nil {
			w.substs(r.Hdoc)
		}
	}
}

// substs records the simple commands inside the command and process substitutions of n.
func (w *walker) substs(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			for _, st := range n.Stmts {
				w.stmt(st, nil, "")
			}
			return false
		case *syntax.ProcSubst:
			for _, st := range n.Stmts {
				w.stmt(st, nil, "")
			}
			return false
		}
		return true
	})
}

func (w *walker) text(pipeOp string, args []*syntax.Word, redirs []string, unwrapped bool) string {
	var b strings.Builder
	if pipeOp != "" {
		b.WriteString(pipeOp)
		b.WriteByte(' ')
	}
	start := 0
	if unwrapped {
		start = unwrap(args)
	}
	for i, a := range args[start:] {
		if i > 0 {
			b.WriteByte(' ')
			b.WriteString(w.slice(a.Pos(), a.End()))
			continue
		}
		if unwrapped {
			b.WriteString(w.name(a))
		} else {
			b.WriteString(w.slice(a.Pos(), a.End()))
		}
	}
	for _, r := range redirs {
		b.WriteByte(' ')
		b.WriteString(r)
	}
	return b.String()
}

// redirs returns the source text of the redirections that are kept (see simpleCommands).
func (w *walker) redirs(rs []*syntax.Redirect) []string {
	var out []string
	for _, r := range rs {
		if writesNoFile(r) || r.Word == nil {
			continue
		}
		out = append(out, w.slice(r.Pos(), r.Word.End()))
	}
	return out
}

func (w *walker) slice(from, to syntax.Pos) string {
	i, j := int(from.Offset()), int(to.Offset())
	if !from.IsValid() || !to.IsValid() || i > j || j > len(w.src) {
		return ""
	}
	return w.src[i:j]
}

// writesNoFile reports whether r only duplicates a descriptor or points at a device or a process
// substitution, which are no files.
func writesNoFile(r *syntax.Redirect) bool {
	if r.Word != nil && len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return true
		}
	}
	target := literal(r.Word)
	switch r.Op {
	case syntax.DplIn:
		return true
	case syntax.DplOut:
		// `>&${fd}`: a target with an expansion is taken for a descriptor number.
		if target == "-" || digits(target) || target == "" {
			return true
		}
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false
	}
	switch target {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(target, dir); ok && digits(n) {
			return true
		}
	}
	return false
}

// literal returns the value of a word made only of literals and quoted literals, with quotes and backslash
// escapes removed (`\cat`, `'cat'` and `"c"at` give `cat`), or "".
func literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return ""
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				b.WriteString(unescape(lit.Value, "$`\"\\"))
			}
		default:
			return ""
		}
	}
	return b.String()
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// name returns the command name word as patterns see it: unquoted and unescaped (`\cat`, `'cat'`, `"cat"`
// give `cat`) and reduced to its base name (`/bin/cat`, `./cat` give `cat`). A name that is not a plain word
// after that (an expansion, a space, a shell metacharacter) is kept as written.
func (w *walker) name(a *syntax.Word) string {
	if n := commandName(a); n != "" {
		return n
	}
	return w.slice(a.Pos(), a.End())
}

// commandName returns the unquoted base name of a command word, or "" when it is not a plain word.
func commandName(a *syntax.Word) string {
	v := literal(a)
	if i := strings.LastIndexByte(v, '/'); i >= 0 {
		v = v[i+1:]
	}
	if v == "" || strings.ContainsAny(v, " \t\n\"'\\$`<>|&;()*?[]{}~#=") {
		return ""
	}
	return v
}

// unwrap returns the index in args of the command that runs when the leading words are wrappers that run
// the rest of the words as a command: sudo (with its options and NAME=VALUE words), env (options and
// NAME=VALUE words), command, builtin, exec, nice, nohup, timeout (options and the duration), stdbuf and
// time (options). Wrappers nest (`sudo env X=1 nice cat f`). It returns 0 — the words are kept as written —
// when a wrapper runs no command (`env`, `sudo -i`), only looks a command up (`command -v rg`), edits
// (`sudo -e f`) or takes the command in a string (`env -S 'cat f'`), or when an option word or the command
// name is no plain word (`sudo $opts cat f`, `sudo "$cmd" f`).
//
// xargs is deliberately not unwrapped: `ls | xargs cat` reads files whose names come from stdin, which no
// read/grep tool call can name, so it is treated like a filter. The built-in in-place edit rules still see
// `xargs sed -i` (and `find … -exec sed -i … \;`) themselves: those edit files whatever the names are.
func unwrap(args []*syntax.Word) int {
	i := 0
	for i < len(args) {
		var next int
		switch commandName(args[i]) {
		case "sudo":
			next = skipOptions(args, i+1, "ugCDprtTURh", "user group close-from chdir prompt role type command-timeout other-user chroot host",
				"elvVK", "edit list validate version remove-timestamp help")
			next = skipAssignments(args, next)
		case "env":
			next = skipOptions(args, i+1, "uC", "unset chdir", "S", "split-string help version")
			next = skipAssignments(args, next)
		case "command":
			next = skipOptions(args, i+1, "", "", "vV", "")
		case "builtin", "nohup":
			next = skipOptions(args, i+1, "", "", "", "")
		case "exec":
			next = skipOptions(args, i+1, "a", "", "", "")
		case "nice":
			next = skipOptions(args, i+1, "n", "adjustment", "", "help version")
		case "timeout":
			next = skipOptions(args, i+1, "ks", "kill-after signal", "", "help version")
			if next > 0 && next < len(args) {
				next++ // the duration
			}
		case "stdbuf":
			next = skipOptions(args, i+1, "ioe", "input output error", "", "help version")
		case "time":
			next = skipOptions(args, i+1, "fo", "format output", "", "help version")
		case "":
			return 0 // not a plain word: the command is unknown (`sudo "$cmd" f`)
		default:
			return i
		}
		if next <= 0 || next >= len(args) {
			return 0
		}
		i = next
	}
	return 0
}

// skipOptions returns the index of the first word of args[i:] that is no option, after `--` if there is one.
// withArg lists the short options (letters) and long options (space-separated names) that take an argument,
// in the same word or the next; stop lists those after which the wrapper runs no command of its own, for
// which skipOptions returns -1, as it does for an option word that is no plain word. A word that is a
// negative number (`nice -10`) is an option.
func skipOptions(args []*syntax.Word, i int, withArg, longWithArg, stop, longStop string) int {
	for ; i < len(args); i++ {
		v := literal(args[i])
		switch {
		case v == "--":
			return i + 1
		case v == "" && len(args[i].Parts) > 0:
			if _, ok := args[i].Parts[0].(*syntax.Lit); ok && strings.HasPrefix(args[i].Parts[0].(*syntax.Lit).Value, "-") {
				return -1 // an option with an expansion in it
			}
			return i
		case strings.HasPrefix(v, "--"):
			name, _, hasValue := strings.Cut(v[2:], "=")
			if slices.Contains(strings.Fields(longStop), name) {
				return -1
			}
			if !hasValue && slices.Contains(strings.Fields(longWithArg), name) {
				i++
			}
		case len(v) > 1 && v[0] == '-':
			for k := 1; k < len(v); k++ {
				if strings.IndexByte(stop, v[k]) >= 0 {
					return -1
				}
				if strings.IndexByte(withArg, v[k]) >= 0 {
					if k == len(v)-1 {
						i++
					}
					break
				}
			}
		default:
			return i
		}
	}
	return i
}

// skipAssignments returns the index of the first word of args[i:] that is no NAME=VALUE word, or i when i
// is negative.
func skipAssignments(args []*syntax.Word, i int) int {
	for i >= 0 && i < len(args) && isAssignment(args[i]) {
		i++
	}
	return i
}

// isAssignment reports whether a word starts with NAME= as written (its value may hold expansions).
func isAssignment(a *syntax.Word) bool {
	if len(a.Parts) == 0 {
		return false
	}
	lit, ok := a.Parts[0].(*syntax.Lit)
	if !ok {
		return false
	}
	name, _, ok := strings.Cut(lit.Value, "=")
	if !ok || name == "" {
		return false
	}
	for k := 0; k < len(name); k++ {
		c := name[k]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (k == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// unescape removes the backslashes of s that quote the next character: any character when only is empty
// (outside quotes), else only those in only (inside double quotes). A backslash-newline is removed whole.
func unescape(s, only string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			c := s[i+1]
			if c == '\n' {
				i++
				continue
			}
			if only == "" || strings.IndexByte(only, c) >= 0 {
				i++
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
