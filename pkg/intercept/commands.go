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
//     `LC_ALL=C grep x f` reads `grep x f`);
//   - then the command's redirections as written (a heredoc as its operator and delimiter, `<<EOF`, without
//     the body), then those of the enclosing compound commands (`{ echo a; } > f` gives `echo a > f`);
//     a pipeline's earlier stages inherit none, their output goes to the pipe.
//
// Redirections that write no file are left out: descriptor duplications (`2>&1`, `>&2`, `<&3`, `>&-`),
// redirections to or from /dev/null, /dev/stdin, /dev/stdout, /dev/stderr, /dev/tty and /dev/fd/N, and
// redirections to a process substitution (`> >(tee log)`, whose commands are walked on their own). Input
// redirections from a file (`< in.txt`) are kept: they are reads, not writes.
func simpleCommands(command string) ([]string, bool) {
	src := strings.TrimSpace(command)
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	w := &walker{src: src}
	for _, st := range file.Stmts {
		w.stmt(st, nil, "")
	}
	return w.cmds, true
}

type walker struct {
	src  string
	cmds []string
}

// stmt records the simple commands of s. inherited are the kept redirections of the enclosing compound
// commands; pipeOp is the pipe operator before s when s is a later stage of a pipeline.
func (w *walker) stmt(s *syntax.Stmt, inherited []string, pipeOp string) {
	redirs := slices.Concat(w.redirs(s.Redirs), inherited)
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		if len(c.Args) > 0 {
			w.cmds = append(w.cmds, w.text(pipeOp, c.Args, redirs))
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

func (w *walker) text(pipeOp string, args []*syntax.Word, redirs []string) string {
	var b strings.Builder
	if pipeOp != "" {
		b.WriteString(pipeOp)
		b.WriteByte(' ')
	}
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.slice(a.Pos(), a.End()))
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
		if target == "-" || digits(target) {
			return true
		}
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return false
	}
	switch target {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	if n, ok := strings.CutPrefix(target, "/dev/fd/"); ok && digits(n) {
		return true
	}
	return false
}

// literal returns the value of a word made only of literals and quoted literals, or "".
func literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
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
				b.WriteString(lit.Value)
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
