package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/livequeue"
	"github.com/agentbash/agentbash/pkg/local"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/supervisor"
	"github.com/agentbash/agentbash/pkg/terminal"
)

// spare is the executor whose supervisor Execute started ahead for a `run` (see Execute).
var spare *supervisor.Pool

type runFlags struct {
	file        string
	stdin       bool
	cwd         string
	head, tail  lineLimit
	noNormalize bool
	env         []string
	preview     int
	background  bool    // start: a background task (reference §8)
	yield       float64 // run --yield SECONDS: hand the command over as a task after SECONDS
	// Input to the running command (reference §14): a stdin pipe, or a terminal of cols×rows.
	stdinPipe, tty bool
	cols, rows     int
}

func newRunCmd(ios IO) *cobra.Command {
	var f runFlags
	c := newRunLikeCmd(ios, &f)
	c.Flags().BoolVar(&f.background, "background", false, "start the command as a background task and return at once (as agentbash start)")
	c.Flags().String("task-dir", "", "task `DIR` for --background and --yield (default $XDG_STATE_HOME/agentbash/tasks)")
	c.Flags().Float64Var(&f.yield, "yield", 0, "after `SECONDS`, hand a command still running over as a background task and return what it printed so far")
	return c
}

// newRunLikeCmd is `run` with its flags; `start` shares them.
func newRunLikeCmd(ios IO, fp *runFlags) *cobra.Command {
	f := fp
	c := &cobra.Command{
		Use:   "run [flags] [--] COMMAND...",
		Short: "Run one shell command and print its result",
		Long: `Run one shell command through the whole pipeline: normalize, intercept, check the working directory,
clamp the timeout, run bash in its own session, keep a bounded tail of the output (the whole stream goes to
an artifact), and print the result: JSON when stdout is not a terminal, text when it is.

The command is one argument, script text run as written ('ls -la | head -5'); or two or more arguments,
an argv as timeout, env and nice take one: each is shell-quoted, so -- rm 'my file' removes one file and
-- echo '$HOME' prints $HOME (earlier versions joined them with plain spaces); or a file (-f FILE, -f -
for stdin). --prefix is shell text before the command ('set -o pipefail;'); --wrapper is a program the
shell runs under ('nice -n 10'), which covers the whole command.

Exit status: the command's own; 124 timed out; 125 could not run (bad cwd, no shell, bad config);
126 blocked by an interceptor rule; 128+N agentbash was cancelled by signal N; 2 usage error.`,
		Example: `  agentbash run 'go test ./... 2>&1 | tail -30'
  agentbash run --timeout 60 --cwd ~/src/app -- make test
  agentbash run -- rm 'my file'
  agentbash run --wrapper 'nice -n 10' 'cd build && make'
  agentbash run -f script.sh
  agentbash run --format text 'git log --oneline | head -n 5'`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runRun(c, ios, *f, args)
		},
	}
	c.Flags().SetInterspersed(false) // `agentbash run ls -la`: -la is the command's
	fs := c.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "read the command from `FILE` (- for stdin)")
	fs.BoolVar(&f.stdin, "stdin", false, "pass agentbash's stdin to the command (default /dev/null)")
	fs.String("format", "auto", "result `FORMAT`: json, text or auto (text on a terminal)")
	fs.BoolVar(&f.stdinPipe, "stdin-pipe", false, "give a task (start, --yield, --background) a pipe as stdin that\n"+
		"agentbash input ID writes to")
	fs.BoolVar(&f.tty, "tty", false, "run the command in a terminal (a pseudo-terminal, TERM=xterm-256color): the result\n"+
		"adds the screen a person would see; agentbash input ID types into a task's terminal")
	fs.IntVar(&f.cols, "cols", 0, "with --tty: the terminal's width in `COLUMNS`, 2 to 1000 (default 120)")
	fs.IntVar(&f.rows, "rows", 0, "with --tty: the terminal's height in `ROWS`, 2 to 1000 (default 40)")
	fs.IntVar(&f.preview, "preview", 0, "text format: show only the last `N` lines, rolling live on a terminal, saying how many were hidden (0 shows all)")
	addRequestFlags(fs, f)
	return c
}

