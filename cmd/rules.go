package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/listing"
)

func newRulesCmd(ios IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "rules [list|check|test COMMAND]",
		Short: "Show, lint and explain the interceptor rules",
		Long: `The interceptor (off by default; --intercept or interceptor.enabled) blocks shell commands for which the
calling agent has a dedicated tool: file readers, searches, finders, in-place edits and writes by shell
redirection. It is advice for agents, not a security boundary.

  rules list           the effective rules, in the order they are tried, and where each came from
  rules check          lint the rules of the config; exit 1 with a message per broken rule
  rules test COMMAND   which rule fires on which simple command of COMMAND, or none`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return listRules(c, ios, false) },
	}
	var listJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List the effective rules", Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return listRules(c, ios, listJSON) },
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the rules as JSON, patterns whole")
	c.AddCommand(
		list,
		&cobra.Command{
			Use: "check", Short: "Lint the configured rules (exit 1 on a broken rule)", Args: usageArgs(cobra.NoArgs),
			RunE: func(c *cobra.Command, _ []string) error {
				cfg, err := loadConfig(c)
				if err != nil {
					return err
				}
				// New compiles every rule and names each broken one (custom and built-in numbered apart).
				ic, broken := intercept.New(cfg.Interceptor.Rules, cfg.Interceptor.DefaultRules, nil)
				for _, e := range broken {
					fmt.Fprintln(ios.Out, e)
				}
				if len(broken) > 0 {
					return exitError{code: 1, err: fmt.Errorf("%d broken rule(s)", len(broken))}
				}
				fmt.Fprintf(ios.Out, "%d rule(s), all valid\n", len(ic.Rules()))
				return nil
			},
		},
		newRulesTestCmd(ios),
	)
	return c
}

// interceptor loads the config of c and builds its interceptor; broken rules are warned about on stderr.
func interceptor(c *cobra.Command, ios IO) (config.Config, *intercept.Interceptor, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return cfg, nil, err
	}
	ic, warnings := intercept.New(cfg.Interceptor.Rules, cfg.Interceptor.DefaultRules, cfg.Interceptor.Tools)
	for _, w := range warnings {
		fmt.Fprintln(ios.Err, "agentbash: warning:", w)
	}
	return cfg, ic, nil
}

func listRules(c *cobra.Command, ios IO, asJSON bool) error {
	cfg, ic, err := interceptor(c, ios)
	if err != nil {
		return err
	}
	if asJSON {
		return encodeJSON(ios.Out, ic.Rules())
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTOOL\tSOURCE\tMESSAGE\tPATTERN")
	for i, r := range ic.Rules() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, r.Tool, r.Source, listing.OneLine(r.Message, 60), shownPattern(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "\n(patterns cut at %d characters; --json prints them whole)\n", patternWidth)
	state := "disabled (enable with --intercept or interceptor.enabled)"
	if cfg.Interceptor.Enabled {
		state = "enabled"
	}
	fmt.Fprintf(ios.Out, "\ninterceptor: %s; active tools: %v\n", state, cfg.Interceptor.Tools)
	return nil
}

func newRulesTestCmd(ios IO) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "test [--tools TOOLS] COMMAND",
		Short: "Show which rule fires on each simple command of COMMAND",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, ic, err := interceptor(c, ios)
			if err != nil {
				return err
			}
			command := strings.Join(args, " ")
			matches := ic.Explain(command)
			if asJSON {
				return encodeJSON(ios.Out, matches)
			}
			if len(matches) == 0 {
				fmt.Fprintln(ios.Out, "no simple commands (or the command does not parse): not intercepted")
			}
			rules, cut := ic.Rules(), false
			for _, m := range matches {
				if m.Rule == nil {
					fmt.Fprintf(ios.Out, "%s\n  → no rule fires\n", m.Command)
					continue
				}
				// The rule as rules list numbers it, and its pattern cut as there: a built-in one runs to
				// hundreds of characters.
				n := slices.Index(rules, *m.Rule) + 1
				shown := shownPattern(*m.Rule)
				cut = cut || strings.HasSuffix(shown, "…")
				fmt.Fprintf(ios.Out, "%s\n  → blocked: tool %s (%s rule %d: %s)\n  %s\n", m.Command, m.Rule.Tool, m.Rule.Source, n, shown, m.Rule.Message)
			}
			if cut {
				fmt.Fprintf(ios.Out, "(patterns cut at %d characters; rules list --json prints them whole)\n", patternWidth)
			}
			if len(cfg.Interceptor.Tools) == 0 {
				fmt.Fprintln(ios.Out, "no tools are active, so no rule can fire: pass --tools read,grep,… (or set interceptor.tools)")
			} else {
				fmt.Fprintf(ios.Out, "active tools: %s\n", strings.Join(cfg.Interceptor.Tools, ","))
			}
			return nil
		},
	}
	c.Flags().SetInterspersed(false)
	c.Flags().StringSlice("tools", nil, "active agent `TOOLS` (read,grep,find,edit,write)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the matches as JSON")
	return c
}

// patternWidth is where rules list and rules test cut a pattern.
const patternWidth = 60

// shownPattern is a rule's pattern on one line, as /pattern/flags when it has flags, cut at patternWidth
// characters with an ellipsis.
func shownPattern(r intercept.Rule) string {
	pattern := r.Pattern
	if r.Flags != "" {
		pattern = "/" + pattern + "/" + r.Flags
	}
	return listing.OneLine(pattern, patternWidth)
}

// encodeJSON writes v as indented JSON without HTML escaping.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
