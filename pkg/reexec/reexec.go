// Package reexec runs the hidden commands agentbash re-executes itself as: a run's supervisor
// (`__supervise`, pkg/supervisor), the helper that makes the shell snapshot (`__snapshot`,
// pkg/snapshot) the sandbox's user-namespace probe (`__sandbox-probe`) and its stage (`__sandbox`, pkg/sandbox). It runs them from its init function, so importing it is all the binary's entry point and
// the test binaries that start runs need: such a process never gets to main, and never runs the init
// functions of the packages initialized after this one (cobra's, viper's, the MCP SDK's: about half a
// millisecond of every run's critical path, which waits for its supervisor to start).
package reexec

import (
	"os"

	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

func init() {
	if code, ok := dispatch(os.Args[1:]); ok {
		os.Exit(code)
	}
}

// dispatch runs the hidden command args names (the process's arguments after argv[0]) and returns its
// exit status with ok true, or ok false when args name none.
func dispatch(args []string) (code int, ok bool) {
	switch {
	case len(args) == 1 && args[0] == supervisor.Command:
		return supervisor.Main(), true
	case len(args) > 0 && args[0] == snapshot.Command:
		return snapshot.Main(args[1:]), true
	case len(args) == 1 && args[0] == sandbox.ProbeCommand:
		return sandbox.ProbeMain(), true
	case len(args) == 1 && args[0] == sandbox.StageCommand:
		return sandbox.StageMain(), true
	}
	return 0, false
}
