//go:build !linux

package target

import "syscall"

// sysProcAttr puts the connector in its own process group, so a terminal's ^C reaches agentbash (which
// aborts the command and waits for its answer) and not the connector. Without a parent-death signal, a
// connector outlives a killed agentbash only until it reads the EOF of its stdin.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
