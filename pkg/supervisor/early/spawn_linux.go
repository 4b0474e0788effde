package early

import (
	"os"
	"syscall"
)

// closeRangeCloexec is close_range(2)'s CLOSE_RANGE_CLOEXEC flag; sysCloseRange is its number, the same on
// every Linux architecture (it is newer than the unified table).
const (
	closeRangeCloexec = 1 << 2
	sysCloseRange     = 436
)

// spawn starts `argv0 __supervise` as pkg/supervisor's spawn does: its own session, /dev/null for its
// standard streams, one end of a socket pair as descriptor 3, and no descriptor of this process's caller
// (every descriptor from 3 up is marked close-on-exec first, as run.CloseInheritedDescriptors does; on a
// kernel without close_range nothing is started here).
func spawn() (pid int, socket *os.File, ok bool) {
	if _, _, errno := syscall.Syscall(sysCloseRange, 3, ^uintptr(0), closeRangeCloexec); errno != 0 {
		return 0, nil, false
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, false
	}
	defer syscall.Close(fds[1])
	null, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		syscall.Close(fds[0])
		return 0, nil, false
	}
	defer syscall.Close(null)
	pid, err = syscall.ForkExec("/proc/self/exe", []string{Argv0(), Command}, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{uintptr(null), uintptr(null), uintptr(null), uintptr(fds[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		syscall.Close(fds[0])
		return 0, nil, false
	}
	return pid, os.NewFile(uintptr(fds[0]), "supervisor"), true
}