// addRequestFlags adds the flags that shape one command's run: those of run that rpc and mcp take as the
// defaults of their requests.
func addRequestFlags(fs *pflag.FlagSet, f *runFlags) {
	addTargetFlag(fs)
	fs.StringVar(&f.cwd, "cwd", "", "working `DIR` (default the current directory; ~ expands)")
	fs.Float64("timeout", config.DefaultTimeout, "timeout in `SECONDS`, clamped to [1, 3600]")
	fs.Float64("kill-grace", config.DefaultKillGrace, "`SECONDS` between SIGTERM and SIGKILL")
	f.head, f.tail = lineLimit{-1}, lineLimit{-1}
	fs.Var(&f.head, "head", "show only the first `N` lines of the whole output")
	fs.Var(&f.tail, "tail", "show only the last `N` lines of the whole output")
	fs.BoolVar(&f.noNormalize, "no-normalize", false, "do not pull a trailing | head/| tail into a limit")
	fs.Int("max-bytes", config.DefaultMaxBytes, "in-memory output window in `BYTES`")
	fs.String("artifact-dir", "", "artifact `DIR` (default $XDG_STATE_HOME/agentbash/artifacts)")
	fs.Int64("artifact-max-bytes", config.DefaultArtifactMaxBytes, "cap on one artifact in `BYTES`")
	fs.String("shell", "", "shell `PATH` (default bash from PATH, else /bin/sh)")
	fs.String("prefix", "", "shell text put before the command: `PREFIX` COMMAND (e.g. 'set -o pipefail;')")
	fs.Var(&wordsFlag{}, "wrapper", "run the shell under `ARGV`, split like shell words: 'nice -n 10' runs\n"+
		"nice -n 10 bash -c COMMAND, so it covers the whole command ('' for none)")
	fs.StringArrayVar(&f.env, "env", nil, "set `KEY=VALUE` in the command's environment (repeatable)")
	fs.Bool("intercept", false, "block commands for which the agent has a dedicated tool")
	fs.StringSlice("tools", nil, "active agent `TOOLS` for interception (read,grep,find,edit,write)")
	fs.String("non-zero-exit", "error", "a non-zero exit is an error result (`error`) or plain data (report)")
	fs.String("session", "", "run in session `NAME`: cd, variables, functions, aliases, options and umask carry over\n"+
		"to its next command (\"\" for none)")
	addSandboxFlags(fs)
}

// addSandboxFlags adds the flags of the sandbox's keys (reference §13); for rpc and mcp they are the floor a
// request can only tighten. A list flag given replaces its key's list, but --sandbox-deny-read, which adds.
func addSandboxFlags(fs *pflag.FlagSet) {
	fs.String("sandbox", "off", "confine the command: `MODE` workspace-write (writes only in the cwd, the\n"+
		"--sandbox-writable paths, tool caches and a private /tmp), read-only (writes only in a\n"+
		"private /tmp) or off; confined, it has no capabilities, cannot signal outside processes\n"+
		"and does not see ~/.ssh and the like")
	fs.String("sandbox-network", "off", "what a sandboxed command reaches: `NET` off (only its own loopback),\n"+
		"proxy (only the --sandbox-allow-host hosts, through a proxy agentbash runs for the\n"+
		"command) or on (the host's network)")
	fs.StringArray("sandbox-writable", nil, "a `PATH` a workspace-write command may write besides the cwd (repeatable)")
	fs.StringArray("sandbox-deny-read", nil, "a `PATH` a sandboxed command sees as absent or empty (repeatable;\n"+
		"added to sandbox.denyRead: ~/.ssh, ~/.aws, ~/.gnupg, … by default)")
	fs.StringArray("sandbox-allow-host", nil, "a `HOST:PORT` that network proxy lets through (repeatable; the flags replace\n"+
		"sandbox.allowHosts): github.com:443, *.npmjs.org:443 (names below npmjs.org),\n"+
		"127.0.0.1:5432, [::1]:8080")
}

