package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/listing"
	"github.com/agentbash/agentbash/pkg/session"
)

func newSessionCmd(ios IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "session",
		Short: "List, show or remove sessions (state kept between the commands of run --session NAME)",
		Long: `A session is named state that carries over between commands: run --session NAME (or the session
setting, AGENTBASH_SESSION) keeps the working directory, variables, functions, aliases, shell options and
umask a command left when it ended by itself, for the next command of that session. The state lives in
$XDG_STATE_HOME/agentbash/sessions (0700, files 0600: exported variables can be secrets).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	for _, sub := range []*cobra.Command{newSessionListCmd(ios), newSessionShowCmd(ios), newSessionRmCmd(ios)} {
		addTargetFlag(sub.Flags())
		c.AddCommand(sub)
	}
	return c
}

// sessionStore is the sessions of the place the config names.
func sessionStore(c *cobra.Command) (executor.Sessions, error) {
	svc, err := placeService(c)
	if err != nil {
		return nil, err
	}
	store, err := svc.Sessions()
	if err != nil {
		return nil, exitError{code: 1, err: err}
	}
	return store, nil
}

// sessionName checks a NAME argument: a malformed one is a usage error (reference §7.1).
func sessionName(c *cobra.Command, name string) error {
	if !session.Valid(name) {
		return usageError{err: fmt.Errorf("session %q: %w", name, session.ErrBadName), cmd: c.CommandPath()}
	}
	return nil
}

func newSessionListCmd(ios IO) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List sessions: name, cwd, last use",
		Long: `List sessions as a table (name, last use, cwd) or with --json as an array of {name, cwd, lastUsed}
(lastUsed in RFC 3339; cwd is "" until a command's state was kept).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			store, err := sessionStore(c)
			if err != nil {
				return err
			}
			infos, err := store.List(c.Context())
			if err != nil {
				return exitError{code: 1, err: err}
			}
			if asJSON {
				return writeJSON(ios, infos)
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tLAST USE\tCWD")
			now := time.Now()
			for _, in := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", in.Name, listing.Age(now.Sub(in.LastUsed)), listing.OneLine(in.Cwd, 80))
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	return c
}

func newSessionShowCmd(ios IO) *cobra.Command {
	var values, asJSON bool
	c := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a session: its cwd and the names of what it keeps (values with --values)",
		Long: `Show session NAME: its working directory, last use, and the names of the variables (exported ones
marked), functions and aliases it keeps, the inherited variables it unset, its shell options and umask.
Values are shown only with --values, since exported variables can be secrets: then the state as the
shell text that restores it. --json prints the same as an object.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if err := sessionName(c, args[0]); err != nil {
				return err
			}
			store, err := sessionStore(c)
			if err != nil {
				return err
			}
			in, err := store.Show(c.Context(), args[0], values)
			if err != nil {
				return exitError{code: 1, err: err}
			}
			if asJSON {
				return writeJSON(ios, in)
			}
			return writeSession(ios, in)
		},
	}
	c.Flags().BoolVar(&values, "values", false, "also print the values (they can be secrets)")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return c
}

// writeSession prints what show tells, one item a line.
func writeSession(ios IO, in session.Info) error {
	var b strings.Builder
	line := func(label string, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-10s %s\n", label+":", v)
		}
	}
	line("session", in.Name)
	line("cwd", in.Cwd)
	line("last use", in.LastUsed.Format(time.RFC3339)+" ("+listing.Age(time.Since(in.LastUsed))+" ago)")
	vars := make([]string, len(in.Variables))
	for i, v := range in.Variables {
		vars[i] = v
		for _, x := range in.Exported {
			if x == v {
				vars[i] = v + " (exported)"
			}
		}
	}
	line("variables", strings.Join(vars, ", "))
	line("unset", strings.Join(in.Unset, ", "))
	line("functions", strings.Join(in.Functions, ", "))
	line("aliases", strings.Join(in.Aliases, ", "))
	line("set -o", strings.Join(in.SetOptions, " "))
	line("shopt -s", strings.Join(in.Shopts, " "))
	line("umask", in.Umask)
	if in.Values != "" {
		b.WriteString("\n" + in.Values)
	}
	_, err := fmt.Fprint(ios.Out, b.String())
	return err
}

func newSessionRmCmd(ios IO) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a session and its state",
		Long: `Remove session NAME and everything it keeps. A command of the session still running is waited for
up to 5 seconds; past that nothing is removed and rm exits 1. An unknown session is an error too (exit 1).`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if err := sessionName(c, args[0]); err != nil {
				return err
			}
			store, err := sessionStore(c)
			if err != nil {
				return err
			}
			err = store.Remove(c.Context(), args[0], session.RemoveWait)
			if errors.Is(err, session.ErrNotFound) {
				// As `session show` says it.
				return exitError{code: 1, err: fmt.Errorf("session %s: %w", args[0], session.ErrNotFound)}
			}
			if err != nil {
				return exitError{code: 1, err: err}
			}
			return nil
		},
	}
}

// writeJSON prints v as one line of JSON.
func writeJSON(ios IO, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(ios.Out, "%s\n", b)
	return err
}
