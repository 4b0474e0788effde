// Package reexec runs the hidden commands agentbash re-executes itself as: a run's supervisor
// (`__supervise`, pkg/supervisor) and the helper that makes the shell snapshot (`__snapshot`,
// pkg/snapshot). The binary's entry point and the test binaries that start runs dispatch through it, so
// the list is in one place.
package reexec

import (
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

// Dispatch runs the hidden command args names (the process's arguments after argv[0]) and returns its
// exit status with ok true, or ok false when args name none.
func Dispatch(args []string) (code int, ok bool) {
	switch {
	case len(args) == 1 && args[0] == supervisor.Command:
		return supervisor.Main(), true
	case len(args) > 0 && args[0] == snapshot.Command:
		return snapshot.Main(args[1:]), true
	}
	return 0, false
}