// addTargetFlag adds --target, where the command runs or is found (reference §15).
func addTargetFlag(fs *pflag.FlagSet) {
	fs.String("target", "", "run on `URI`: local, ssh://[user@]host[:port][/dir], docker://NAME, podman://NAME,\n"+
		"kubectl://[NS/]POD[/CONTAINER] or cmd://ARGV (an argv reaching agentbash rpc there); default local")
}

// checkEnvFlags checks --env values: KEY=VALUE with a key.
func checkEnvFlags(env []string) error {
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
	}
	return nil
}

// serviceConfig is the command's own settings from the resolved config: cfgWarnings go into every result,
// flagEnv (--env) is the request's environment layer.
func serviceConfig(cfg config.Config, cfgWarnings, flagEnv []string) service.Config {
	return service.Config{
		Timeout: cfg.Timeout, KillGrace: cfg.KillGrace,
		Prefix: cfg.Shell.Prefix, Wrapper: cfg.Shell.Wrapper,
		Env:      flagEnv,
		MaxBytes: cfg.MaxBytes, ArtifactMaxBytes: cfg.Artifacts.MaxBytes,
		Intercept: cfg.Interceptor.Enabled, Tools: cfg.Interceptor.Tools,
		Rules: cfg.Interceptor.Rules, DefaultRules: cfg.Interceptor.DefaultRules,
		NonZeroExit: cfg.Result.NonZeroExit,
		MaxLifetime: cfg.Tasks.MaxLifetime,
		Sandbox:     cfg.Sandbox.Policy(),
		Warnings:    cfgWarnings,
	}
}

// localConfig is this machine's settings as a place: the shell, its environment, the directories; sup
// starts the supervisors (nil: one process per run).
func localConfig(cfg config.Config, sup run.Starter) local.Config {
	return local.Config{
		Shell: cfg.Shell.Path, ShellEnv: envList(cfg.Shell.Env),
		Snapshot: cfg.Shell.Snapshot, SnapshotDir: config.SnapshotDir(),
		ArtifactDir: cfg.ArtifactDir(), SessionDir: config.SessionDir(), TaskDir: cfg.TaskDir(),
		KillLimit:   killLimit(cfg),
		Supervisors: sup,
		OwnDirs:     cfg.OwnDirs(), StateDir: config.StateDir(),
	}
}

// newService is the service of one process over the place the config names (the target): this machine,
// with sup starting its supervisors, or a target's executor (reference §15). Broken rules are said through
// warn when it is set. The error is a target that cannot be opened (an unknown kind, a malformed URI).
func newService(cfg config.Config, cfgWarnings, flagEnv []string, sup run.Starter, warn func(string)) (*service.Service, error) {
	return newServiceFor(serviceConfig(cfg, cfgWarnings, flagEnv), cfg, sup, warn)
}

// newServiceFor is newService with its service config made already (a server's).
func newServiceFor(sc service.Config, cfg config.Config, sup run.Starter, warn func(string)) (*service.Service, error) {
	sc.Warn = warn
	exe, err := openExecutor(cfg, sup)
	if err != nil {
		return nil, err
	}
	return service.New(sc, exe), nil
}

// openExecutor is the executor of the config's target: this machine for "" and "local".
func openExecutor(cfg config.Config, sup run.Starter) (executor.Executor, error) {
	if cfg.Target == "" || cfg.Target == "local" {
		return local.New(localConfig(cfg, sup)), nil
	}
	return executor.Open(cfg.Target)
}

// placeService is the service of a command that only reaches the place's stores (tasks, sessions,
// artifacts): the config's target, no supervisors of its own. A target that cannot be opened exits 125.
func placeService(c *cobra.Command) (*service.Service, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	svc, err := newService(cfg, nil, nil, nil, nil)
	if err != nil {
		return nil, targetError(err)
	}
	return svc, nil
}

// targetError is the exit of a command whose target cannot be opened: 125, as a run that could not start.
func targetError(err error) error { return exitError{code: exitCannotRun, err: err} }

