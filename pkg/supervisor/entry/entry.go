// Package entry runs the hidden commands a run waits for, as early in the process's start as their code
// allows: a run's supervisor (`__supervise`, pkg/supervisor), the sandbox's stage (`__sandbox`) and its
// user-namespace probe (`__sandbox-probe`, pkg/sandbox). It runs them from its init function.
//
// Go runs the init functions of a program's packages in one order: at each step, the first package in
// import-path order whose imports are all initialized. A process that runs one of these commands exits
// from this init, so it never runs the inits ordered after this package: how few run before it is what
// its imports decide. None of them may import net/http (the proxy's server registers itself from
// pkg/proxy/server, initialized later: see supervisor.Start), cobra, viper or the MCP SDK, whose inits
// would then all run before it (TestImports holds that); pkg/snapshot's command stays in pkg/reexec. pkg/reexec imports this package, so
// every binary that runs these commands has it.
package entry

import (
	"os"

	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

func init() {
	if code, ok := dispatch(os.Args[1:]); ok {
		os.Exit(code)
	}
}

// dispatch runs the hidden command args names (the process's arguments after argv[0]) and returns its
// exit status with ok true, or ok false when args name none here, or when a supervisor's first run needs
// what is initialized later (supervisor.Start): pkg/reexec's init then runs it.
func dispatch(args []string) (code int, ok bool) {
	switch {
	case len(args) == 1 && args[0] == supervisor.Command:
		return supervisor.Start()
	case len(args) == 1 && args[0] == sandbox.ProbeCommand:
		return sandbox.ProbeMain(), true
	case len(args) == 1 && args[0] == sandbox.StageCommand:
		return sandbox.StageMain(), true
	}
	return 0, false
}
