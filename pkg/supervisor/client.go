package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// ErrDied is returned (wrapped) when a supervisor ended without reporting how its run ended.
var ErrDied = errors.New("supervisor exited without a result")

// Process is a started supervisor, waiting for its run (see [Spawn]) or running it.
type Process struct {
	cmd     *exec.Cmd
	conn    *net.UnixConn
	used    bool
	waited  bool
	waitErr error
}

// Result is what a supervisor reports at the end of a run.
type Result struct {
	Outcome run.Outcome
	Summary sink.Summary
}

// Spawn starts a supervisor process: argv[0] is executed with argv[1:] (nil: this executable as
// `agentbash __supervise`). It has its own session (no terminal signals reach it), /dev/null for its
// standard streams, and the other end of a socket pair as descriptor 3. It waits for [Process.Run]; if
// the caller drops it instead, [Process.Close] ends it.
func Spawn(argv []string) (*Process, error) {
	if len(argv) == 0 {
		argv = []string{"/proc/self/exe", Command}
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervisor: socket pair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "supervisor"), os.NewFile(uintptr(fds[1]), "control")
	defer theirs.Close()
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Args[0] = os.Args[0] // the name this binary answers to (tests dispatch on it)
	if argv[0] != "/proc/self/exe" {
		cmd.Args[0] = argv[0]
	}
	cmd.ExtraFiles = []*os.File{theirs} // descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		c.Close()
		return nil, fmt.Errorf("supervisor: start: %w", err)
	}
	return &Process{cmd: cmd, conn: c.(*net.UnixConn)}, nil
}

// Pid is the supervisor's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Run hands spec to the supervisor and waits for the end of the run. stdin, when spec.Stdin is set, is
// the command's standard input (the descriptor is passed over, not copied). live, when spec.Live is set,
// receives the sanitized output as it arrives, from one goroutine. When ctx is cancelled the supervisor
// kills the tree as a cancel and still reports the outcome. The error is non-nil only when the command
// could not run at all (it wraps run.ErrShellNotFound for a missing shell) or the supervisor died
// ([ErrDied]). A Process runs one command; it is closed when Run returns.
func (p *Process) Run(ctx context.Context, spec Spec, stdin *os.File, live func(text string)) (Result, error) {
	if p.used {
		return Result{}, errors.New("supervisor: a supervisor runs one command")
	}
	p.used = true
	defer p.Close()
	var rights []byte
	if spec.Stdin {
		if stdin == nil {
			return Result{}, errors.New("supervisor: spec.Stdin without a stdin file")
		}
		rights = unix.UnixRights(int(stdin.Fd()))
	}
	if _, _, err := p.conn.WriteMsgUnix([]byte{0}, rights, nil); err != nil {
		return Result{}, p.died(fmt.Errorf("send descriptors: %w", err))
	}
	var mu sync.Mutex // the encoder is shared by the start and a cancel
	enc := json.NewEncoder(p.conn)
	mu.Lock()
	err := enc.Encode(Request{Op: OpStart, Spec: &spec})
	mu.Unlock()
	if err != nil {
		return Result{}, p.died(fmt.Errorf("send start request: %w", err))
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(Request{Op: OpCancel})
	})
	defer stop()

	dec := json.NewDecoder(p.conn)
	for {
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			return Result{}, p.died(err)
		}
		switch ev.Op {
		case OpOutput:
			if live != nil {
				live(ev.Text)
			}
		case OpDone:
			if ev.Error != "" {
				err := errors.New(ev.Error)
				if ev.NotFound {
					err = fmt.Errorf("%w: %s", run.ErrShellNotFound, ev.Error)
				}
				return Result{}, err
			}
			if ev.Outcome == nil || ev.Summary == nil {
				return Result{}, p.died(errors.New("done without an outcome"))
			}
			return Result{Outcome: *ev.Outcome, Summary: *ev.Summary}, nil
		}
	}
}

// died describes a supervisor that stopped talking: how it exited, if it did.
func (p *Process) died(cause error) error {
	p.conn.Close()
	if err := p.wait(); err != nil {
		return fmt.Errorf("%w (%v; %v)", ErrDied, err, cause)
	}
	return fmt.Errorf("%w (%v)", ErrDied, cause)
}

func (p *Process) wait() error {
	if !p.waited {
		p.waited, p.waitErr = true, p.cmd.Wait()
	}
	return p.waitErr
}

// Close ends the supervisor: one that has not started a command exits at once (EOF before a start
// request); one that runs a command kills its tree (SPEC §11). It waits for the process.
func (p *Process) Close() error {
	p.conn.Close()
	err := p.wait()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		return nil // its status says nothing the caller can act on
	}
	return err
}