// server is what a long-lived mode (rpc, mcp) runs with: the service over a pool of spare supervisors, the
// services of the other targets its requests may name (places: the config's targets.allowed), and the
// context that SIGINT/SIGTERM cancel. close ends the targets' connections, the spares and the signal
// handler.
type server struct {
	svc    *service.Service
	places *service.Places
	ctx    context.Context
	close  func()
}

// newServer starts spares idle supervisors and builds the service; broken rules are said on stderr. The
// caller makes the process lean (memlimit.Apply) once it built the rest, right before it serves.
func newServer(c *cobra.Command, ios IO, cfg config.Config, cfgWarnings, flagEnv []string, spares int) (server, error) {
	if err := service.CheckAllowed(cfg.Targets.Allowed, executor.Open); err != nil {
		return server{}, configError{err}
	}
	home, _ := os.UserHomeDir()
	if err := service.CheckSandbox(cfg.Sandbox.Policy(), home, forwards(cfg) != ""); err != nil {
		return server{}, configError{err}
	}
	pool := &supervisor.Pool{Spares: spares}
	pool.Prewarm()
	sc := serviceConfig(cfg, cfgWarnings, flagEnv)
	sc.Server = true // its requests' sandboxed workspace is where the server starts them, not their cwd
	svc, err := newServiceFor(sc, cfg, pool, func(w string) { _ = result.WriteWarnings(ios.Err, []string{w}) })
	if err != nil {
		pool.Close()
		return server{}, targetError(err)
	}
	places := service.NewPlaces(svc, cfg.Target, cfg.Targets.Allowed, executor.Open)
	ctx, cancel := context.WithCancelCause(c.Context())
	stop := handleSignals(cancel)
	return server{svc: svc, places: places, ctx: ctx,
		close: func() { stop(); cancel(nil); _ = places.Close(); pool.Close() }}, nil
}

// request is the command with the per-command flags (--cwd, --head, --tail, --no-normalize).
func (f runFlags) request(command string) request.Command {
	req := request.Command{Command: command, Cwd: f.cwd, NoNormalize: f.noNormalize, TTY: f.tty, Cols: f.cols, Rows: f.rows}
	if f.stdinPipe {
		req.StdinMode = request.StdinPipe
	}
	if f.head.n >= 0 {
		req.Head = &f.head.n
	}
	if f.tail.n >= 0 {
		req.Tail = &f.tail.n
	}
	return req
}

// checkInput refuses flags of a command's input that do not go together (reference §14): a size without
// --tty or out of 2–1000, --stdin with --stdin-pipe or --tty, a stdin pipe on a run nothing could write to.
func (f runFlags) checkInput(fs *pflag.FlagSet) error {
	if err := checkSizeFlags(fs); err != nil {
		return err
	}
	switch {
	case (f.cols != 0 || f.rows != 0) && !f.tty:
		return errors.New("--cols and --rows size a terminal: they need --tty")
	case f.tty && f.stdinPipe:
		return errors.New("--tty makes the terminal the command's stdin: it does not go with --stdin-pipe")
	case f.stdin && (f.tty || f.stdinPipe):
		return errors.New("--stdin passes agentbash's own stdin: it does not go with --tty or --stdin-pipe")
	case f.stdinPipe && !f.background && f.yield == 0:
		return errors.New("--stdin-pipe needs a task that agentbash input can write to: use start, or run --yield or --background")
	}
	return nil
}

// checkSizeFlags refuses a --cols or --rows outside 2 to 1000, or together past console.MaxCells
// (console.CheckSize, where 0 means "not given": a 0 given is refused here).
func checkSizeFlags(fs *pflag.FlagSet) error {
	cols, _ := fs.GetInt("cols")
	rows, _ := fs.GetInt("rows")
	for _, f := range []struct {
		name string
		n    int
	}{{"cols", cols}, {"rows", rows}} {
		if fs.Changed(f.name) && f.n == 0 {
			return fmt.Errorf("--%s: want %d to %d, got 0", f.name, screen.MinSize, screen.MaxSize)
		}
	}
	if err := console.CheckSize(cols, rows); err != nil {
		return fmt.Errorf("--%w", err)
	}
	return nil
}

