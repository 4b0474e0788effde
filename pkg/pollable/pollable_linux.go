// Package pollable reads a long-lived server's stdin (rpc, mcp) through the Go runtime's poller, so no
// thread sits in a blocking read(2) beside the commands the server runs.
package pollable

import (
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stdin returns a reader of in (a long-lived mode's stdin: rpc, mcp) that waits for input in the Go
// runtime's poller instead of in a blocking read(2). A goroutine blocked in a system call holds its
// processor, and then the runtime's monitor thread wakes every 20–80 µs for as long as it does: beside
// every command the server runs, on the command's own CPU (a `true` ran a quarter slower). A pipe is
// opened again through /proc/self/fd, non-blocking: a description of its own, so the caller's is left
// as it was. A socket (Node starts children on socket pairs) cannot be opened again, and its file
// description (its O_NONBLOCK flag) is shared with whoever holds the same socket: often this process's
// own stdout (socat and inetd-style callers give one socket as stdin and stdout, and a blocking writer
// of a non-blocking socket fails with EAGAIN when the reader is slow), or the caller's copy. So it is
// only put on the poller, and read with recv(MSG_DONTWAIT), which does not block whatever the flag
// says; the flag is left as it was (see socketReader). Anything else (a terminal, a file, /dev/null) is
// read as it is. close releases what Stdin opened.
func Stdin(in io.Reader) (r io.Reader, close func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	var opened *os.File
	var sock bool
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFIFO:
			opened, _ = os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(fd)), os.O_RDONLY|unix.O_NONBLOCK, 0)
		case unix.S_IFSOCK:
			opened, sock = pollableSocket(fd), true
		}
	})
	if opened == nil {
		return in, func() {}
	}
	if sock {
		s, err := newSocketReader(opened)
		if err != nil {
			opened.Close()
			return in, func() {}
		}
		return s, func() { opened.Close() }
	}
	return opened, func() { opened.Close() }
}

// pollableSocket returns a copy of the socket fd that the runtime's poller watches, or nil. os.NewFile
// puts a descriptor on the poller only when it is non-blocking, so the flag is set for that call and at
// once put back as it was: the file description is shared (see pollable).
func pollableSocket(fd uintptr) *os.File {
	dup, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	flags, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(dup)
		return nil
	}
	if flags&unix.O_NONBLOCK != 0 {
		return os.NewFile(uintptr(dup), "stdin") // non-blocking already: the poller's as it is
	}
	if unix.SetNonblock(dup, true) != nil {
		unix.Close(dup)
		return nil
	}
	f := os.NewFile(uintptr(dup), "stdin")
	if unix.SetNonblock(dup, false) != nil {
		f.Close()
		return nil
	}
	return f
}

// socketReader reads a socket that the poller watches with recv(MSG_DONTWAIT): no read blocks its
// thread, whether or not the socket's description is non-blocking; with nothing to read it waits in the
// poller. 0 bytes read is the end of the stream (io.EOF).
type socketReader struct {
	f  *os.File // keeps the descriptor open (the caller closes it)
	rc syscall.RawConn
}

func newSocketReader(f *os.File) (*socketReader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &socketReader{f: f, rc: rc}, nil
}

func (s *socketReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, _, rerr = unix.Recvfrom(int(fd), p, unix.MSG_DONTWAIT)
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN // nothing yet: wait in the poller
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: s.f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
