package intercept

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

type corpusEntry struct {
	line    int
	tool    string // "" when the command must not be blocked
	command string
	exact   bool
}

func readCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tool, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		lit, err := strconv.QuotedPrefix(rest)
		if err != nil {
			t.Fatalf("corpus.txt:%d: %v", n, err)
		}
		cmd, _ := strconv.Unquote(lit)
		if tool == "-" {
			tool = ""
		}
		comment := strings.TrimSpace(rest[len(lit):])
		out = append(out, corpusEntry{line: n, tool: tool, command: cmd, exact: comment == "# exact"})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpus checks the built-in rules against the labelled corpus: precision and recall of blocking with
// the right tool must be at least 0.98, and the lines marked exact must all be right.
func TestCorpus(t *testing.T) {
	in, warnings := New(nil, true, []string{"read", "grep", "find", "edit", "write"})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %v", warnings)
	}
	entries := readCorpus(t)
	var truePos, falsePos, falseNeg, exact int
	for _, e := range entries {
		got := ""
		if b := in.Check(e.command); b != nil {
			got = b.Tool
		}
		switch {
		case got == e.tool && got != "":
			truePos++
		case got != e.tool:
			if got != "" {
				falsePos++
			}
			if e.tool != "" {
				falseNeg++
			}
			t.Logf("corpus.txt:%d: %q: blocked as %q, want %q", e.line, e.command, got, e.tool)
		}
		if e.exact {
			exact++
			if got != e.tool {
				t.Errorf("corpus.txt:%d (exact): %q: blocked as %q, want %q", e.line, e.command, got, e.tool)
			}
		}
	}
	precision := float64(truePos) / float64(truePos+falsePos)
	recall := float64(truePos) / float64(truePos+falseNeg)
	t.Logf("%d commands, %d exact: precision %.3f (%d/%d), recall %.3f (%d/%d)",
		len(entries), exact, precision, truePos, truePos+falsePos, recall, truePos, truePos+falseNeg)
	if len(entries) < 100 || exact != 14 {
		t.Errorf("corpus has %d commands and %d exact ones, want at least 100 and 14", len(entries), exact)
	}
	if precision < 0.98 || recall < 0.98 {
		t.Errorf("precision %.3f, recall %.3f: want both at least 0.98", precision, recall)
	}
}
