package cmd

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pollable returns a reader of in (a long-lived mode's stdin: rpc, mcp) that waits for input in the Go
// runtime's poller instead of in a blocking read(2). A goroutine blocked in a system call holds its
// processor, and then the runtime's monitor thread wakes every 20–80 µs for as long as it does: beside
// every command the server runs, on the command's own CPU (a `true` ran a quarter slower). A pipe is
// opened again through /proc/self/fd, non-blocking: a description of its own, so the caller's is left
// as it was. A socket (Node starts children on socket pairs) is made non-blocking in place: that flag
// is shared with whoever else holds the same descriptor, which for a server's stdin is nobody. Anything
// else (a terminal, a file, /dev/null) is read as it is. close releases what pollable opened.
func pollable(in io.Reader) (r io.Reader, close func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	var opened *os.File
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFIFO:
			opened, _ = os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(fd)), os.O_RDONLY|unix.O_NONBLOCK, 0)
		case unix.S_IFSOCK:
			dup, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
			if err != nil {
				return
			}
			if unix.SetNonblock(dup, true) != nil {
				unix.Close(dup)
				return
			}
			opened = os.NewFile(uintptr(dup), f.Name())
		}
	})
	if opened == nil {
		return in, func() {}
	}
	return opened, func() { opened.Close() }
}
