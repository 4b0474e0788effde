// Package normalize pulls a trailing `| head`/`| tail` line limit out of a shell command into a structured
// limit (reference §3.2).
//
// The command is parsed with mvdan.cc/sh/v3/syntax as Bash; nothing is done with regular expressions over the
// text. The limit stage is removed by splicing its bytes out of the original text, so heredoc bodies,
// comments and spacing elsewhere survive byte for byte, and the spliced text is parsed again and compared
// with the original syntax tree minus the stage before it is accepted.
package normalize

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// MaxLimit is the largest line count that is extracted; a larger count leaves the stage in the command.
const MaxLimit = 1_000_000_000

// Normalized is the command as Normalize left it and the line limits it extracted.
type Normalized struct {
	Command string // the command to run: outer whitespace trimmed, extracted stage(s) removed, all other bytes exactly as written
	Head    int    // extracted head line limit, -1 when none
	Tail    int    // extracted tail line limit, -1 when none
	// Subshell is Command with what is left of the pipeline in a subshell, `( … )`, as a pipeline's
	// stages run in bash: for a shell whose state outlives the command (a session), where `cd / | tail
	// -5` must not change the directory. It is Command when nothing was extracted, and "" when the
	// subshell form would not parse (then nothing is to be extracted for such a shell).
	Subshell string
}

// Normalize trims the outer whitespace of command and, when its final pipeline ends in a `head` or `tail`
// stage whose only argument is a line count, removes that stage and returns the count as Head or Tail
// (reference §3.2).
//
// A limit is extracted only when the whole script is one statement that is either a pipeline or an `&&`
// chain whose last element is a pipeline (`cd dir && make 2>&1 | tail -30`). The stage must be the literal,
// unquoted word `head` or `tail` with no assignments and no redirections, followed by exactly one of `-n N`,
// `-nN`, `-N`, `--lines=N` or `--lines N`, where N is a plain decimal from 0 to MaxLimit. `|&` counts as `|`.
// When the last two stages are `head` then `tail` (`cmd | head -100 | tail -5`) both are removed; in any
// other case only the last stage is.
//
// Nothing is extracted (Head and Tail are -1 and Command is the trimmed input) when the text does not parse;
// when it is a `;` or newline list; when the chain holds any `||` (`a || b | tail -1` runs the tail on b
// alone, so moving the limit to the whole chain would change what it covers); when the pipeline is negated,
// backgrounded, a coprocess or a `time` clause; when the stage has files, other options, or non-literal
// words; or when the stage sits inside a subshell, a group or a command substitution.
func Normalize(command string) Normalized {
	src := Trim(command)
	none := Normalized{Command: src, Head: -1, Tail: -1, Subshell: src}
	// The parser takes a carriage return for a blank; bash does not (`tail -2\r` is an error there). A
	// command with one is left alone rather than changed into something bash would read differently.
	if strings.ContainsRune(src, '\r') || strings.HasSuffix(src, "\\\n") {
		return none // and a command ending in a line continuation is incomplete
	}
	if !strings.Contains(src, "|") {
		// Only a pipeline has a stage to extract, and its operator (`|`, `|&`) is written out: a command
		// without one is not parsed at all (most commands; the parse was a twentieth of an rpc server's
		// work for `true`).
		return none
	}
	file, err := parse(src, true)
	if err != nil || hasExtGlob(file) {
		return none
	}
	c, ok := plan(file)
	if !ok {
		return none
	}
	start := blankStart(src, c.start)
	if start < 0 || c.end > len(src) || start > c.end || heredocWithin(c.keep, start, c.end) {
		return none
	}
	out := src[:start] + src[c.end:]
	// A character the parser skips but the shell does not (`\v`, `\f`) before the stage would be left at
	// the end; such a command is left alone.
	if out != Trim(out) || strings.ContainsAny(out[max(0, len(out)-1):], "\v\f") || !verify(src, out) {
		return none
	}
	n := Normalized{Command: out, Head: c.head, Tail: c.tail}
	// The producer runs to the end of the text (a here-document's body, a trailing comment): the
	// subshell closes on a line of its own after it, and opens on the producer's own line, so $LINENO and
	// bash's `line N:` messages stay as written.
	if k := int(c.keep.Pos().Offset()); k >= 0 && k <= start {
		sub := out[:k] + "( " + out[k:] + "\n)"
		if _, err := parse(sub, false); err == nil {
			n.Subshell = sub
		}
	}
	return n
}

// cut is one planned extraction: the bytes [start, end) of the source (start is the offset of the pipe
// operator before the first removed stage; blanks before it are added later), the limits, and where the
// pipeline statement sits in the tree together with the statement that replaces it.
type cut struct {
	start, end int
	head, tail int
	slot       **syntax.Stmt // the pipeline statement's place in the tree
	keep       *syntax.Stmt  // what is left of the pipeline
}

