package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/memlimit"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

func newStartCmd(ios IO) *cobra.Command {
	f := runFlags{background: true}
	c := newRunLikeCmd(ios, &f)
	c.Flags().String("task-dir", "", "task `DIR` (default $XDG_STATE_HOME/agentbash/tasks)")
	c.Use = "start [flags] [--] COMMAND..."
	c.Short = "Start a command as a background task and return at once"
	c.Long = `Start a command as a background task: it runs on after agentbash returns (a dev server, a watcher, a long
build), with its stdin /dev/null and its output only in its artifact, until it ends, is killed, or reaches
tasks.maxLifetime (default a day). The result says status running, the task id, the shell's pid and the
artifact's path; read what it prints with agentbash output ID, stop it with agentbash kill ID, and get its
final result with agentbash wait ID. It takes the flags of run; it has no timeout unless --timeout is given.`
	c.Example = `  agentbash start 'npm run dev'
  agentbash output 7 --wait 10
  agentbash kill 7`
	return c
}

// runTask starts the command as a task (start, run --background) or runs it with a yield (run --yield).
func runTask(ctx context.Context, c *cobra.Command, ios IO, svc *service.Service, req request.Command, f runFlags, text bool) error {
	if f.stdin {
		return usageError{err: errors.New("a background task's stdin is /dev/null: --stdin does not go with it"), cmd: c.CommandPath()}
	}
	if c.Flags().Changed("timeout") {
		req.Timeout = new(svc.Timeout()) // a task has no timeout unless one is given (reference §8)
	}
	var r result.Result
	if f.yield > 0 {
		r = svc.Yield(ctx, req, f.yield)
	} else {
		r = svc.Start(ctx, req)
	}
	printTask(ios, r, text)
	return exitError{code: resultExit(r)} // a task started or yielded: 0
}

// printTask writes a task command's result: JSON, or its text with the warnings on stderr. On a terminal
// too the text is plain: a run's footer (exit, duration, timeout) does not fit a task still running. A
// closed stdout is said on stderr and never kills agentbash (as printResult); the error is returned.
func printTask(ios IO, r result.Result, text bool) error {
	relay.once.Do(relay.install)
	var err error
	if text {
		if err = result.WriteText(ios.Out, r, 0); err == nil {
			err = result.WriteWarnings(ios.Err, r.Details.Warnings)
		}
	} else {
		err = r.WriteJSON(ios.Out)
	}
	if err != nil {
		fmt.Fprintln(ios.Err, "agentbash: write result:", err)
	}
	return err
}

// taskFlags are the flags every task command takes: --format, --task-dir.
func taskFlags(c *cobra.Command) {
	c.Flags().String("format", "auto", "result `FORMAT`: json, text or auto (text on a terminal)")
	c.Flags().String("task-dir", "", "task `DIR` (default $XDG_STATE_HOME/agentbash/tasks)")
	addTargetFlag(c.Flags())
}

// taskEnv loads the config of a task command: the service over the place it names, whether to print text.
func taskEnv(c *cobra.Command, ios IO) (*service.Service, bool, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, false, err
	}
	svc, err := newService(cfg, nil, nil, nil, nil)
	if err != nil {
		return nil, false, targetError(err)
	}
	return svc, textFormat(cfg.Format, ios), nil
}

// taskID checks a task id argument: a canonical decimal number (exit 1 otherwise, reference §8).
func taskID(arg string) (string, error) {
	if err := tasks.CheckID(arg); err != nil {
		return "", err
	}
	return arg, nil
}

// dashedID makes an argument of owner that reads as a negative number (`wait -1`, `kill -07`) the ID it was
// meant as, answered by malformed as a malformed id, instead of the usage error "unknown shorthand flag":
// no command that takes an ID has a digit flag. Other flag errors, and those of its subcommands, stay usage
// errors.
func dashedID(owner *cobra.Command, malformed func(c *cobra.Command, arg string) error) {
	if owner.Annotations == nil {
		owner.Annotations = map[string]string{}
	}
	owner.Annotations[dashedIDKey] = "yes" // execute moves such an ID after `--` (dashedIDArgs)
	owner.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if ne, ok := errors.AsType[*pflag.NotExistError](err); ok && c == owner { // not its subcommands'
			if s := ne.GetSpecifiedShortnames(); s != "" && s[0] >= '0' && s[0] <= '9' {
				return malformed(c, "-"+s)
			}
		}
		return usageError{err: flagError(err), cmd: c.CommandPath()}
	})
}

