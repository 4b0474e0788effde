// Package texts holds the texts of a result that are fixed word for word: those the reference fixes (§3.3,
// §3.4, §3.8–3.10, §4) and the few of agentbash's own beside them. They are in one place, a package that
// imports nothing, because the packages that write them import one another the other way (result imports
// run and sink, so a file in result could not serve them); texts_test.go checks each verbatim.
//
// A text with a verb is a fmt format, its arguments named beside it. The truncation notice of §3.9 is not
// here: it is a small grammar of parts (lines or a part of one line, a size limit, a capped or partial
// artifact), built by result.Notice and tested whole there.
package texts

// §3.3: the text of a blocked command.
const Blocked = "Blocked: %s\n\nOriginal command: %s" // the rule's message, the command as given

// §3.4: the working directory, each followed by the absolute path.
const (
	DirNotExist = "Working directory does not exist: "
	DirNotDir   = "Working directory is not a directory: "
	// DirNUL: a working directory with a NUL byte (its byte offset), which no path can hold.
	DirNUL = "Working directory holds a NUL byte (at byte %d), which no path can hold: pass the directory's name without it"
)

// The working directory's other errors (agentbash's own; §3.4 fixes only that a removed start directory
// with a known path gets [DirNotExist]): a directory that cannot be entered (+ path + ": " + reason); a
// removed start directory whose path is unknown; or whose path names a directory again, which is not the
// one agentbash is in ([DirReplaced], the path, then [DirReplacedHint]).
const (
	DirNotAccessible = "Working directory is not accessible: "
	DirRemoved       = DirNotExist + "the directory agentbash was started in was removed, and $PWD is not set"
	DirReplaced      = "Working directory was removed: "
	DirReplacedHint  = " (that path now names another directory; pass --cwd to run there)"
)

// §3.8: what is shown for binary output of N raw bytes; "at least" when the stream was not read to its
// end (§3.2).
const (
	BinaryOutput        = "[binary output: %d bytes]"
	BinaryOutputAtLeast = "[binary output: at least %d bytes]"
)

// §3.9: the first line of a timeout or cancel, the empty output, and the status lines.
const (
	TimedOut      = "[Command timed out after %s seconds]" // the timeout in its shortest form (1.5, 300)
	Cancelled     = "[Command cancelled]"
	NoOutput      = "(no output)"
	Exited        = "Command exited with code %d"
	Killed        = "Command killed by signal %s" // SIGNAME
	MissingStatus = "Command failed: missing exit status"
)

// §3.10: the end of a line the live terminal view clamps (the characters left out), and the start of
// each warning line on stderr.
const (
	CharsOmitted  = "… [%d chars omitted]"
	WarningPrefix = "agentbash: warning: "
)

// §8: background tasks. The start's text (the task id, the shell's pid, the command) and a read with
// nothing new are the reference's; the rest are agentbash's own: a running task's status (as the start's), a
// lossy read's notice (the size skipped, the artifact id), the first line of a killed task's result (the
// signal name, or the lifetime in seconds), and kill's text (id, pid, command; or id and status).
const (
	TaskStarted = "Started task %s (pid %d): %s"
	NoNewOutput = "(no new output)"
	TaskRunning = "Task %s is running (pid %d): %s"
	ReadSkipped = "[Skipped %s since the last read. Full: artifact://%s]"
	// ReadSkippedPartial: the same past the artifact cap, where the artifact holds only the start.
	ReadSkippedPartial = "[Skipped %s since the last read. Partial (capped at artifacts.maxBytes): artifact://%s]"
	TaskKilledBy       = "[Task killed by %s]"
	TaskLifetime       = "[Task killed after tasks.maxLifetime (%s seconds)]"
	TaskKill           = "Killed task %s (pid %d): %s"
	TaskNothingKill    = "Task %s had already ended (%s): nothing to kill"
	// TaskYielded ends the result of run --yield whose command goes on as a task.
	TaskYielded = "[Still running as task %s (pid %d): agentbash output %s to read more]"
	// TasksNothingKill is the text of `tasks kill --all` with no task running.
	TasksNothingKill = "No running tasks: nothing to kill"
	// TaskKillPending: the kill was asked for, but the task had not ended when kill stopped waiting.
	TaskKillPending = "Task %s is still %s: the kill was sent, but it has not ended yet"
	// A task whose shell ended while processes it started ran on still owns them: kill's text when it
	// ended them ("1 process" or "N processes", id, the task's status, command), the warning of a task
	// whose tasks.maxLifetime ended them (seconds, processes), and the status column of `tasks` while they
	// run (status, processes).
	TaskKillLeftovers     = "Killed %s that task %s left running when its shell ended (%s): %s"
	TaskLeftoversLifetime = "tasks.maxLifetime (%s seconds) killed %s that the task left running when its shell ended"
	TaskLeftoversRunning  = "%s (%s running)"
	// TaskLeftoversKept replaces a run's leftover warning in a task's result: the task keeps them (count,
	// pids, task id twice).
	TaskLeftoversKept = "when its shell ended, %d process(es) it started were still running (pids %s): they stay " +
		"the task's until they end, and `agentbash kill %s` ends them"
)