func runRun(c *cobra.Command, ios IO, f runFlags, args []string) error {
	pool := spare // started by Execute, when it runs a process of its own
	if pool == nil {
		pool = &supervisor.Pool{}
		defer pool.Close()
	}
	command, err := commandText(ios, f, args)
	if fe, ok := errors.AsType[fileError](err); ok {
		// A script file that cannot be read is not a malformed command line: a result, exit 125.
		r := local.Failed("", f.cwd, fe.err)
		printResult(ios, r, textFormat(formatWithoutConfig(c), ios), nil, 0)
		return exitError{code: resultExit(r)}
	}
	if err != nil {
		return usageError{err: err, cmd: c.CommandPath()}
	}
	if f.background && f.yield != 0 {
		return usageError{err: errors.New("--background and --yield do not go together"), cmd: c.CommandPath()}
	}
	if f.yield < 0 || math.IsNaN(f.yield) {
		return usageError{err: errors.New("--yield takes a number of seconds > 0"), cmd: c.CommandPath()}
	}
	if f.preview < 0 {
		return usageError{err: errors.New("--preview takes a line count ≥ 0"), cmd: c.CommandPath()}
	}
	if err := f.checkInput(c.Flags()); err != nil {
		return usageError{err: err, cmd: c.CommandPath()}
	}
	if err := checkEnvFlags(f.env); err != nil {
		return usageError{err: err, cmd: c.CommandPath()}
	}

	cfg, cfgWarnings, cfgErr := loadConfigWarn(c)
	cfgWarnings = append(cfgWarnings, flagsInCommand(c, args)...)
	if _, ok := errors.AsType[usageError](cfgErr); ok {
		return cfgErr
	}
	if cfgErr != nil {
		// A broken config still gets a result (reference §3.11), in the format asked for, then exit 125.
		r := local.Failed(command, f.cwd, cfgErr)
		r.Details.Warnings = cfgWarnings
		text := textFormat(formatWithoutConfig(c), ios)
		if !text {
			_ = result.WriteWarnings(ios.Err, cfgWarnings) // text mode prints every warning itself
		}
		printResult(ios, r, text, nil, f.preview)
		return exitError{code: resultExit(r)}
	}
	text := textFormat(cfg.Format, ios)

	ctx, cancel := context.WithCancelCause(c.Context())
	defer cancel(nil)
	stop := handleSignals(cancel)
	defer stop()

	var warn func(string) // warnings: in details.warnings and on stderr
	if !text {
		// A broken rule is also said on stderr (reference §3.3); text mode prints every warning itself.
		warn = func(w string) { _ = result.WriteWarnings(ios.Err, []string{w}) }
		_ = result.WriteWarnings(ios.Err, cfgWarnings)
	}
	svc, err := newService(cfg, cfgWarnings, f.env, pool, warn)
	if err != nil {
		// A target that cannot be opened is a result too (reference §15), exit 125: nothing reached a place,
		// so it has no cwd or shell, and it names the target.
		r := result.Build(result.Input{Command: normalize.Trim(command), Err: err, TimeoutSeconds: cfg.Timeout,
			Head: -1, Tail: -1, Warnings: cfgWarnings})
		r.Details.Target = cfg.Target
		printResult(ios, r, text, nil, f.preview)
		return exitError{code: resultExit(r)}
	}
	defer svc.Executor().Close()
	req := f.request(command)
	req.Session = cfg.Session
	if f.stdin {
		req.Stdin = ios.In
	}
	if f.background || f.yield > 0 {
		return runTask(ctx, c, ios, svc, req, f, text)
	}
	var term *terminal.View
	var obs executor.Observer
	if text && ios.OutIsTerminal {
		// The pipeline does not stream when a head/tail limit is in effect (the view would show what it hides).
		term = newTerminal(ios, f.preview)
		if live := term.Live(); live != nil {
			obs = func(l run.LiveText) {
				if l.Skipped > 0 { // the relay dropped live text: the terminal says so
					_, _ = io.WriteString(live, livequeue.SkippedText(l.Skipped))
				}
				_, _ = io.WriteString(live, l.Text)
			}
		}
	}
	r := svc.Run(ctx, req, obs)
	printResult(ios, r, text, term, f.preview)
	return exitError{code: resultExit(r)}
}

