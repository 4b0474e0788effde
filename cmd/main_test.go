package cmd

import (
	// The test binary is what agentbash re-executes itself as (a run's supervisor, the snapshot
	// helper): the runs a test starts re-execute it, and pkg/reexec's init runs them.
	_ "github.com/agentbash/agentbash/pkg/reexec"
)
