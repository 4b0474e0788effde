//go:build !linux

package supervisor

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// socketPair returns a connected pair of stream sockets, marked close-on-exec under the fork lock (no
// SOCK_CLOEXEC here), so no child started meanwhile inherits them.
func socketPair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	return fds, err
}

// executable is the path that starts this program again: os.Executable (no /proc here), or the name it
// was started by when that fails.
func executable() string {
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// awaitExit says false at once: without waitid's WNOWAIT the end is only seen by collecting it (a signal
// sent between the collection and its mark could reach a process that reused the pid: a narrow window).
func awaitExit(pid int) bool { return false }
