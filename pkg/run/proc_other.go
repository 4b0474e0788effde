//go:build !linux

package run

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr starts the shell in a new session, which is also a new process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// markInheritedCloseOnExec marks every descriptor from 3 up close-on-exec, one by one from /dev/fd.
func markInheritedCloseOnExec() { markEachCloseOnExec("/dev/fd") }

// memFile is Linux-only (memfd_create); elsewhere a long command goes through a pipe.
func memFile(name, data string) (*os.File, error) { return nil, errors.ErrUnsupported }

// becomeSubreaper is Linux-only; elsewhere the process group is what gets killed.
func becomeSubreaper() {}

// descendants is Linux-only; elsewhere only the process group is signalled.
func descendants() (live, zombies []int) { return nil, nil }

func reap(pids []int, shell int) {}
func reserveThreads()            {}
func hasChildren() bool          { return false }

// Childless cannot tell here (no waitid with WNOWAIT for every child, no subreaper): it says false.
func Childless() bool { return false }

// outputPipe is the pipe of a command's output: os.Pipe, which keeps its size (F_SETPIPE_SZ is Linux's).
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }

// pipeHasData cannot tell here: it says false.
func pipeHasData(f *os.File) bool { return false }

// watchExit reaps cmd's process once it ended and sends its status on the channel returned.
func watchExit(cmd *exec.Cmd) <-chan *os.ProcessState {
	exited := make(chan *os.ProcessState, 1)
	go func() {
		_ = cmd.Wait()
		exited <- cmd.ProcessState
	}()
	return exited
}

// ended cannot tell here: it says false.
func ended(pid int) bool { return false }

// onMainThread cannot tell here: it says false.
func onMainThread() bool { return false }

// Inherited is what the commands a process starts inherit from it that another process can change
// from outside; Linux-only (see proc_linux.go), here it holds nothing.
type Inherited struct{}

// ReadInherited reads nothing here.
func ReadInherited() Inherited { return Inherited{} }
