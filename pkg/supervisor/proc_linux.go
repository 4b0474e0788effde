package supervisor

import "golang.org/x/sys/unix"

// socketPair returns a connected pair of stream sockets, both close-on-exec from their creation.
func socketPair() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// executable is the path that starts this program again: /proc/self/exe, the binary this process runs
// even when its file was replaced or removed since.
func executable() string { return "/proc/self/exe" }

// awaitExit waits until process pid has ended, without collecting its status (waitid with WNOWAIT), and
// says true: until it is collected the pid cannot be reused.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	return true
}
