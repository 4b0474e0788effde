package texts

import (
	"fmt"
	"testing"
)

// Every fixed text, verbatim, as the reference writes it (with its arguments filled in where it has verbs).
func TestTextsVerbatim(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmt.Sprintf(Blocked, "Use the read tool.", "cat x"), "Blocked: Use the read tool.\n\nOriginal command: cat x"},
		{DirNotExist + "/x", "Working directory does not exist: /x"},
		{DirNotDir + "/x", "Working directory is not a directory: /x"},
		{DirNotAccessible + "/x: permission denied", "Working directory is not accessible: /x: permission denied"},
		{DirRemoved, "Working directory does not exist: the directory agentbash was started in was removed, and $PWD is not set"},
		{DirReplaced + "/x" + DirReplacedHint, "Working directory was removed: /x (that path now names another directory; pass --cwd to run there)"},
		{fmt.Sprintf(BinaryOutput, 20000), "[binary output: 20000 bytes]"},
		{fmt.Sprintf(BinaryOutputAtLeast, 8421376), "[binary output: at least 8421376 bytes]"},
		{fmt.Sprintf(TimedOut, "1.5"), "[Command timed out after 1.5 seconds]"},
		{Cancelled, "[Command cancelled]"},
		{NoOutput, "(no output)"},
		{fmt.Sprintf(Exited, 3), "Command exited with code 3"},
		{fmt.Sprintf(Killed, "SIGSEGV"), "Command killed by signal SIGSEGV"},
		{MissingStatus, "Command failed: missing exit status"},
		{fmt.Sprintf(CharsOmitted, 12), "… [12 chars omitted]"},
		{WarningPrefix + "x", "agentbash: warning: x"},
		{fmt.Sprintf(TaskStarted, "7", 4242, "npm run dev"), "Started task 7 (pid 4242): npm run dev"},
		{NoNewOutput, "(no new output)"},
		{fmt.Sprintf(SandboxProxyEnv, "NO_PROXY and https_proxy"), "the sandbox's network proxy replaces NO_PROXY and " +
			"https_proxy of the request's environment: the command gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY pointing " +
			"at the proxy and no NO_PROXY; to reach a server the command starts itself on its own loopback, set " +
			"NO_PROXY inside the command (NO_PROXY=127.0.0.1,localhost CMD, or export it) or use curl --noproxy '*'"},
		{fmt.Sprintf(TaskRunning, "7", 4242, "npm run dev"), "Task 7 is running (pid 4242): npm run dev"},
		{fmt.Sprintf(ReadSkipped, "2.0MB", "17"), "[Skipped 2.0MB since the last read. Full: artifact://17]"},
		{fmt.Sprintf(ReadSkippedPartial, "2.0MB", "17"), "[Skipped 2.0MB since the last read. Partial (capped at artifacts.maxBytes): artifact://17]"},
		{fmt.Sprintf(TaskKillPending, "7", "running"), "Task 7 is still running: the kill was sent, but it has not ended yet"},
		{fmt.Sprintf(TaskYielded, "7", 4242, "7"), "[Still running as task 7 (pid 4242): agentbash output 7 to read more]"},
		{TasksNothingKill, "No running tasks: nothing to kill"},
		{fmt.Sprintf(TaskKilledBy, "SIGTERM"), "[Task killed by SIGTERM]"},
		{fmt.Sprintf(TaskLifetime, "86400"), "[Task killed after tasks.maxLifetime (86400 seconds)]"},
		{fmt.Sprintf(TaskKill, "7", 4242, "npm run dev"), "Killed task 7 (pid 4242): npm run dev"},
		{fmt.Sprintf(TaskNothingKill, "7", "exited"), "Task 7 had already ended (exited): nothing to kill"},
		{fmt.Sprintf(TaskKillLeftovers, "1 process", "7", "signaled", "npm run dev"),
			"Killed 1 process that task 7 left running when its shell ended (signaled): npm run dev"},
		{fmt.Sprintf(TaskLeftoversLifetime, "86400", "2 processes"),
			"tasks.maxLifetime (86400 seconds) killed 2 processes that the task left running when its shell ended"},
		{fmt.Sprintf(TaskLeftoversRunning, "exited", "3 processes"), "exited (3 processes running)"},
		{fmt.Sprintf(MCPTaskYielded, "7", 4242, "7"), `[Still running as task 7 (pid 4242): call bash_output with task_id "7" to read more, bash_kill to stop it]`},
		{MCPNoTasks, "No background tasks running or ended in the last 24 hours"},
		{MCPNoTasksAll, "No background tasks"},
		{MCPNoCommand, "No command given: the command argument is empty"},
		{MCPBackgroundYield, "run_in_background and yield_seconds do not go together: give one of them"},
		{fmt.Sprintf(MCPTaskYieldedInputOn, "7", 4242, "7", "ssh://b"), `[Still running as task 7 (pid 4242): call bash_input with task_id "7" and target "ssh://b" to type into it (text, keys), bash_output to read more, bash_kill to stop it]`},
		{fmt.Sprintf(NoSuchSetting, "AGENTBASH_TIMOUT") + fmt.Sprintf(DidYouMean, "AGENTBASH_TIMEOUT"),
			"AGENTBASH_TIMOUT: no such setting; did you mean AGENTBASH_TIMEOUT?"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
