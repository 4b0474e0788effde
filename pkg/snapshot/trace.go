package snapshot

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxSources bounds how many files a snapshot watches (bash-completion-heavy rc files read a handful;
// frameworks such as oh-my-bash a few hundred).
const maxSources = 1024

// trace is what the rc's xtrace output says about the files it read. Each traced command is a line
//
//	\x1e… BASH_SOURCE[0] \x1f PWD \x1f COMMAND
//
// (PS4's first character is repeated once per nesting level). Two things are taken from it:
//   - every BASH_SOURCE seen, resolved against the PWD of the first command traced in it (the directory
//     it was sourced from: the first command of a file runs before anything in it can change directory);
//   - the file operand of every traced `source`/`.` command (bash prints it expanded and quoted), which
//     also covers files that run no command while sourced: one that only defines functions, or one
//     that is empty today and gets an alias tomorrow.
type trace struct {
	seen    map[string]bool
	sources []string    // absolute paths from BASH_SOURCE, in order
	sourced []sourceArg // operands of source commands, resolved once PATH is known
}

type sourceArg struct{ arg, pwd string }

// readTrace reads xtrace output until EOF or a read error (the deadline set after the shell exits).
// Memory is bounded: lines are read through a fixed buffer and only their start is looked at.
func readTrace(r io.Reader) trace {
	t := trace{seen: map[string]bool{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			t.line(string(line))
			for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long line says nothing more
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 {
			t.line(string(line))
		}
		if err != nil {
			return t
		}
	}
}

func (t *trace) line(line string) {
	if !strings.HasPrefix(line, "\x1e") || len(t.seen) >= 2*maxSources {
		return // a continuation line of a multi-line command
	}
	src, rest, ok1 := strings.Cut(strings.TrimLeft(line, "\x1e"), "\x1f")
	pwd, command, ok2 := strings.Cut(rest, "\x1f")
	if !ok1 || !ok2 {
		return
	}
	if src != "" {
		p := src
		if !filepath.IsAbs(p) {
			p = filepath.Join(pwd, p)
		}
		if key := "s\x00" + src; !t.seen[key] {
			t.seen[key] = true
			t.sources = append(t.sources, filepath.Clean(p))
		}
	}
	if arg, ok := sourceOperand(strings.TrimSuffix(command, "\n")); ok {
		if key := "a\x00" + arg + "\x00" + pwd; !t.seen[key] {
			t.seen[key] = true
			t.sourced = append(t.sourced, sourceArg{arg, pwd})
		}
	}
}

// sourceOperand returns the file of a traced `source FILE …` or `. FILE …` command (also after
// `builtin` or `command`), parsed as shell words with mvdan.cc/sh.
func sourceOperand(command string) (string, bool) {
	if !strings.Contains(command, "source") && !strings.Contains(command, ". ") {
		return "", false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(command), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		return "", false
	}
	var words []string
	for _, w := range call.Args {
		s, err := expand.Literal(nil, w)
		if err != nil {
			return "", false
		}
		words = append(words, s)
	}
	for len(words) > 0 && (words[0] == "builtin" || words[0] == "command") {
		words = words[1:]
	}
	if len(words) < 2 || (words[0] != "source" && words[0] != ".") {
		return "", false
	}
	return words[1], true
}

// files returns the absolute paths of the files the rc read, in order, without duplicates. A `source`
// operand without a slash is looked up as bash does: in PATH (the rc's final one), else in the current
// directory; one that exists nowhere is still watched where it would be found, so creating it counts
// as a change.
func (t trace) files(path string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p = filepath.Clean(p); !seen[p] && len(out) < maxSources {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range t.sources {
		add(p)
	}
	for _, s := range t.sourced {
		add(resolveSource(s, path))
	}
	return out
}

func resolveSource(s sourceArg, path string) string {
	if strings.Contains(s.arg, "/") {
		if filepath.IsAbs(s.arg) {
			return s.arg
		}
		return filepath.Join(s.pwd, s.arg)
	}
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(s.pwd, dir)
		}
		p := filepath.Join(dir, s.arg)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return filepath.Join(s.pwd, s.arg)
}
