package intercept

import (
	"bufio"
	"os"
	"testing"
)

func TestZZDebug(t *testing.T) {
	in, _ := New(nil, true, []string{"read", "grep", "find", "edit", "write"})
	sc := bufio.NewScanner(os.Stdin)
	f, _ := os.Open("/tmp/dbg.txt")
	sc = bufio.NewScanner(f)
	for sc.Scan() {
		for _, m := range in.Explain(sc.Text()) {
			tool := "-"
			if m.Rule != nil {
				tool = m.Rule.Tool
			}
			t.Logf("%-6s %q", tool, m.Command)
		}
		t.Logf("----")
	}
}
