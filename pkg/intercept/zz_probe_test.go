package intercept

import (
	"os"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	data, err := os.ReadFile("/tmp/probe.txt")
	if err != nil {
		t.Skip()
	}
	in, _ := New(nil, true, allTools)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		line = strings.ReplaceAll(line, `\n`, "\n")
		tool := ""
		if b := in.Check(line); b != nil {
			tool = b.Tool
		}
		var cmds []string
		for _, m := range in.Explain(line) {
			cmds = append(cmds, m.Command)
		}
		t.Logf("%-6s %q  %q", tool, line, cmds)
	}
}
