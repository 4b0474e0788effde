//go:build linux

// Command chain is the floor of agentbash's rpc architecture (docs/benchmarks.md, issue 23: rpc per
// command): the hand-overs of a command's round trip with no work beside them. bench/rpc.py times it beside
// `agentbash rpc` and the client spawning `bash -c true`.
//
//	chain [-spawn exec|start]        the server: reads one JSON request a line on stdin
//	                                 ({"id":N,"command":"…"}), passes it to its supervisor as a start message
//	                                 over a unix socket pair, reads the supervisor's done message and writes a
//	                                 response line ({"id":N,"data":{"details":{"exitCode":C}}}) to stdout
//	chain supervisor [-spawn …]      the supervisor, the server's child (started once, reused): a child
//	                                 subreaper that runs each start message's command as `bash -c COMMAND`
//	                                 and sends a done message with its exit code; on descriptor 3 (a socket)
//	chain supervisor -direct         the supervisor alone, talking to the client on stdin and stdout in the
//	                                 server's protocol: one Go process in the path instead of two
//
// -spawn exec starts the shell with os/exec, as agentbash does; -spawn start with os.StartProcess. -layers
// (server or supervisor) gives the shell the environment layers agentbash gives every command
// (run.NonInteractiveEnv, docs/reference.md §3.7) over the inherited environment: some fifty variables more,
// which bash takes measurably longer to start with (docs/benchmarks.md). The shell
// gets /dev/null as stdin, one pipe as stdout and stderr (drained until EOF) and a process group of its own.
// Both processes run on one Go processor, as agentbash's rpc server and its supervisor's plain runs do.
// Linux only (the subreaper).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/run"
)

// request is a client's line, and also the server's start message to its supervisor.
type request struct {
	ID      int64  `json:"id"`
	Command string `json:"command"`
}

// done is the supervisor's message when a command ended.
type done struct {
	ID       int64 `json:"id"`
	ExitCode int   `json:"exitCode"`
}

// response is the server's line to the client.
type response struct {
	ID   int64 `json:"id"`
	Data struct {
		Details struct {
			ExitCode int `json:"exitCode"`
		} `json:"details"`
	} `json:"data"`
}

func main() {
	runtime.GOMAXPROCS(1)
	role := "server"
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "supervisor" {
		role, args = "supervisor", args[1:]
	}
	fs := flag.NewFlagSet("chain "+role, flag.ExitOnError)
	spawn := fs.String("spawn", "exec", "how the supervisor starts the shell: exec (os/exec) or start (os.StartProcess)")
	direct := fs.Bool("direct", false, "supervisor: serve the client on stdin and stdout, with no server before it")
	layers := fs.Bool("layers", false, "give the shell agentbash's environment layers (run.NonInteractiveEnv)")
	_ = fs.Parse(args)
	if *spawn != "exec" && *spawn != "start" {
		fail(fmt.Errorf("-spawn %q: want exec or start", *spawn))
	}
	shellEnv = os.Environ()
	if *layers {
		shellEnv = run.Environ(shellEnv, run.NonInteractiveEnv)
	}
	var err error
	if role == "server" {
		err = server(*spawn, *layers)
	} else {
		err = supervisor(*spawn, *direct)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "chain:", err)
	os.Exit(2)
}

// server starts the supervisor with one end of a socket pair as its descriptor 3 and relays each request
// to it and its done message back as a response, until stdin ends.
func server(spawn string, layers bool) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "control")
	c, err := net.FileConn(ours) // on the runtime's poller, as agentbash's
	ours.Close()
	if err != nil {
		return err
	}
	defer c.Close()
	sup := exec.Command("/proc/self/exe", "supervisor", "-spawn", spawn)
	if layers {
		sup.Args = append(sup.Args, "-layers")
	}
	sup.ExtraFiles = []*os.File{theirs}
	sup.Stderr = os.Stderr
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		return err
	}
	theirs.Close()
	in := bufio.NewReader(os.Stdin)
	fromSup := bufio.NewReader(c)
	for {
		line, err := in.ReadBytes('\n')
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("request: %w", err)
		}
		if err := writeLine(c, req); err != nil {
			return err
		}
		line, err = fromSup.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("supervisor: %w", err)
		}
		var d done
		if err := json.Unmarshal(line, &d); err != nil {
			return fmt.Errorf("done message: %w", err)
		}
		var resp response
		resp.ID, resp.Data.Details.ExitCode = d.ID, d.ExitCode
		if err := writeLine(os.Stdout, resp); err != nil {
			return err
		}
	}
	c.Close() // the supervisor's input ends: it exits
	return sup.Wait()
}

// supervisor runs each start message's command and answers with its exit code: on descriptor 3 (done
// messages), or with direct on stdin and stdout (responses).
func supervisor(spawn string, direct bool) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("subreaper: %w", err)
	}
	var r io.Reader = os.Stdin
	var w io.Writer = os.Stdout
	if !direct {
		f := os.NewFile(3, "control")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("descriptor 3: %w", err)
		}
		defer c.Close()
		r, w = c, c
	}
	in := bufio.NewReader(r)
	for {
		line, err := in.ReadBytes('\n')
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("start message: %w", err)
		}
		code, err := runShell(spawn, req.Command)
		if err != nil {
			return err
		}
		if direct {
			var resp response
			resp.ID, resp.Data.Details.ExitCode = req.ID, code
			err = writeLine(w, resp)
		} else {
			err = writeLine(w, done{ID: req.ID, ExitCode: code})
		}
		if err != nil {
			return err
		}
	}
}

// runShell runs `bash -c command` with /dev/null as stdin and one pipe as stdout and stderr, read until
// EOF, in a process group of its own, and returns its exit code.
func runShell(spawn, command string) (int, error) {
	r, w, err := os.Pipe() // the read end on the runtime's poller
	if err != nil {
		return 0, err
	}
	defer r.Close()
	wait, err := startShell(spawn, command, w)
	w.Close()
	if err != nil {
		return 0, err
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return 0, err
	}
	st, err := wait()
	if st == nil {
		return 0, err
	}
	return st.ExitCode(), nil // an exit code other than 0 is an error of cmd.Wait's, not ours
}

// startShell starts `bash -c command` with out as its stdout and stderr, by os/exec (spawn "exec") or
// os.StartProcess, and returns what waits for its end.
func startShell(spawn, command string, out *os.File) (func() (*os.ProcessState, error), error) {
	sys := &syscall.SysProcAttr{Setpgid: true}
	if spawn == "exec" {
		cmd := exec.Command(bashPath(), "-c", command) // Stdin nil: os/exec opens /dev/null
		cmd.Env = shellEnv                             // as agentbash gives it (os/exec checks it for duplicates)
		cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = out, out, sys
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return func() (*os.ProcessState, error) { err := cmd.Wait(); return cmd.ProcessState, err }, nil
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	p, err := os.StartProcess(bashPath(), []string{"bash", "-c", command},
		&os.ProcAttr{Env: shellEnv, Files: []*os.File{null, out, out}, Sys: sys})
	if err != nil {
		return nil, err
	}
	return p.Wait, nil
}

// shellEnv is the shell's environment: this process's, with -layers agentbash's layers over it.
var shellEnv []string

var bashFound string

// bashPath is bash's path on $PATH, looked up once.
func bashPath() string {
	if bashFound == "" {
		p, err := exec.LookPath("bash")
		if err != nil {
			fail(err)
		}
		bashFound = p
	}
	return bashFound
}

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
