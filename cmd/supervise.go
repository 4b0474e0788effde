package cmd

import (
	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/supervisor"
)

// newSuperviseCmd is the hidden command a run's supervisor process runs: agentbash re-executes itself as
// `agentbash __supervise` with a socket on descriptor 3 (see pkg/supervisor). People never call it.
func newSuperviseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    supervisor.Command,
		Short:  "Supervise one run (internal)",
		Hidden: true,
		Args:   usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if code := supervisor.Main(); code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
}
