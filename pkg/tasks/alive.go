package tasks

import (
	"errors"

	"golang.org/x/sys/unix"
)

// signalAlive reports whether a process with id pid exists, by the portable probe kill(pid, 0): no
// error, or EPERM (it exists but belongs to another user). A zombie, not yet collected by its parent,
// still counts. It is the liveness check where no /proc tells more (see proc_other.go).
func signalAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