// dashedIDKey marks a command whose ID argument may read as a negative number (dashedID).
const dashedIDKey = "agentbash/dashed-id"

// dashedIDArgs moves the arguments that read as negative numbers (`-1`, `-07`) of a command marked by
// dashedID after a `--`, so the flags around them are still parsed (`wait -1 --format text` answers in
// text, `wait -1 --bogus` is a usage error) and the ID reaches the command, which calls it malformed. A
// flag's value (`wait 3 --timeout -1`) stays where it is.
func dashedIDArgs(root *cobra.Command, args []string) []string {
	c, rest, err := root.Find(args)
	if err != nil || c.Annotations[dashedIDKey] == "" {
		return args
	}
	takesValue := func(name string, short bool) bool {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags()} {
			f := fs.Lookup(name)
			if short {
				f = fs.ShorthandLookup(name)
			}
			if f != nil {
				return f.NoOptDefVal == ""
			}
		}
		return false
	}
	var out, moved []string
	dashes := -1
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			dashes = len(out)
			out = append(out, rest[i:]...)
			i = len(rest)
			continue
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			moved = append(moved, a)
			continue
		}
		out = append(out, a)
		value := false
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") {
			value = takesValue(name, false)
		} else if len(a) == 2 && a[0] == '-' {
			value = takesValue(a[1:], true)
		}
		if value && i+1 < len(rest) {
			out = append(out, rest[i+1])
			i++
		}
	}
	if len(moved) == 0 {
		return args
	}
	if dashes < 0 {
		dashes = len(out)
		out = append(out, "--")
	}
	out = slices.Concat(out[:dashes+1], moved, out[dashes+1:])
	return append(strings.Fields(c.CommandPath())[1:], out...)
}

// malformedTask answers a task command whose ID argument is malformed: an error result, exit 1.
func malformedTask(ios IO) func(*cobra.Command, string) error {
	return func(c *cobra.Command, arg string) error { return taskError(c, ios, arg, tasks.CheckID(arg)) }
}

// taskError is the exit of a task command whose task could not be read (unknown or malformed id): it
// prints an error result (JSON or text per --format) and exits 1.
func taskError(c *cobra.Command, ios IO, id string, err error) error {
	text := false
	if cfg, cerr := loadConfig(c); cerr == nil {
		text = textFormat(cfg.Format, ios)
	}
	printTask(ios, tasks.ErrorResult(id, err), text)
	if errors.Is(err, executor.ErrUnreachable) {
		return exitError{code: exitCannotRun, err: err} // the target, not the id: as a run that could not start
	}
	return exitError{code: 1, err: err}
}

