// Package reexec runs the hidden commands agentbash re-executes itself as. A run's supervisor
// (`__supervise`), the sandbox's stage (`__sandbox`) and its probe (`__sandbox-probe`) are run by
// pkg/supervisor/entry, which this package imports, from an init that runs before most of the binary's;
// this package's init runs the helper that makes the shell snapshot (`__snapshot`, pkg/snapshot) and the
// supervisors entry handed on: those whose first run needs the sandbox's proxy, whose server
// (pkg/proxy/server, imported here) is initialized by now. Importing this package is all the binary's
// entry point and the test binaries that start runs need: such a process never gets to main, and never
// runs the init functions of the packages initialized after this one (cobra's, viper's, the MCP SDK's).
package reexec

import (
	"os"

	_ "github.com/agentbash/agentbash/pkg/proxy/server" // registers the proxy's server (proxy.Serve)
	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
	_ "github.com/agentbash/agentbash/pkg/supervisor/entry"
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
	}
	return 0, false
}
