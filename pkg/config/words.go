package config

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Argv is a list of words to exec, such as shell.wrapper (`[nice, -n, "10"]`). Given as one string (a
// flag, an environment variable), it is split by [SplitWords].
type Argv []string

// SplitWords splits s into words as a shell splits a command's arguments: blanks separate words, and
// quotes and backslashes work as in bash ('a b', "a b", a\ b, $'\t'). Nothing is expanded: a parameter,
// command substitution, arithmetic, process substitution or brace list is an error, and so is anything
// but one simple command (`;`, `|`, `&&`, a redirection, a leading VAR=value). `~`, `*` and `?` stay as
// written. Blank s gives no words.
func SplitWords(s string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) == 0 {
		return nil, nil
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if len(f.Stmts) > 1 || !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, errors.New("want plain words, not shell text (no ;, |, &, redirections or VAR=value; use env VAR=value)")
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		if bad := expansion(w); bad != "" {
			return nil, fmt.Errorf("%s: nothing is expanded here; write the value itself", bad)
		}
		fields, err := expand.Fields(&expand.Config{}, w)
		if err != nil {
			return nil, err
		}
		if len(fields) != 1 {
			return nil, fmt.Errorf("%s: brace lists are not expanded here; quote it", wordText(w))
		}
		words = append(words, fields[0])
	}
	return words, nil
}

// expansion returns the text of the first part of w that a shell would expand, or "".
func expansion(w *syntax.Word) string {
	var bad syntax.Node
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob:
			if bad == nil {
				bad = n
			}
		}
		return bad == nil
	})
	if bad == nil {
		return ""
	}
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, bad)
	return b.String()
}

func wordText(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w)
	return b.String()
}