func newOutputCmd(ios IO) *cobra.Command {
	var wait float64
	var reader string
	c := &cobra.Command{
		Use:   "output ID",
		Short: "Print what a background task printed since the previous read",
		Long: `Print what task ID printed since the previous read by the same reader (--reader, default "default"),
sanitized like a run's output: consecutive reads never repeat and never skip silently. When more than
maxBytes arrived since the last read, the newest part is shown and the result says how much was skipped
(details.lossy, details.skippedBytes) and names the artifact that holds everything. --wait SECONDS blocks
until new output arrives, the task ends, or SECONDS pass. Once the task ended the result has the fields of
a run result and its status line.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := taskID(args[0])
			if err != nil {
				return taskError(c, ios, args[0], err)
			}
			if !tasks.ValidReader(reader) {
				return usageError{err: fmt.Errorf("--reader %q: %w", reader, tasks.ErrBadReader), cmd: c.CommandPath()}
			}
			if wait < 0 || wait != wait {
				return usageError{err: errors.New("--wait takes a number of seconds ≥ 0"), cmd: c.CommandPath()}
			}
			svc, text, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			// The reader moves past the text only once its result was written: one that could not be
			// (a closed stdout) is given again by the next read, and this one exits 1.
			var printErr error
			defer leanWhileWaiting()()
			_, err = svc.Output(c.Context(), id, reader, wait, func(r result.Result) error {
				printErr = printTask(ios, r, text)
				return printErr
			})
			if printErr != nil {
				return exitError{code: 1}
			}
			if err != nil {
				return taskError(c, ios, id, err)
			}
			return nil // output exits 0 whatever the task did (reference §8)
		},
	}
	c.Flags().Float64Var(&wait, "wait", 0, "block up to `SECONDS` for new output or the task's end")
	c.Flags().StringVar(&reader, "reader", tasks.DefaultReader, "reader `NAME`: each reader has its own position")
	c.Flags().Int("max-bytes", config.DefaultMaxBytes, "show at most `BYTES` of what arrived (the newest part)")
	taskFlags(c)
	dashedID(c, malformedTask(ios))
	return c
}

// leanAfter is how long a `wait` or an `output --wait` blocks before it makes itself lean (pkg/memlimit):
// one that lasts as long as its task is a long-lived process, whose polling garbage (up to 4 MiB at the
// default pacing) and start-up pages (9 MiB of the binary) would make it the largest of the task's
// processes. A short one pays nothing.
const leanAfter = time.Second

// lean is memlimit.Lean (a test replaces it).
var lean = memlimit.Lean

// leanWhileWaiting makes the process lean once it waited leanAfter; stop ends the wait for it.
func leanWhileWaiting() (stop func()) {
	t := time.AfterFunc(leanAfter, func() { lean() })
	return func() { t.Stop() }
}

func newWaitCmd(ios IO) *cobra.Command {
	var timeout float64
	c := &cobra.Command{
		Use:   "wait ID",
		Short: "Wait for a background task to end and print its final result",
		Long: `Block until task ID ends, then print its final result: the same result a run of it would have printed,
with its task id, and exit as run would (a killed task 128+N of the signal that ended it). With --timeout
SECONDS, after SECONDS print the task's running status and exit 124.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := taskID(args[0])
			if err != nil {
				return taskError(c, ios, args[0], err)
			}
			if timeout < 0 || timeout != timeout {
				return usageError{err: errors.New("--timeout takes a number of seconds ≥ 0 (0: no limit)"), cmd: c.CommandPath()}
			}
			svc, text, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			stopLean := leanWhileWaiting()
			r, err := svc.Wait(c.Context(), id, timeout)
			stopLean()
			if err != nil {
				return taskError(c, ios, id, err)
			}
			code := resultExit(r) // as a run of it would exit
			if r.Details.Status == result.StatusRunning {
				code = exitTimedOut // wait's own --timeout
			}
			printTask(ios, r, text)
			return exitError{code: code}
		},
	}
	c.Flags().Float64Var(&timeout, "timeout", 0, "give up after `SECONDS` (exit 124); 0 waits to the end")
	taskFlags(c)
	dashedID(c, malformedTask(ios))
	return c
}