// flagsInCommand warns of words of an argv command (two or more arguments) that are this command's own flags
// (`run rm -rf build --target ssh://h`): they are words of the command, which runs as it is; a flag goes
// before the command.
func flagsInCommand(c *cobra.Command, args []string) []string {
	if len(args) < 2 {
		return nil
	}
	var warnings []string
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name == "" || c.Flags().Lookup(name) == nil {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s is a word of the command, not a flag of agentbash %s: flags go "+
			"before the command (agentbash %s %s … COMMAND)", a, c.Name(), c.Name(), "--"+name))
	}
	return warnings
}

// fileError is a -f FILE that could not be read.
type fileError struct{ err error }

func (e fileError) Error() string { return e.err.Error() }

// commandText is the command from -f FILE, -f -, or the arguments (reference §3.1): one argument is script text,
// two or more are an argv, each shell-quoted (see [argvText]).
func commandText(ios IO, f runFlags, args []string) (string, error) {
	var command string
	switch {
	case f.file != "" && len(args) > 0:
		return "", errors.New("give the command as arguments or with -f, not both")
	case f.file == "-":
		if f.stdin {
			return "", errors.New("-f - and --stdin both want stdin")
		}
		b, err := io.ReadAll(ios.In)
		if err != nil {
			return "", fmt.Errorf("read command from stdin: %w", err)
		}
		command = string(b)
	case f.file != "":
		b, err := os.ReadFile(f.file)
		if err != nil {
			return "", fileError{fmt.Errorf("read command: %w", err)}
		}
		command = string(b)
	case len(args) == 1:
		command = args[0]
	default:
		var err error
		if command, err = argvText(args); err != nil {
			return "", err
		}
	}
	if normalize.Trim(command) == "" {
		return "", errors.New("no command given (want: agentbash run 'COMMAND')")
	}
	return command, nil
}

// argvText is the script that runs args as an argv, as timeout, env and nice take one: each argument
// quoted for bash (mvdan.cc/sh/v3/syntax.Quote) and joined with single spaces, so `rm 'my file'` removes one
// file and `echo '$HOME'` prints $HOME (reference §3.1). A plain word stays as it is (`ls -la`).
func argvText(args []string) (string, error) {
	words := make([]string, len(args))
	for i, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("argument %d %q: %w", i+1, a, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// formatWithoutConfig is the format asked for by flag or environment, for when the config is broken.
func formatWithoutConfig(c *cobra.Command) string {
	if f := c.Flags().Lookup("format"); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv("AGENTBASH_FORMAT")
}

// lineLimit is a --head/--tail value: a line count ≥ 0, or -1 when not given.
type lineLimit struct{ n int }

func (l *lineLimit) String() string {
	if l.n < 0 {
		return ""
	}
	return strconv.Itoa(l.n)
}

func (l *lineLimit) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a line count ≥ 0, got %q", s)
	}
	l.n = n
	return nil
}

func (l *lineLimit) Type() string { return "N" }

// wordsFlag is a flag whose value is split like shell words when given (--wrapper 'nice -n 10'), so a
// malformed value is a usage error. String quotes the words back, for the config loader to split again.
type wordsFlag struct{ words []string }

func (w *wordsFlag) Set(s string) error {
	words, err := config.SplitWords(s)
	if err != nil {
		return err
	}
	w.words = words
	return nil
}

func (w *wordsFlag) String() string {
	quoted := make([]string, len(w.words))
	for i, word := range w.words {
		quoted[i], _ = syntax.Quote(word, syntax.LangBash) // the words came from a shell parse: no NUL
	}
	return strings.Join(quoted, " ")
}

func (w *wordsFlag) Type() string { return "ARGV" }

