package normalize

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzNormalize checks, for any input, that Normalize does not panic, that it leaves the trimmed input alone
// when it extracts nothing, and that an extraction removed exactly the reported head/tail stage(s): the
// result parses and prints like the original tree with the last pipeline stage(s) dropped.
func FuzzNormalize(f *testing.F) {
	for _, tt := range normalizeTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Normalize(in)
		if !strings.Contains(in, "|") && hasPipe(in) {
			t.Fatalf("%q parses to a pipeline without a | (Normalize takes none for one)", in)
		}
		if got.Head == -1 && got.Tail == -1 {
			if got.Command != Trim(in) {
				t.Fatalf("nothing extracted but command changed: %q -> %q", in, got.Command)
			}
			return
		}
		if got.Head < -1 || got.Tail < -1 || got.Head > MaxLimit || got.Tail > MaxLimit {
			t.Fatalf("limits out of range: %+v", got)
		}
		if got.Command != Trim(got.Command) {
			t.Fatalf("command not trimmed: %q", got.Command)
		}
		want := dropStages(t, Trim(in), got.Head, got.Tail)
		have, err := parse(got.Command, false)
		if err != nil {
			t.Fatalf("result %q does not parse: %v", got.Command, err)
		}
		if p, _ := printFile(have); p != want {
			t.Fatalf("Normalize(%q) = %q\nresult prints as   %q\noriginal minus stage %q", in, got.Command, p, want)
		}
	})
}

// dropStages parses src, checks that its last pipeline ends in the stages Normalize reported, and prints the
// tree without them.
func dropStages(t *testing.T, src string, head, tail int) string {
	t.Helper()
	file, err := parse(src, false)
	if err != nil {
		t.Fatalf("extracted from unparsable %q: %v", src, err)
	}
	if len(file.Stmts) != 1 {
		t.Fatalf("extracted from a list: %q", src)
	}
	slot := &file.Stmts[0]
	if b, ok := (*slot).Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt {
		slot = &b.Y
	}
	drop := func(name string, n int) {
		pipe, ok := (*slot).Cmd.(*syntax.BinaryCmd)
		if !ok || (pipe.Op != syntax.Pipe && pipe.Op != syntax.PipeAll) {
			t.Fatalf("no pipeline to drop %s from in %q", name, src)
		}
		var b strings.Builder
		syntax.NewPrinter().Print(&b, pipe.Y)
		stage := strings.Fields(b.String())
		form := regexp.MustCompile(`^(?:-n ?|-|--lines[= ])0*` + strconv.Itoa(n) + `$`)
		if len(stage) < 2 || stage[0] != name || !form.MatchString(strings.Join(stage[1:], " ")) {
			t.Fatalf("dropped stage %q is not %s %d in %q", b.String(), name, n, src)
		}
		keep := *pipe.X
		keep.Semicolon = (*slot).Semicolon
		*slot = &keep
	}
	if tail >= 0 {
		drop("tail", tail)
	}
	if head >= 0 {
		drop("head", head)
	}
	p, _ := printFile(file)
	return p
}

// hasPipe reports whether src parses to a tree that holds a pipeline (`|` or `|&`).
func hasPipe(src string) bool {
	file, err := parse(src, true)
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(file, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && isPipe(b.Op) {
			found = true
		}
		return !found
	})
	return found
}
