package snapshot

import "syscall"

// helperAttr starts the helper in a session of its own (a Ctrl-C at agentbash's terminal does not reach
// it) with SIGTERM as its parent-death signal: when agentbash dies, however it dies, the helper kills
// the rc's tree and exits.
func helperAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
}

// shellAttr starts the generating shell in a session of its own, SIGKILLed if the helper dies.
func shellAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// selfExecutable is this program, as the kernel knows it (it works after the file was replaced).
func selfExecutable() (string, error) { return "/proc/self/exe", nil }