func textFormat(format string, ios IO) bool {
	switch format {
	case "text":
		return true
	case "json":
		return false
	}
	return ios.OutIsTerminal
}

// envList turns shell.env into KEY=VALUE entries, sorted by key so runs are reproducible.
func envList(m map[string]string) []string {
	var l []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		l = append(l, k+"="+m[k])
	}
	return l
}

// handleSignals cancels the run when agentbash gets SIGINT, SIGTERM or SIGHUP (the group is then killed
// and the result printed, reference §3.7), and keeps a closed stdout (SIGPIPE) from killing agentbash. stop
// ends that for this cancel.
//
// The handler is set up once per process (for a run, Execute begins that in the background:
// signal.Notify starts a thread, a third of a millisecond here) and relays to the cancels registered at
// the time: signal.Stop would wait for the runtime's signal loop to go idle, a quarter of a millisecond
// at the end of every `run`. A signal that comes while no cancel is registered ends the process as it
// would without a handler.
func handleSignals(cancel context.CancelCauseFunc) (stop func()) {
	relay.once.Do(relay.install)
	relay.mu.Lock()
	defer relay.mu.Unlock()
	if relay.cancels == nil {
		relay.cancels = map[int]context.CancelCauseFunc{}
	}
	relay.next++
	id := relay.next
	relay.cancels[id] = cancel
	return func() {
		relay.mu.Lock()
		delete(relay.cancels, id)
		relay.mu.Unlock()
	}
}

// relay is the process's one signal handler of handleSignals and the cancels it relays to.
var relay signalRelay

type signalRelay struct {
	once    sync.Once
	mu      sync.Mutex
	cancels map[int]context.CancelCauseFunc
	next    int
}

// install starts relaying SIGINT, SIGTERM and SIGHUP to the registered cancels, and keeps SIGPIPE from
// killing the process. Call it through once. A signal agentbash was started with ignored stays ignored
// (`nohup agentbash run …`, a script's background job and SIGINT): Notify would turn it back on.
func (r *signalRelay) install() {
	ch := make(chan os.Signal, 4)
	sigs := []os.Signal{syscall.SIGPIPE}
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	signal.Notify(ch, sigs...)
	go func() {
		for s := range ch {
			sig := s.(syscall.Signal)
			if sig == syscall.SIGPIPE {
				continue
			}
			r.mu.Lock()
			n := len(r.cancels)
			for _, c := range r.cancels {
				c(request.SignalCause{Signal: sig})
			}
			r.mu.Unlock()
			if n == 0 {
				signal.Reset(sig)
				_ = syscall.Kill(os.Getpid(), sig)
			}
		}
	}()
}

// printResult writes r as JSON, as text for a terminal (finishing term's live view, if any), or as the
// model-visible text with the warnings on stderr, one line each (reference §3.10). A closed stdout is said on
// stderr; it never kills agentbash, whichever path printed the result (a -f FILE or a config that could not
// be read prints it before the run's handleSignals): the SIGPIPE handler is in place first.
func printResult(ios IO, r result.Result, text bool, term *terminal.View, preview int) {
	relay.once.Do(relay.install) // Execute began it in the background; mostly done by now
	var err error
	switch {
	case !text:
		err = r.WriteJSON(ios.Out)
	case ios.OutIsTerminal:
		if term == nil {
			term = newTerminal(ios, preview)
		}
		err = term.Finish(r)
	default:
		err = result.WriteText(ios.Out, r, preview)
		_ = result.WriteWarnings(ios.Err, r.Details.Warnings)
	}
	if err != nil {
		fmt.Fprintln(ios.Err, "agentbash: write result:", err)
	}
}

// newTerminal is the text format for ios's terminal: coloured unless NO_COLOR is set, the preview rolling
// in place unless the terminal cannot move its cursor (TERM=dumb).
func newTerminal(ios IO, preview int) *terminal.View {
	return terminal.New(ios.Out, terminal.Options{
		Preview: preview, Roll: os.Getenv("TERM") != "dumb", Color: os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
		Cols: ios.Cols, Rows: ios.Rows,
	})
}
