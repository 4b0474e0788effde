package intercept

import (
	"strings"
	"testing"
	"time"
)

func TestZZPerf2(t *testing.T) {
	in, _ := New(nil, true, []string{"read", "grep", "find", "edit", "write"})
	cmd := "find" + strings.Repeat(" <<<x", 2000)
	start := time.Now()
	texts, _ := simpleCommands(cmd)
	t.Logf("parse %v", time.Since(start))
	for n, c := range in.rules {
		start := time.Now()
		c.matches(texts[0])
		t.Logf("rule %d: %v", n, time.Since(start))
	}
}