// plan finds the qualifying pipeline of file and the stage(s) to remove.
func plan(file *syntax.File) (cut, bool) {
	if len(file.Stmts) != 1 {
		return cut{}, false
	}
	slot := &file.Stmts[0]
	st := *slot
	if !plainStmt(st) {
		return cut{}, false
	}
	var before *syntax.Stmt // what runs before the pipeline in an `&&` chain
	if chain, ok := st.Cmd.(*syntax.BinaryCmd); ok && chain.Op == syntax.AndStmt {
		if !andSpine(chain.X) {
			return cut{}, false
		}
		before = chain.X
		slot = &chain.Y
		st = *slot
		if !plainStmt(st) {
			return cut{}, false
		}
	}
	pipe, ok := st.Cmd.(*syntax.BinaryCmd)
	if !ok || !isPipe(pipe.Op) || !plainStages(pipe) {
		return cut{}, false
	}
	name, n, ok := limitStage(pipe.Y)
	if !ok {
		return cut{}, false
	}
	c := cut{
		start: int(pipe.OpPos.Offset()),
		end:   int(pipe.Y.Cmd.End().Offset()),
		head:  -1,
		tail:  -1,
		slot:  slot,
		keep:  pipe.X,
	}
	// A head limit closes the pipe once it is met, which in a chain would kill whatever of the chain is
	// writing then — `npm ci && npm test | head -50` must not stop npm ci. So head is pulled out of a
	// chain only when what runs before the pipeline prints nothing.
	headOK := before == nil || silentChain(before)
	if name == "head" {
		if !headOK {
			return cut{}, false
		}
		c.head = n
		return c, true
	}
	c.tail = n
	if inner, ok := pipe.X.Cmd.(*syntax.BinaryCmd); ok && headOK && plainStmt(pipe.X) && isPipe(inner.Op) {
		if name, h, ok := limitStage(inner.Y); ok && name == "head" {
			c.start = int(inner.OpPos.Offset())
			c.head = h
			c.keep = inner.X
		}
	}
	return c, true
}

// plainStmt reports whether s carries none of the modifiers that forbid extraction: negation, `&`,
// coprocess, disown, or redirections of its own.
func plainStmt(s *syntax.Stmt) bool {
	return !s.Negated && !s.Background && !s.Coprocess && !s.Disown && len(s.Redirs) == 0
}

func isPipe(op syntax.BinCmdOperator) bool { return op == syntax.Pipe || op == syntax.PipeAll }

// plainStages reports whether no stage of the pipeline before its last is a `coproc` or `time` clause:
// `coproc a | tail -3` sends a's output to the coprocess, not to the limit.
func plainStages(pipe *syntax.BinaryCmd) bool {
	special := func(s *syntax.Stmt) bool {
		switch s.Cmd.(type) {
		case *syntax.CoprocClause, *syntax.TimeClause:
			return true
		}
		return false
	}
	for s := pipe.X; ; {
		x, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || !isPipe(x.Op) {
			return !special(s)
		}
		if special(x.Y) {
			return false
		}
		s = x.X
	}
}

// andSpine reports whether the left side of an `&&` chain joins its elements with `&&` only.
func andSpine(s *syntax.Stmt) bool {
	for {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok {
			return true
		}
		switch b.Op {
		case syntax.OrStmt:
			return false
		case syntax.AndStmt:
			s = b.X
		default:
			return true
		}
	}
}

// silentCommands print nothing on success. The value lists the option letters that make one print
// (`set -x` traces, `mkdir -v` talks, `export -p` lists); a "*" first marks those that list their state
// when given no argument at all (`export`, `set`, `alias` …).
var silentCommands = map[string]string{
	"cd": "", "unset": "", "unalias": "", "true": "", ":": "", "touch": "", "mkdir": "v",
	"set": "*xv", "shopt": "*p", "umask": "*pS", "alias": "*p", "ulimit": "*a",
}

