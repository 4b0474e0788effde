package cmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/listing"
	"github.com/agentbash/agentbash/pkg/sink"
)

func newArtifactCmd(ios IO) *cobra.Command {
	var path, raw bool
	c := &cobra.Command{
		Use:   "artifact ID",
		Short: "Print the full output saved as artifact://ID",
		Long: `Print the full output of a run saved as artifact://ID: the sanitized text (the same text whose lines the
truncation notice counts). --raw prints the bytes as written; binary artifacts always print raw.
ID may be written as the notice prints it, artifact://ID. --path prints the file's absolute path (also
in the result's details.artifactPath). Unknown or malformed ids are an error (exit 1).`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeArtifactIDs,
		RunE: func(c *cobra.Command, args []string) error {
			id, err := artifact.ParseRef(args[0])
			if err != nil {
				return exitError{code: 1, err: err}
			}
			store, err := artifactStore(c)
			if err != nil {
				return err
			}
			if path {
				p, err := store.Path(c.Context(), id)
				if err != nil {
					return exitError{code: 1, err: err}
				}
				fmt.Fprintln(ios.Out, p)
				return nil
			}
			if err := store.Print(c.Context(), ios.Out, id, raw); err != nil {
				return exitError{code: 1, err: err}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&path, "path", false, "print the artifact's path instead of its content")
	c.Flags().BoolVar(&raw, "raw", false, "print the raw bytes as written")
	addArtifactDirFlag(c)
	dashedID(c, func(_ *cobra.Command, arg string) error {
		_, err := artifact.ParseRef(arg)
		return exitError{code: 1, err: err}
	})
	c.AddCommand(newArtifactListCmd(ios), newArtifactPruneCmd(ios))
	return c
}

func addArtifactDirFlag(c *cobra.Command) {
	c.Flags().String("artifact-dir", "", "artifact `DIR` (default $XDG_STATE_HOME/agentbash/artifacts)")
	addTargetFlag(c.Flags())
}

// artifactStore is the artifacts of the place the config names.
func artifactStore(c *cobra.Command) (executor.Artifacts, error) {
	svc, err := placeService(c)
	if err != nil {
		return nil, err
	}
	store, err := svc.Artifacts()
	if err != nil {
		return nil, exitError{code: 1, err: err}
	}
	return store, nil
}

func newArtifactListCmd(ios IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List artifacts: id, size, age, command",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			store, err := artifactStore(c)
			if err != nil {
				return err
			}
			infos, err := store.List(c.Context())
			if err != nil {
				return exitError{code: 1, err: err}
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSIZE\tAGE\tCOMMAND")
			now := time.Now()
			for _, in := range infos {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.ID, sink.FormatSize(in.Size),
					listing.Age(now.Sub(in.ModTime)), listing.OneLine(in.Command, 80))
			}
			return tw.Flush()
		},
	}
	addArtifactDirFlag(c)
	return c
}

func newArtifactPruneCmd(ios IO) *cobra.Command {
	c := newPruneCmd(ios, pruneCmd{
		short:   "Remove artifacts older than DURATION (e.g. 7d, 12h, 30m)",
		example: "  agentbash artifact prune --older-than 7d",
		flag:    "remove artifacts older than `DURATION` (7d, 12h, 30m)",
		what:    "artifact(s)",
		prune: func(c *cobra.Command, age time.Duration) ([]string, error) {
			store, err := artifactStore(c)
			if err != nil {
				return nil, err
			}
			return store.Prune(c.Context(), age)
		},
	})
	addArtifactDirFlag(c)
	return c
}

// pruneCmd describes a `prune --older-than DURATION` command (artifacts, tasks).
type pruneCmd struct {
	short, example, flag string
	what                 string                                                      // what the count is of: "artifact(s)"
	prune                func(c *cobra.Command, age time.Duration) ([]string, error) // the ids removed
}

// newPruneCmd builds a prune command: --older-than is required and parsed as an age (7d, 12h, 30m).
func newPruneCmd(ios IO, p pruneCmd) *cobra.Command {
	var olderThan string
	c := &cobra.Command{
		Use:     "prune --older-than DURATION",
		Short:   p.short,
		Args:    usageArgs(cobra.NoArgs),
		Example: p.example,
		RunE: func(c *cobra.Command, _ []string) error {
			if olderThan == "" {
				return usageError{err: errors.New("prune needs --older-than DURATION (e.g. 7d)"), cmd: c.CommandPath()}
			}
			d, err := parseAge(olderThan)
			if err != nil {
				return usageError{err: fmt.Errorf("--older-than: %w", err), cmd: c.CommandPath()}
			}
			ids, err := p.prune(c, d)
			if _, ok := errors.AsType[exitError](err); err != nil && !ok {
				err = exitError{code: 1, err: err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(ios.Out, "removed %d %s\n", len(ids), p.what)
			return nil
		},
	}
	c.Flags().StringVar(&olderThan, "older-than", "", p.flag)
	return c
}

// parseAge parses a Go duration or a whole number of days (`7d`).
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 7d, 12h, 30m)", s)
	}
	return d, nil
}
