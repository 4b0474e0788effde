package console

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// getTermios is the ioctl that reads a terminal's settings.
const getTermios = unix.TCGETS

// peer is the user and process id at the other end of the unix socket fd (SO_PEERCRED).
func peer(fd int) (uid uint32, pid int, err error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return cred.Uid, int(cred.Pid), nil
}

// moreConfined reports whether process pid runs under more seccomp filters than this process, or with
// no_new_privs where this process has not (/proc/PID/status): what the sandbox (pkg/sandbox) puts on every
// command it confines. A process that cannot be read counts as confined.
func moreConfined(pid int) bool {
	them, ok := confinement(strconv.Itoa(pid))
	if !ok {
		return true
	}
	me, _ := confinement("self")
	return them.filters > me.filters || them.noNewPrivs && !me.noNewPrivs
}

type confined struct {
	noNewPrivs bool
	filters    int // seccomp filters (Seccomp_filters; 1 when only the mode says filtering)
}

func confinement(pid string) (confined, bool) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return confined{}, false
	}
	defer f.Close()
	var c confined
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		v = strings.TrimSpace(v)
		switch k {
		case "NoNewPrivs":
			c.noNewPrivs = v == "1"
		case "Seccomp":
			if v == "2" && c.filters == 0 {
				c.filters = 1
			}
		case "Seccomp_filters":
			if n, err := strconv.Atoi(v); err == nil {
				c.filters = n
			}
		}
	}
	return c, true
}
