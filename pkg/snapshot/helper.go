package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// Command is the hidden subcommand that turns agentbash into the snapshot's helper (argv[1]): the
// process that makes one snapshot and owns everything the rc file starts while it does (see [Main]).
const Command = "__snapshot"

// treeGrace is the time the rc's processes get between SIGTERM and SIGKILL once the snapshot is taken
// (ssh-agent, say, removes its socket on SIGTERM).
const treeGrace = 100 * time.Millisecond

// Main is the snapshot's helper: `agentbash __snapshot SHELL TIMEOUT`, with the dump's output on
// descriptor 1, its trace on descriptor 3 and the generating shell's environment as its own. It becomes
// the child subreaper of what it starts, runs the dump in SHELL (own session, no input, parent-death
// SIGKILL), and once the shell exits, TIMEOUT (a Go duration) passes or it gets SIGTERM, SIGINT or SIGHUP
// (its own parent-death signal: the agentbash that asked for the snapshot is gone), it kills the shell's
// whole tree — background jobs, setsid escapees and double forks included — and only then writes one
// status line on stderr: `exit N`, `signal NAME`, `timeout` or `cancelled`. It returns the process's
// exit status: 0 when the status line was written, 2 on bad arguments or when the shell could not start.
//
// A helper process, not agentbash itself, is the subreaper, so that "every descendant of this process"
// is exactly the rc's tree, however many runs or supervisors the agentbash asking for it has.
func Main(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": want SHELL TIMEOUT (internal command)")
		return 2
	}
	timeout, err := time.ParseDuration(args[1])
	if err != nil || timeout <= 0 {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+": bad timeout "+strconv.Quote(args[1]))
		return 2
	}
	run.BecomeSubreaper()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// The shell's parent-death signal fires when the thread that forked it ends: this one, locked for
	// good, lives as long as the process.
	runtime.LockOSThread()
	cmd := exec.Command(args[0], "--norc", "--noprofile", "-i", "-c", dumpScript)
	cmd.Stdout = os.Stdout // stdin and stderr are /dev/null
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "trace")}
	cmd.SysProcAttr = shellAttr()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "agentbash: "+Command+":", err)
		return 2
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	status := ""
	select {
	case <-exited:
		exited = nil
		status = exitStatus(cmd.ProcessState)
	case <-timer.C:
		status = "timeout"
	case <-stop:
		status = "cancelled"
	}
	run.KillTree(cmd.Process.Pid, treeGrace)
	if exited != nil {
		<-exited
	}
	fmt.Fprintln(os.Stderr, status)
	return 0
}

// exitStatus is how the shell ended, as the helper reports it.
func exitStatus(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(st.ExitCode())
}

// helperArgv is the argv that starts the helper: o.Helper, or this executable as `agentbash __snapshot`
// (under the name it was started with, which a test binary dispatches on), then the shell and timeout.
func helperArgv(o Options) (path string, argv []string, err error) {
	if len(o.Helper) > 0 {
		return o.Helper[0], append(append([]string(nil), o.Helper...), o.Shell, o.Timeout.String()), nil
	}
	self, err := selfExecutable()
	if err != nil {
		return "", nil, fmt.Errorf("find the agentbash executable: %w", err)
	}
	return self, []string{os.Args[0], Command, o.Shell, o.Timeout.String()}, nil
}

// errIncomplete is a dump that stopped before its end marker while the shell exited with status 0.
var errIncomplete = errors.New("the shell ended before the snapshot was taken " +
	"(an `exit` or `exec` in the rc file, or builtins it made unusable)")

// generate makes the snapshot through the helper (see [Main]) and builds the script from its dump. It
// returns the files the rc read (sourced, directly or not), also when the dump failed, so that a
// failure is retried when any of them changes.
func generate(ctx context.Context, o Options) (script, defs []byte, sources []string, err error) {
	path, argv, err := helperArgv(o)
	if err != nil {
		return nil, nil, nil, err
	}
	var env []string
	for _, kv := range o.Env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "BASH_ENV", "ENV", "PS4", "BASH_XTRACEFD", "AGENTBASH_RC":
			continue
		}
		env = append(env, kv)
	}
	inherited := inheritedPath(o.Env)
	traceR, traceW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("trace pipe: %w", err)
	}
	defer traceR.Close()
	traced := make(chan trace, 1)
	go func() { traced <- readTrace(traceR) }()

	var out, status bytes.Buffer
	// The helper keeps its own time; this is the backstop for a helper that does not: SIGTERM makes it
	// kill the tree and report, and WaitDelay later it is killed.
	backstop, cancel := context.WithTimeout(ctx, o.Timeout+2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(backstop, path)
	cmd.Args, cmd.Env = argv, append(env, "AGENTBASH_RC="+o.RCFile)
	cmd.Stdout, cmd.Stderr = &out, &status // stdin is /dev/null
	cmd.ExtraFiles = []*os.File{traceW}
	cmd.SysProcAttr = helperAttr()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Second
	// The helper's parent-death signal (SIGTERM: it then kills the rc's tree) fires when the thread that
	// forked it ends: lock one for the helper's lifetime, as pkg/run does for the command's shell.
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			done <- err
			return
		}
		done <- cmd.Wait()
	}()
	runErr := <-done
	traceW.Close()
	// The helper killed every process that held the trace's write end; the deadline only guards a
	// helper that died before it could.
	_ = traceR.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	t := <-traced

	line := strings.TrimSpace(status.String())
	switch {
	case line == "timeout":
		return nil, nil, t.files(inherited), fmt.Errorf("timed out after %s", o.Timeout)
	case ctx.Err() != nil:
		return nil, nil, t.files(inherited), fmt.Errorf("cancelled") // Ensure caches nothing then
	case line == "cancelled" || backstop.Err() != nil:
		return nil, nil, t.files(inherited), fmt.Errorf("timed out after %s (the helper did not stop in time)", o.Timeout)
	case runErr != nil || strings.Contains(line, "\n") || !strings.HasPrefix(line, "exit ") && !strings.HasPrefix(line, "signal "):
		if len(line) > 200 {
			line = line[:200] + "…"
		}
		return nil, nil, t.files(inherited), fmt.Errorf("snapshot helper failed (%v): %s", runErr, line)
	case strings.HasPrefix(line, "signal "):
		return nil, nil, t.files(inherited), fmt.Errorf("the shell was killed by %s", strings.TrimPrefix(line, "signal "))
	case line != "exit 0":
		return nil, nil, t.files(inherited), fmt.Errorf("the shell exited with status %s", strings.TrimPrefix(line, "exit "))
	}
	d, err := parseDump(out.Bytes())
	if err != nil {
		return nil, nil, t.files(inherited), err
	}
	script, defs = d.script(o.RCFile, inherited)
	return script, defs, t.files(d.path), nil
}
