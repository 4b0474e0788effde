// Package cmd is agentbash's command line: one cobra command per file, each turning flags and config into
// a plain options struct and calling into pkg/. exit.go maps errors and results to exit statuses (reference
// §3.11); nothing else calls os.Exit.
package cmd

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/proctitle"
	// Its init runs the hidden commands agentbash re-executes itself as: a supervisor never gets here.
	_ "github.com/agentbash/agentbash/pkg/reexec"
	"github.com/agentbash/agentbash/pkg/supervisor"
	"github.com/agentbash/agentbash/pkg/target"
)

// IO is the streams a command uses, injectable for tests (after gh's iostreams).
type IO struct {
	In            io.Reader
	Out, Err      io.Writer
	OutIsTerminal bool
	Cols, Rows    int // the terminal's size in characters when stdout is one, 0 when unknown
}

// SystemIO is the process's own streams.
func SystemIO() IO {
	fd := os.Stdout.Fd()
	ios := IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		OutIsTerminal: isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd),
	}
	if ios.OutIsTerminal {
		if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil {
			ios.Cols, ios.Rows = int(ws.Col), int(ws.Row)
		}
	}
	return ios
}

// Execute runs the CLI with args (the process's own, os.Args[1:]) and calls exit with its status.
//
// First it hides agentbash's arguments from its command line (/proc/PID/cmdline, what ps and pgrep -f
// read), which then shows only the program and the subcommand (`agentbash run`): a command that runs
// `pkill -f WORD` on a word of its own text must not hit agentbash (reference §3.7). Best effort: off Linux
// the command line stays as it was.
func Execute(info BuildInfo, exit func(int), args []string) {
	isRun := len(args) > 0 && args[0] == "run"
	if isRun {
		// The run's supervisor was started while the program initialized (pkg/supervisor/early), else it
		// is started now, before anything else, so that its exec overlaps the parsing of the command line
		// and the loading of the config; runRun takes it. One left unused ends when its socket closes with
		// this process.
		if spare = supervisor.TakeEarly(); spare == nil {
			spare = &supervisor.Pool{}
			spare.Prewarm()
		}
		go relay.once.Do(relay.install) // off the run's path: its handleSignals waits for it
	}
	args = proctitle.Clone(args) // they point into the memory that proctitle.Set rewrites
	ios := SystemIO()
	root := newRootFor(info, ios, args)
	title := []string{os.Args[0]}
	if c, _, err := root.Find(args); err == nil {
		title = append(title, strings.Fields(c.CommandPath())[1:]...)
	}
	_ = proctitle.Set(title...)
	exit(execute(context.Background(), root, ios, args))
}

// Run runs the CLI in-process and returns the exit status.
func Run(ctx context.Context, info BuildInfo, ios IO, args []string) int {
	return execute(ctx, newRootCmd(info, ios), ios, args)
}

func execute(ctx context.Context, root *cobra.Command, ios IO, args []string) int {
	root.SetArgs(dashedIDArgs(root, args))
	err := root.ExecuteContext(ctx)
	return exitStatus(err, ios.Err)
}

// newRootCmd builds the command tree: the root with subs, or with every command and their completions
// when subs is empty.
func newRootCmd(info BuildInfo, ios IO, subs ...*cobra.Command) *cobra.Command {
	target.Version = info.resolved().Version // the version a target runs, and its handshake names
	root := &cobra.Command{
		Use:   "agentbash",
		Short: "Run shell commands the way a coding agent's bash tool should",
		Long: `agentbash runs one shell command with a timeout, no prompts and no pagers, keeps a bounded tail of
its output (the whole stream goes to an artifact file), and prints a result an agent can parse (JSON) or a
person can read (text). See 'agentbash run --help'.`,
		Args:          usageArgs(cobra.NoArgs), // `agentbash nosuch` is a usage error
		RunE:          func(c *cobra.Command, _ []string) error { return c.Help() },
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       target.Version,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.Err)
	root.PersistentFlags().String("config", "", "config file (default $XDG_CONFIG_HOME/agentbash/config.yaml; env AGENTBASH_CONFIG)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err: flagError(err), cmd: c.CommandPath()} })
	whole := len(subs) == 0
	if whole {
		for _, c := range commands {
			subs = append(subs, c.build(info, ios))
		}
	}
	root.AddCommand(subs...)
	if whole { // a completion request (__complete) gets the whole tree: a tree of one command never answers one
		registerCompletions(root)
	}
	return root
}

// commands are the root's subcommands, each with the name it is called by.
var commands = []struct {
	name  string
	build func(BuildInfo, IO) *cobra.Command
}{
	{"run", func(_ BuildInfo, ios IO) *cobra.Command { return newRunCmd(ios) }},
	{"start", func(_ BuildInfo, ios IO) *cobra.Command { return newStartCmd(ios) }},
	{"output", func(_ BuildInfo, ios IO) *cobra.Command { return newOutputCmd(ios) }},
	{"input", func(_ BuildInfo, ios IO) *cobra.Command { return newInputCmd(ios) }},
	{"kill", func(_ BuildInfo, ios IO) *cobra.Command { return newKillCmd(ios) }},
	{"wait", func(_ BuildInfo, ios IO) *cobra.Command { return newWaitCmd(ios) }},
	{"tasks", func(_ BuildInfo, ios IO) *cobra.Command { return newTasksCmd(ios) }},
	{"artifact", func(_ BuildInfo, ios IO) *cobra.Command { return newArtifactCmd(ios) }},
	{"rules", func(_ BuildInfo, ios IO) *cobra.Command { return newRulesCmd(ios) }},
	{"version", newVersionCmd},
	{"session", func(_ BuildInfo, ios IO) *cobra.Command { return newSessionCmd(ios) }},
	{"rpc", newRPCCmd},
	{"mcp", newMCPCmd},
	{"target", func(_ BuildInfo, ios IO) *cobra.Command { return newTargetCmd(ios) }},
	{supervisor.Command, func(BuildInfo, IO) *cobra.Command { return newSuperviseCmd() }},
}

// newRootFor builds the tree args need. A command needs only itself: when args[0] names one, the root
// gets that command alone, without the others, their flags and their completions, nor cobra's `completion`
// (half a millisecond of every `version`, a quarter of every `run`). Anything else (no arguments, a flag
// first, `help`, a completion request, a typo) gets the whole tree.
func newRootFor(info BuildInfo, ios IO, args []string) *cobra.Command {
	if len(args) > 0 {
		for _, c := range commands {
			if c.name == args[0] {
				root := newRootCmd(info, ios, c.build(info, ios))
				root.CompletionOptions.DisableDefaultCmd = true
				return root
			}
		}
	}
	return newRootCmd(info, ios)
}

// usageArgs wraps a cobra argument validator so its failures are usage errors.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := v(c, args); err != nil {
			return usageError{err: err, cmd: c.CommandPath()}
		}
		return nil
	}
}
