package cmd

import (
	"bufio"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/listing"
)

// Shell completions: the values each flag takes, registered with cobra so `agentbash completion bash|zsh|
// fish|powershell` offers them. Flags that take a number or free text complete to nothing rather than to
// the files of the current directory.

// builtinTools are the tools the built-in interceptor rules name (reference §3.3).
var builtinTools = []string{"read", "grep", "find", "edit", "write"}

var (
	formatValues = []cobra.Completion{
		cobra.CompletionWithDesc("auto", "text on a terminal, JSON otherwise"),
		cobra.CompletionWithDesc("json", "one JSON tool result on one line"),
		cobra.CompletionWithDesc("text", "the result text, for people"),
	}
	nonZeroExitValues = []cobra.Completion{
		cobra.CompletionWithDesc("error", "a non-zero exit is an error result"),
		cobra.CompletionWithDesc("report", "a non-zero exit is plain data"),
	}
	sandboxValues = []cobra.Completion{
		cobra.CompletionWithDesc("workspace-write", "writes only in the cwd, the writable paths, caches and a private /tmp"),
		cobra.CompletionWithDesc("read-only", "writes only in a private /tmp"),
		cobra.CompletionWithDesc("off", "nothing confined"),
	}
	sandboxNetworkValues = []cobra.Completion{
		cobra.CompletionWithDesc("off", "only the command's own loopback"),
		cobra.CompletionWithDesc("on", "the host's network"),
	}
	olderThanValues = []cobra.Completion{
		cobra.CompletionWithDesc("1d", "a day"), cobra.CompletionWithDesc("7d", "a week"),
		cobra.CompletionWithDesc("30d", "a month"), cobra.CompletionWithDesc("12h", "twelve hours"),
	}
)

// completeDirs completes directory names only.
func completeDirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completeFiles completes file names.
func completeFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveDefault
}

// completeConfigFiles completes YAML files (and directories to reach them).
func completeConfigFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeTools completes a comma-separated list of the tools the effective rules name (the built-in
// ones, and those of custom rules in the config), each offered once.
func completeTools(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	tools := slices.Clone(builtinTools)
	if cfg, err := loadConfig(c); err == nil {
		ic, _ := intercept.New(cfg.Interceptor.Rules, cfg.Interceptor.DefaultRules, nil)
		for _, r := range ic.Rules() {
			if !slices.Contains(tools, r.Tool) {
				tools = append(tools, r.Tool)
			}
		}
	}
	done, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := strings.Split(strings.TrimSuffix(done, ","), ",")
	var out []cobra.Completion
	for _, t := range tools {
		if strings.HasPrefix(t, last) && !slices.Contains(given, t) {
			out = append(out, done+t)
		}
	}
	// No space after a value: the list may go on with a comma.
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// completeShells completes the login shells of /etc/shells; a path outside them completes as a file.
func completeShells(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, sh := range append([]string{"bash", "sh"}, etcShells()...) {
		if strings.HasPrefix(sh, toComplete) && !slices.Contains(out, sh) {
			out = append(out, sh)
		}
	}
	if len(out) == 0 && strings.ContainsRune(toComplete, '/') {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// etcShells reads the shells listed in /etc/shells.
func etcShells() []string {
	f, err := os.Open("/etc/shells")
	if err != nil {
		return nil
	}
	defer f.Close()
	var shells []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "/") {
			shells = append(shells, line)
		}
	}
	return shells
}

// completeArtifactIDs completes the first argument to the ids in the artifact directory (--artifact-dir
// or the config), newest first, each described by its command.
func completeArtifactIDs(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	infos, err := artifact.Store{Dir: cfg.ArtifactDir()}.List()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, in := range slices.Backward(infos) {
		if strings.HasPrefix(in.ID, toComplete) {
			out = append(out, cobra.CompletionWithDesc(in.ID, listing.OneLine(in.Command, 60)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// flagCompletions is what each flag completes to, by flag name, for every command that has the flag.
var flagCompletions = map[string]cobra.CompletionFunc{
	"format":             cobra.FixedCompletions(formatValues, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder),
	"non-zero-exit":      cobra.FixedCompletions(nonZeroExitValues, cobra.ShellCompDirectiveNoFileComp),
	"older-than":         cobra.FixedCompletions(olderThanValues, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder),
	"tools":              completeTools,
	"sandbox":            cobra.FixedCompletions(sandboxValues, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder),
	"sandbox-network":    cobra.FixedCompletions(sandboxNetworkValues, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveKeepOrder),
	"sandbox-writable":   completeDirs,
	"sandbox-deny-read":  completeFiles,
	"sandbox-allow-host": cobra.NoFileCompletions,
	"shell":              completeShells,
	"cwd":                completeDirs,
	"artifact-dir":       completeDirs,
	"file":               completeFiles,
	"config":             completeConfigFiles,
	// Numbers and free text: nothing to offer, and no file names either.
	"timeout":            cobra.NoFileCompletions,
	"kill-grace":         cobra.NoFileCompletions,
	"head":               cobra.NoFileCompletions,
	"tail":               cobra.NoFileCompletions,
	"max-bytes":          cobra.NoFileCompletions,
	"artifact-max-bytes": cobra.NoFileCompletions,
	"preview":            cobra.NoFileCompletions,
	"prefix":             cobra.NoFileCompletions,
	"wrapper":            cobra.NoFileCompletions,
	"env":                cobra.NoFileCompletions,
}

// registerCompletions registers flagCompletions on c and every command below it; a command that accepts
// no argument completes none (rather than file names).
func registerCompletions(c *cobra.Command) {
	if c.ValidArgsFunction == nil && c.Args != nil && c.Args(c, []string{"x"}) != nil {
		c.ValidArgsFunction = cobra.NoFileCompletions
	}
	for name, fn := range flagCompletions {
		if c.Flag(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fn) // a persistent flag is registered once, by the root
		}
	}
	for _, sub := range c.Commands() {
		registerCompletions(sub)
	}
}