func newKillCmd(ios IO) *cobra.Command {
	var sig string
	c := &cobra.Command{
		Use:   "kill ID",
		Short: "Kill a background task: its group and every descendant",
		Long: `Kill task ID as a timeout does: its process group and every descendant get SIGTERM (or --signal), then
SIGKILL after killGrace; kill returns once nothing of it is left. A task whose shell ended while processes
it started ran on still owns them: kill ends them and says how many (details.leftoverKilled).
details.killed is false when the task had already ended and nothing of it ran. Exit 0 either way; 1 for an unknown or malformed id.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := taskID(args[0])
			if err != nil {
				return taskError(c, ios, args[0], err)
			}
			s, err := parseSignal(sig)
			if err != nil {
				return usageError{err: fmt.Errorf("--signal: %w", err), cmd: c.CommandPath()}
			}
			svc, text, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			r, err := svc.Kill(c.Context(), id, s)
			if err != nil {
				return taskError(c, ios, id, err)
			}
			printTask(ios, r, text)
			return nil
		},
	}
	c.Flags().StringVar(&sig, "signal", "TERM", "the first `SIGNAL` the tree gets (TERM, INT, HUP, KILL, …)")
	taskFlags(c)
	dashedID(c, malformedTask(ios))
	return c
}

// killLimit is how long kill waits for the supervisor to record the end: the grace and the sweeps.
func killLimit(cfg config.Config) time.Duration {
	return run.Seconds(cfg.KillGrace + 10)
}

// parseSignal parses TERM, SIGTERM or 15 (tasks.ParseSignal).
func parseSignal(s string) (syscall.Signal, error) { return tasks.ParseSignal(s) }

func newTasksCmd(ios IO) *cobra.Command {
	var all, asJSON bool
	c := &cobra.Command{
		Use:   "tasks",
		Short: "List background tasks: running ones and those that ended in the last 24 hours",
		Long: `List background tasks: those running and those that ended in the last 24 hours (--all: every task kept),
as a table (id, status, pid, age, command), or with --json as an array of
{taskId, status, pid, command, cwd, startedAt, endedAt, exitCode, leftoverCount}. leftoverCount is how many
processes a task's shell left running when it ended (the task still owns them: kill ends them); the
table shows them after the status.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, _, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			rows, err := svc.Tasks(c.Context(), all)
			if err != nil {
				return exitError{code: 1, err: err}
			}
			now := time.Now()
			if asJSON {
				b, err := json.Marshal(rows)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(ios.Out, "%s\n", b)
				return err
			}
			return tasks.Table(ios.Out, rows, now)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "list every task kept, not only recent ones")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	taskFlags(c)
	c.AddCommand(newTasksPruneCmd(ios), newTasksKillCmd(ios))
	return c
}

func newTasksPruneCmd(ios IO) *cobra.Command {
	c := newPruneCmd(ios, pruneCmd{
		short:   "Remove the records of tasks that ended more than DURATION ago (e.g. 7d, 12h)",
		example: "  agentbash tasks prune --older-than 7d",
		flag:    "remove tasks that ended more than `DURATION` ago (7d, 12h, 30m)",
		what:    "task(s)",
		prune: func(c *cobra.Command, age time.Duration) ([]string, error) {
			svc, _, err := taskEnv(c, ios)
			if err != nil {
				return nil, err
			}
			return svc.PruneTasks(c.Context(), age)
		},
	})
	taskFlags(c)
	return c
}

func newTasksKillCmd(ios IO) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "kill --all",
		Short: "Kill every running background task",
		Long: `Kill every running background task, all at once, as agentbash kill does one: each gets SIGTERM,
then SIGKILL after its grace; so do the processes an ended task's shell left running. Prints a JSON array of the kill results ([] when nothing ran), or their
texts.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if !all {
				return usageError{err: errors.New("tasks kill needs --all (agentbash kill ID kills one)"), cmd: c.CommandPath()}
			}
			svc, text, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			rows, err := svc.Tasks(c.Context(), true)
			if err != nil {
				return exitError{code: 1, err: err}
			}
			// All at once: each kill waits out its own grace, in parallel.
			var running []tasks.Row
			for _, row := range rows {
				if row.Status == tasks.StatusRunning || row.LeftoverCount > 0 {
					running = append(running, row)
				}
			}
			results := make([]*result.Result, len(running))
			var wg sync.WaitGroup
			for i, row := range running {
				wg.Go(func() {
					r, _ := svc.Kill(c.Context(), row.TaskID, syscall.SIGTERM)
					results[i] = &r
				})
			}
			wg.Wait()
			if text {
				if len(results) == 0 {
					fmt.Fprintln(ios.Out, texts.TasksNothingKill)
				}
				for _, r := range results {
					printTask(ios, *r, true)
				}
				return nil
			}
			// One JSON array of the kill results, [] when nothing ran.
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if results == nil {
				results = []*result.Result{}
			}
			if err := enc.Encode(results); err != nil {
				return err
			}
			_, err = fmt.Fprint(ios.Out, buf.String())
			return err
		},
	}
	c.Flags().BoolVar(&all, "all", false, "kill every running task")
	taskFlags(c)
	return c
}
