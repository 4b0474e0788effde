package console

import "golang.org/x/sys/unix"

// getTermios is the ioctl that reads a terminal's settings.
const getTermios = unix.TIOCGETA

// peer is the user id at the other end of the unix socket fd (LOCAL_PEERCRED); the pid is not needed there.
func peer(fd int) (uid uint32, pid int, err error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return cred.Uid, 0, nil
}

// moreConfined: the sandbox is Linux's (pkg/sandbox); nothing else confines a command here.
func moreConfined(int) bool { return false }
