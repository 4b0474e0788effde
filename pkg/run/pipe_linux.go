package run

import (
	"io"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A large output is read off the runtime's poller, in pieces as large as the pipe holds.
//
// On the poller, the pipe is watched by epoll, and for a pipe that was ever polled the kernel wakes its
// watchers at every write of the command, not only when the pipe was empty: 1 GB written 4 KiB at a time
// (`head`) woke the runtime's poller thread 130,000 times and made as many reads, which cost the
// supervisor more CPU than its scan and a third more than the command. Once directFrom bytes were read,
// the reader takes a duplicate of the pipe's read end and closes the poller's (which removes the watch),
// then reads it with plain system calls: a read that finds the pipe empty waits in poll(2), on the
// pipe and on an eventfd that a new deadline writes to; a read that came back short is followed by a
// pause of fillPause (counted from its return) while the command fills the pipe, so the next one takes
// what came meanwhile in one piece (the 1 MiB pipe holds 4 ms of the fastest producer). A pause adds at
// most fillPause to when output arrives; a short command never reaches directFrom, and keeps the
// poller, where the process sleeps while its command runs (a goroutine in a blocking system call keeps
// the runtime's monitor thread waking every 20 µs on the CPU the command needs).
const fillPause = 250 * time.Microsecond

// directFrom is how many bytes are read on the poller first (a variable: the tests read directly from the
// first read on).
var directFrom int64 = 1 << 20

// pipeReader is the output pipe's read end ([outputReader]): an *os.File on the poller until directFrom
// bytes were read (unless direct is set at its start), then its own descriptor (see directFrom). Read is
// called by the drainer only; SetReadDeadline and Close may come from other goroutines.
type pipeReader struct {
	f     *os.File // on the poller; nil once direct
	total int64    // bytes read on the poller

	fd     int       // direct: the duplicate of the read end, non-blocking
	short  bool      // direct: the last read came back short (under half the buffer)
	lastAt time.Time // direct: when the last read returned data

	mu       sync.Mutex
	wake     int       // direct: an eventfd, written when the deadline changes; -1 once closed
	deadline time.Time // the read deadline; zero for none
	closed   bool
}

func newPipeReader(f *os.File) outputReader { return &pipeReader{f: f, fd: -1, wake: -1} }

// Read reads what the pipe holds, up to len(b) bytes, waiting for some if it is empty. It returns
// io.EOF once every writer closed it, and os.ErrDeadlineExceeded once the deadline has passed.
func (p *pipeReader) Read(b []byte) (int, error) {
	if p.f != nil {
		n, err := p.f.Read(b)
		if p.total += int64(n); err == nil && p.total >= directFrom {
			p.goDirect()
		}
		return n, err
	}
	if p.short && p.noDeadline() {
		if d := fillPause - time.Since(p.lastAt); d > 0 {
			pause(d)
		}
	}
	for {
		if p.expired() {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := unix.Read(p.fd, b)
		switch {
		case n > 0:
			p.short, p.lastAt = n < len(b)/2, time.Now()
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return 0, &os.PathError{Op: "read", Path: "|0", Err: err}
		}
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
}

// pause sleeps for d (at most fillPause) in a raw system call, which holds the thread and its processor
// without telling the runtime: told, the runtime hands the processor on during the pause and wakes its
// monitor thread after it, which cost the supervisor 0.07–0.1 s of CPU per GB of plain text (futex calls
// in sysmon, handoffp and exitsyscall), a third of its scan. Nothing in the supervisor waits long for the
// processor meanwhile: the pause is at most fillPause, and a signal (EINTR) only shortens it.
func pause(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// goDirect moves the reader off the poller (see directFrom). When a descriptor cannot be had, it stays.
func (p *pipeReader) goDirect() {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return
	}
	fd := -1
	_ = rc.Control(func(u uintptr) { fd, err = unix.FcntlInt(u, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		p.total = -1 << 62 // never again
		return
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err == nil {
		err = unix.SetNonblock(fd, true) // shared with the poller's descriptor, which has it already
	}
	if err != nil {
		unix.Close(fd)
		if wake >= 0 {
			unix.Close(wake)
		}
		p.total = -1 << 62
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		unix.Close(fd)
		unix.Close(wake)
		return
	}
	_ = p.f.Close() // the duplicate keeps the pipe open
	p.f, p.fd, p.wake = nil, fd, wake
}

// wait waits in poll(2) until the pipe has data or its writers are gone, the deadline passes, or a new
// deadline is set.
func (p *pipeReader) wait() error {
	timeout := -1
	if dl := p.readDeadline(); !dl.IsZero() {
		left := time.Until(dl)
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		timeout = int((left + time.Millisecond - 1) / time.Millisecond)
	}
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	fds := [2]unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	if _, err := unix.Poll(fds[:], timeout); err != nil && err != unix.EINTR {
		return &os.PathError{Op: "poll", Path: "|0", Err: err}
	}
	if fds[1].Revents&unix.POLLIN != 0 {
		var n [8]byte
		_, _ = unix.Read(wake, n[:])
	}
	return nil
}

func (p *pipeReader) readDeadline() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.deadline
}

func (p *pipeReader) noDeadline() bool { return p.readDeadline().IsZero() }

func (p *pipeReader) expired() bool {
	dl := p.readDeadline()
	return !dl.IsZero() && !time.Now().Before(dl)
}

// SetReadDeadline sets when a Read that waits returns os.ErrDeadlineExceeded (zero: never), also for a
// Read already waiting.
func (p *pipeReader) SetReadDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return os.ErrClosed
	}
	p.deadline = t
	if p.f != nil {
		return p.f.SetReadDeadline(t)
	}
	one := [8]byte{1}
	_, _ = unix.Write(p.wake, one[:]) // EAGAIN: the counter is full, and poll sees it readable anyway
	return nil
}

// Close closes the read end: the command's later writes get SIGPIPE.
func (p *pipeReader) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return os.ErrClosed
	}
	p.closed = true
	if p.f != nil {
		return p.f.Close()
	}
	unix.Close(p.wake)
	p.wake = -1
	return unix.Close(p.fd)
}

// hasData reports whether bytes wait to be read in the pipe (FIONREAD, which Linux names TIOCINQ).
func (p *pipeReader) hasData() bool {
	if p.f != nil {
		return pipeHasData(p.f)
	}
	n, err := unix.IoctlGetInt(p.fd, unix.TIOCINQ)
	return err == nil && n > 0
}
