package session

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// unchanging reports whether command, run by bash in the session, cannot change the state a session keeps
// (the cwd, variables, functions, aliases, options, umask), so that its end needs no dump: most commands
// an agent runs (ls, grep, git status, go test, a build) are external programs, which cannot change their
// shell. It is decided on the command's text alone and errs towards false: true only when every command
// in it, subshells included, is an external program or one of [stateless] builtins, called by a literal
// name that no function or alias (defined reports those of the session, of the rc, of the environment)
// takes over, and nothing in it assigns (no assignment, `for`, arithmetic, `[[ ]]` whose arithmetic
// operands may assign, `${x:=y}`, `${x@P}`, `{fd}>`, `test -v`, no indirection or subscript), no alias
// takes a reserved word, and no here-document or comment could end elsewhere for bash than for the parser.
// A command that does not parse is not unchanging.
func unchanging(command string, defined func(name string) bool) bool {
	// Comments kept: without them the parser takes a comment's trailing backslash for a line
	// continuation (`ls # \⏎cd /` would hide the cd), which bash does not.
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	if err != nil {
		return false
	}
	for kw := range reserved {
		if defined(kw) {
			return false // an alias named like a reserved word is expanded in its place (`alias if='cd /; if'`)
		}
	}
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				ok = false // an assignment
				break
			}
			name, lit := literal(n.Args[0])
			switch {
			case !lit || defined(name) || bashNames[name] && !stateless[name]:
				ok = false
			case strings.HasPrefix(name, "-"):
				ok = false // an option of what comes before: `time -- cd /` runs cd (the parser's name is --)
			case len(n.Assigns) > 0 && bashNames[name]:
				ok = false // assignments before a builtin stay in POSIX mode
			case (name == ":" || name == "exit") && anyAssignLike(n.Args[1:]):
				ok = false // with set -k they are assignments, which stay in POSIX mode
			case (name == "test" || name == "[") && !plainTest(n.Args[1:], name == "["):
				ok = false // test -v 'a[i=1]' evaluates the subscript
			}
			for _, a := range n.Assigns {
				if sideEffects[a.Name.Value] {
					ok = false // undone, bash does not restore what setting them changed
				}
			}
			if sideEffectArg(n.Args[1:]) {
				ok = false // with set -k an argument NAME=value is an assignment too
			}
		case *syntax.FuncDecl, *syntax.ForClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause,
			*syntax.DeclClause, *syntax.CoprocClause, *syntax.TestClause, *syntax.TestDecl:
			ok = false
		case *syntax.ParamExp:
			if n.Excl || n.Index != nil && !allElements(n.Index) || n.Slice != nil || n.NestedParam != nil ||
				n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull ||
					n.Exp.Op == syntax.OtherParamOps && (n.Exp.Word == nil || !harmlessOps[n.Exp.Word.Lit()])) {
				ok = false // ${x@P} expands $((…)) and ${y:=…} in x's value
			}
		case *syntax.Redirect:
			if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
				ok = false // {fd}> assigns fd
			}
			if n.Hdoc != nil && !plainHeredoc(command, n) {
				ok = false
			}
		case *syntax.Comment:
			if strings.Contains(n.Text, `\`) {
				ok = false
			}
		case *syntax.CmdSubst:
			if n.TempFile || n.ReplyVar {
				ok = false // runs in the shell itself, not a subshell
			}
		}
		return ok
	})
	return ok
}

// harmlessOps are the ${x@OP} operators that evaluate nothing in x's value (not P, prompt expansion).
var harmlessOps = setOf("Q", "E", "a", "A", "U", "u", "L", "K", "k")

// sideEffects are variables whose assignment before a command changes the shell for good: the temporary
// POSIXLY_CORRECT turns expand_aliases off as it goes, GLOBIGNORE dotglob; the others to be safe.
var sideEffects = setOf("POSIXLY_CORRECT", "GLOBIGNORE", "BASH_COMPAT", "BASH_XTRACEFD", "BASH_ARGV0",
	"SHELLOPTS", "BASHOPTS", "OPTIND", "OPTERR", "ignoreeof")

// sideEffectArg reports whether an argument starts as an assignment to one of [sideEffects] (NAME= or
// NAME+=), which set -k makes an assignment before the command.
func sideEffectArg(args []*syntax.Word) bool {
	for _, w := range args {
		if len(w.Parts) == 0 {
			continue
		}
		if l, isLit := w.Parts[0].(*syntax.Lit); isLit {
			name, _, found := strings.Cut(l.Value, "=")
			if found && sideEffects[strings.TrimSuffix(name, "+")] {
				return true
			}
		}
	}
	return false
}

// reserved are bash's reserved words: an alias of that name makes the command not unchanging.
var reserved = setOf("if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
	"do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc")

// anyAssignLike reports whether a word looks like an assignment (NAME=, NAME[, NAME+=), which set -k makes one.
func anyAssignLike(args []*syntax.Word) bool {
	for _, w := range args {
		for _, p := range w.Parts {
			l, isLit := p.(*syntax.Lit)
			if !isLit {
				break
			}
			if strings.ContainsAny(l.Value, "=[") {
				return true
			}
		}
	}
	return false
}

// plainTest reports whether test's (or ['s) arguments cannot evaluate a subscript: no -v or -R (whose
// operand's subscript is arithmetic), and none that expansion could turn into one or split in more.
func plainTest(args []*syntax.Word, bracket bool) bool {
	if n := len(args); bracket && n > 0 {
		if l, _ := literal(args[n-1]); l == "]" {
			args = args[:n-1]
		}
	}
	lit := make([]bool, len(args))
	all := true
	for i, w := range args {
		var l string
		l, lit[i] = literal(w)
		if lit[i] && (l == "-v" || l == "-R") || !lit[i] && !oneField(w) {
			return false
		}
		all = all && lit[i]
	}
	switch {
	case all || len(args) <= 1:
		return true
	case len(args) == 2: // OP X
		return lit[0]
	case len(args) == 3: // X OP Y, ! OP X, ( X )
		first, _ := literal(args[0])
		return lit[1] || lit[0] && first != "!"
	}
	return false
}

// oneField reports whether w expands to exactly one word: quoted expansions only, no "$@" nor "${a[@]}".
func oneField(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[~{") {
				return false // a pattern, ~, or a brace expansion ({-v,x} is two words)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return false
			}
			for _, q := range p.Parts {
				if pe, isParam := q.(*syntax.ParamExp); isParam && (pe.Param.Value == "@" || pe.Index != nil) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// plainHeredoc reports whether r's here-document ends where bash ends it too: its delimiter is a literal,
// and no line of its body starts with it or ends in a backslash (bash joins that line to the next before
// it compares, and ends one in $( ) at `DELIM)`: the parser would take the lines after for the body).
func plainHeredoc(command string, r *syntax.Redirect) bool {
	delim, ok := literal(r.Word)
	if !ok {
		return false
	}
	start, end := r.Hdoc.Pos(), r.Hdoc.End()
	if !start.IsValid() || !end.IsValid() {
		return len(r.Hdoc.Parts) == 0
	}
	if int(end.Offset()) > len(command) || start.Offset() > end.Offset() {
		return false
	}
	body := command[start.Offset():end.Offset()]
	if strings.Contains(body, "\\\n") {
		return false
	}
	lines := strings.Split(body, "\n")
	if strings.TrimLeft(lines[len(lines)-1], "\t") == delim {
		lines = lines[:len(lines)-1] // the parser's body ends with the delimiter's line
	}
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, "\t"), delim) {
			return false
		}
	}
	return true
}

// allElements reports whether a subscript is [@] or [*], which evaluates nothing.
func allElements(index syntax.ArithmExpr) bool {
	w, isWord := index.(*syntax.Word)
	return isWord && (w.Lit() == "@" || w.Lit() == "*")
}

// literal is w's value when it expands to itself but for quotes ("cd", c\d and 'cd' all name cd).
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if b.Len() == 0 && strings.HasPrefix(p.Value, "~") {
				return "", false // ~ is $HOME, ~- $OLDPWD …
			}
			if strings.ContainsAny(p.Value, "*?{") || strings.Contains(p.Value, "[") && strings.Contains(p.Value, "]") {
				return "", false // a pattern, or a brace expansion ({cd,/} is cd /)
			}
			for i := 0; i < len(p.Value); i++ {
				if p.Value[i] == '\\' && i+1 < len(p.Value) {
					i++
				}
				b.WriteByte(p.Value[i])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false // $"…" is translated
			}
			for _, q := range p.Parts {
				l, isLit := q.(*syntax.Lit)
				if !isLit || strings.Contains(l.Value, `\`) {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// stateless are the builtins a command may call and still be [unchanging]: none of them can change
// what a session keeps (printf can, with -v; test reads its integers as numbers, not arithmetic).
var stateless = setOf("true", "false", ":", "echo", "test", "[", "pwd", "exit")

// bashNames are bash's builtins and reserved words (bash 5.2 and 5.3's `enable -a` and `compgen -k`):
// a command naming one that is not [stateless] is not [unchanging].
var bashNames = setOf(
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
	"complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local",
	"logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set",
	"shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit",
	"umask", "unalias", "unset", "wait",
	"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in",
	"function", "time", "{", "}", "!", "[[", "]]", "coproc",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