// §9: the MCP server's own texts. A yielded bash call that goes on as a task ends with [MCPTaskYielded] (the
// task id, the shell's pid, the task id again) instead of [TaskYielded], which names the CLI; bash_tasks with
// nothing to list says [MCPNoTasks] (or [MCPNoTasksAll] with all); a bash call with an empty command gets
// [MCPNoCommand], one with both run_in_background and yield_seconds [MCPBackgroundYield].
const (
	MCPTaskYielded     = "[Still running as task %s (pid %d): call bash_output with task_id \"%s\" to read more, bash_kill to stop it]"
	MCPTaskYieldedOn   = "[Still running as task %s (pid %d): call bash_output with task_id \"%s\" and target \"%s\" to read more, bash_kill to stop it]"
	MCPNoTasks         = "No background tasks running or ended in the last 24 hours"
	MCPNoTasksAll      = "No background tasks"
	MCPNoCommand       = "No command given: the command argument is empty"
	MCPBackgroundYield = "run_in_background and yield_seconds do not go together: give one of them"
)

// §4: the warning for an AGENTBASH_* variable that is no key (the variable), and its hint (the closest
// key), also used after an unknown key in the file.
const (
	NoSuchSetting = "%s: no such setting"
	DidYouMean    = "; did you mean %s?"
)

// §14: interactive tasks. A stdin pipe on a foreground run; input to a task that ended (id, status), to one
// without input (id), or whose input cannot be reached (id, why); the line above a screen in the text; the
// end of a yielded interactive task's result (id, pid, id, id) on the CLI and in MCP (id, pid, id).
const (
	StdinPipeNeedsTask = "stdin: a pipe needs a task that input can be written to: `start --stdin-pipe` or " +
		"`run --yield S --stdin-pipe` (rpc: start, or bash with yield; MCP: run_in_background or yield_seconds)"
	InputEnded       = "task %s has ended (%s): it takes no more input"
	InputNone        = "task %s was started without an input (--stdin-pipe or --tty; rpc and MCP: stdin \"pipe\" or tty): it has none to write to"
	InputUnreachable = "task %s is running, but its input cannot be reached: %v"
	ScreenHeader     = "--- screen ---"
	// ScreenCut heads a screen too large for the window: the rows left out above.
	ScreenCut = "[%d rows above left out: the whole screen is in details.screen.text]"
	// TaskEnded ends a read of an interactive task that has ended (id, status and exit code).
	TaskEnded = "[Task %s has ended: %s]"
	// ScreenTimedOut: a foreground --tty run timed out with a prompt or a full-screen program showing.
	ScreenTimedOut = "[It timed out showing a prompt or a full-screen program: a command that waits for input needs " +
		"--yield SECONDS (MCP: yield_seconds), then agentbash input (MCP: bash_input) to answer it]"
	TaskYieldedInput    = "[Still running as task %s (pid %d): agentbash input %s TEXT (or --keys) answers it, agentbash output %s reads more]"
	MCPTaskYieldedInput = "[Still running as task %s (pid %d): call bash_input with task_id \"%s\" to type into it " +
		"(text, keys), bash_output to read more, bash_kill to stop it]"
	// MCPTaskYieldedInputOn is MCPTaskYieldedInput of a task on a target (id, pid, id, target).
	MCPTaskYieldedInputOn = "[Still running as task %s (pid %d): call bash_input with task_id \"%s\" and target \"%s\" " +
		"to type into it (text, keys), bash_output to read more, bash_kill to stop it]"
)

// §13: the sandbox's network proxy. What it refused (host:port), one line each up to SandboxBlockedShown,
// then how many more hosts (count), or past the hosts the proxy lists, how many more refusals of hosts it
// did not list (hosts, refusals); the warning of network proxy with an empty allow-list.
const (
	SandboxBlocked       = "[Sandbox: blocked network access to %s]"
	SandboxBlockedMore   = "[Sandbox: blocked network access to %d more hosts (details.sandbox.denied)]"
	SandboxBlockedOthers = "[Sandbox: blocked network access to %d more hosts, and %d more times to hosts not listed (details.sandbox.denied)]"
	SandboxBlockedShown  = 5
	// SandboxBlockedHow follows them: what would let a host through.
	SandboxBlockedHow = "[Sandbox: only sandbox.allowHosts are reached, through the proxy; the user who starts agentbash " +
		"adds a host with --sandbox-allow-host HOST:PORT (or in the config)]"
	SandboxNoHosts = "sandbox.network is proxy with an empty sandbox.allowHosts: no host is reachable " +
		"(the user who starts agentbash adds them: --sandbox-allow-host HOST:PORT)"
	// SandboxProxyEnv: the request's environment set proxy variables (their names, "A and B") that network
	// proxy replaces.
	SandboxProxyEnv = "the sandbox's network proxy replaces %s of the request's environment: the command gets " +
		"HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing at the proxy and no NO_PROXY; to reach a server the command " +
		"starts itself on its own loopback, set NO_PROXY inside the command (NO_PROXY=127.0.0.1,localhost CMD, " +
		"or export it) or use curl --noproxy '*'"
)
