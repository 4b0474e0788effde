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
// operands may assign, `${x:=y}`, `{fd}>`, no indirection or subscript). A command that does not parse is
// not unchanging.
func unchanging(command string, defined func(name string) bool) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return false
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
			case len(n.Assigns) > 0 && bashNames[name]:
				ok = false // assignments before a builtin stay in POSIX mode
			}
		case *syntax.FuncDecl, *syntax.ForClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.LetClause,
			*syntax.DeclClause, *syntax.CoprocClause, *syntax.TestClause, *syntax.TestDecl:
			ok = false
		case *syntax.ParamExp:
			if n.Excl || n.Index != nil && !allElements(n.Index) || n.Slice != nil || n.NestedParam != nil ||
				n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				ok = false
			}
		case *syntax.Redirect:
			if n.N != nil && strings.HasPrefix(n.N.Value, "{") {
				ok = false // {fd}> assigns fd
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
