//go:build !linux

package run

import "syscall"

// sysProcAttr starts the shell in a new session, which is also a new process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// becomeSubreaper is Linux-only; elsewhere the process group is what gets killed.
func becomeSubreaper() {}

// descendants is Linux-only; elsewhere only the process group is signalled.
func descendants() (live, zombies []int) { return nil, nil }

func reap(pids []int, shell int) {}
func reserveThreads()            {}
func hasChildren() bool          { return false }
