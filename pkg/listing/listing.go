// Package listing formats the columns of agentbash's tables (tasks, artifacts, sessions, rules): ages and
// one-line texts.
package listing

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Age is d in its largest whole unit: 45s, 12m, 5h (below two days), 3d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// OneLine joins s onto one line without control characters (a command may hold escapes and newlines)
// and cuts it at max characters, ending with … when cut.
func OneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
