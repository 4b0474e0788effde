// Package proctitle rewrites the process's own command line, the text that /proc/PID/cmdline, ps and
// `pgrep -f` read, so that agentbash's arguments (the command it runs) do not show there: a command's
// `pkill -f WORD` on a word of its own text must not hit agentbash (reference §3.7).
//
// The kernel reads the command line from the memory that held the original arguments; [Set] overwrites
// that memory in place, as setproctitle(3) does. It can only shorten the command line.
package proctitle

import (
	"errors"
	"strings"
)

// ErrUnsupported is returned where the command line cannot be rewritten (systems other than Linux).
var ErrUnsupported = errors.New("proctitle: rewriting the command line is not supported here")

// Set makes the process's command line read as args (`agentbash`, `run`: ps shows `agentbash run`), cut
// to the length of the original arguments. The rest of that memory is NUL bytes, which ps and pgrep
// drop; a reader that splits /proc/PID/cmdline at each NUL sees empty arguments after args. It first replaces os.Args with a copy, because the Go runtime's
// os.Args strings point into the memory that Set overwrites: a string taken from os.Args before the call
// (a flag value, say) changes with it, so callers take copies first ([Clone]). It fails, changing
// nothing, when the argument memory is not where the kernel says it is, and with [ErrUnsupported]
// off Linux.
func Set(args ...string) error {
	return set(strings.Join(args, "\x00"))
}

// Clone returns deep copies of args: strings that no longer share memory with the process's original
// arguments, so they survive [Set].
func Clone(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.Clone(a)
	}
	return out
}
