package intercept

import (
	"strings"
	"testing"
	"time"
)

func TestZZPerf(t *testing.T) {
	in, _ := New(nil, true, []string{"read", "grep", "find", "edit", "write"})
	for _, name := range []string{"cat", "head", "grep", "rg", "find", "fd", "sed", "perl", "awk", "echo", "tee", "locate"} {
		for _, tok := range []string{"-n", "-n 5", "a", "'a b'", "\"a\"", "$(a b)", "-e x", "<<<x", ">f", "2>f", "-A 3", "--", "x\\ y", "${a}", "-i", "--include x", "$((1+(2)))", "<<-x"} {
			cmd := name + strings.Repeat(" "+tok, 2000)
			start := time.Now()
			in.Check(cmd)
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Logf("%s %q: %v", name, tok, d)
			}
		}
	}
}