// silentChain reports whether every element of the `&&` chain s prints nothing: a bare assignment, or
// one of silentCommands without an option that makes it print (and not `cd -`, which prints the directory).
func silentChain(s *syntax.Stmt) bool {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok {
		return b.Op == syntax.AndStmt && silentChain(b.X) && silentChain(b.Y)
	}
	if !plainStmt(s) {
		return false
	}
	if decl, ok := s.Cmd.(*syntax.DeclClause); ok { // export X=1, declare -x Y, local z
		for _, a := range decl.Args {
			if a.Naked && a.Name == nil && a.Value != nil && strings.HasPrefix(a.Value.Lit(), "-") &&
				strings.ContainsAny(a.Value.Lit(), "pf") {
				return false // export -p, declare -f list
			}
		}
		return len(decl.Args) > 0
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	if len(call.Args) == 0 {
		return len(call.Assigns) > 0
	}
	loud, ok := silentCommands[call.Args[0].Lit()]
	if !ok || strings.HasPrefix(loud, "*") && len(call.Args) == 1 {
		return false
	}
	for _, w := range call.Args[1:] {
		a := w.Lit()
		if a == "-" || strings.HasPrefix(a, "--") && a != "--" ||
			strings.HasPrefix(a, "-") && strings.ContainsAny(a[1:], strings.TrimPrefix(loud, "*")) && loud != "" {
			return false
		}
	}
	return true
}

// hasExtGlob reports whether f uses an extended glob (`!(x)`, `@(a|b)`): the parser accepts it, but bash
// rejects it unless `shopt -s extglob` is on before the line is read, so such a command is left alone.
func hasExtGlob(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ExtGlob); ok {
			found = true
		}
		return !found
	})
	return found
}

// Trim removes the outer blanks of a command — spaces, tabs and newlines, what the shell itself skips —
// and nothing else: other Unicode spaces are part of a word to bash, and a trailing backslash-newline is
// a line continuation, so its newline stays.
func Trim(command string) string {
	s := strings.TrimLeft(command, " \t\n")
	for len(s) > 0 {
		last := s[len(s)-1]
		if last != ' ' && last != '\t' && last != '\n' {
			break
		}
		if last == '\n' && escaped(s[:len(s)-1]) {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// escaped reports whether s ends in an odd number of backslashes (so the next character is escaped).
func escaped(s string) bool {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// limitStage reports whether s is a `head` or `tail` stage whose only argument is a line count, and returns
// its name and count.
func limitStage(s *syntax.Stmt) (string, int, bool) {
	if !plainStmt(s) {
		return "", 0, false
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 || len(call.Args) > 3 {
		return "", 0, false
	}
	name := call.Args[0].Lit()
	if name != "head" && name != "tail" {
		return "", 0, false
	}
	args := make([]string, 0, 2)
	for _, w := range call.Args[1:] {
		lit := w.Lit()
		if lit == "" {
			return "", 0, false
		}
		args = append(args, lit)
	}
	n, ok := lineCount(args)
	return name, n, ok
}

// lineCount parses the accepted argument forms: `-n N`, `-nN`, `-N`, `--lines=N`, `--lines N`.
func lineCount(args []string) (int, bool) {
	switch len(args) {
	case 1:
		a := args[0]
		switch {
		case strings.HasPrefix(a, "--lines="):
			return decimal(a[len("--lines="):])
		case strings.HasPrefix(a, "--"):
			return 0, false
		case strings.HasPrefix(a, "-n"):
			return decimal(a[2:])
		case strings.HasPrefix(a, "-"):
			return decimal(a[1:])
		}
	case 2:
		if args[0] == "-n" || args[0] == "--lines" {
			return decimal(args[1])
		}
	}
	return 0, false
}

// decimal parses a plain decimal line count in [0, MaxLimit].
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxLimit {
		return 0, false
	}
	return n, true
}

// blankStart moves the offset of a pipe operator back over the blanks and line continuations before it, so
// that the removed range starts right after the previous stage. It returns -1 for an offset out of range.
func blankStart(src string, i int) int {
	if i < 0 || i > len(src) {
		return -1
	}
	for i > 0 {
		switch {
		case src[i-1] == ' ' || src[i-1] == '\t':
			i--
		case i >= 2 && src[i-1] == '\n' && src[i-2] == '\\':
			i -= 2
		default:
			return i
		}
	}
	return i
}

// heredocWithin reports whether a heredoc body of keep lies within [start, end), as in a pipe operator that
// ends a line whose heredoc body comes before the next stage.
func heredocWithin(keep *syntax.Stmt, start, end int) bool {
	found := false
	syntax.Walk(keep, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			if p := int(r.Hdoc.Pos().Offset()); p >= start && p < end {
				found = true
			}
		}
		return !found
	})
	return found
}

// verify reports whether out parses and has the same syntax tree, printed without comments, as src with the
// planned stage(s) dropped.
func verify(src, out string) bool {
	orig, err := parse(src, false)
	if err != nil {
		return false
	}
	c, ok := plan(orig)
	if !ok {
		return false
	}
	keep := *c.keep
	keep.Semicolon = (*c.slot).Semicolon
	*c.slot = &keep
	got, err := parse(out, false)
	if err != nil {
		return false
	}
	want, ok1 := printFile(orig)
	have, ok2 := printFile(got)
	return ok1 && ok2 && want == have
}

func parse(src string, comments bool) (*syntax.File, error) {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(comments))
	return p.Parse(strings.NewReader(src), "")
}

func printFile(f *syntax.File) (string, bool) {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", false
	}
	return b.String(), true
}
