package target

import (
	"io"
	"strings"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

// sanitized is s made as a command's output is made here (pkg/sanitize): no escape sequence, no control
// character but tab and newline, valid UTF-8. Text from a target is not trusted to be clean: a
// compromised one could otherwise write to the terminal of the agentbash that reads it.
func sanitized(s string) string {
	var b strings.Builder
	w := sanitize.NewWriter(&b)
	_, _ = io.WriteString(w, s)
	_ = w.Close()
	return b.String()
}

// oneLine is s sanitized, on one line: a column of a listing.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(sanitized(s), "\n", " "), "\t", " ")
}
