package cmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/target"
)

func newTargetCmd(ios IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "target",
		Short: "Manage the agentbash on targets (ssh://, docker://, podman://, kubectl://)",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	var force bool
	install := &cobra.Command{
		Use:   "install URI",
		Short: "Copy this agentbash to a target, where --target URI runs it",
		Long: `Copy this agentbash binary to the target, as ~/.local/share/agentbash/bin/agentbash-VERSION there
(where a target's connection looks first, before the target's PATH), through the target's own engine
(ssh, docker exec, podman exec, kubectl exec): nothing is downloaded. The target's OS and architecture
(uname -s, uname -m) must be this binary's. When this version is already there with this binary's
content (POSIX cksum), nothing is copied; a file that differs (a broken copy) is replaced; --force copies
anyway.
A cmd:// target names a program, not a shell to copy through: install agentbash there yourself.`,
		Example: `  agentbash target install ssh://build-host
  agentbash target install docker://devcontainer`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return exitError{code: 1, err: err}
			}
			if err := target.Install(c.Context(), args[0], exe, force, ios.Out); err != nil {
				return exitError{code: exitCannotRun, err: err}
			}
			return nil
		},
	}
	install.Flags().BoolVar(&force, "force", false, "copy even when the same binary is there")
	c.AddCommand(install)
	return c
}
