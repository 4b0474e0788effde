package target

import "syscall"

// sysProcAttr puts the connector in its own process group, so a terminal's ^C reaches agentbash (which
// aborts the command and waits for its answer) and not the connector, and has the kernel kill it when
// agentbash dies, so it never outlives agentbash: its target then sees EOF and ends what runs there.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
