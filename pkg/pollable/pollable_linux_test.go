package pollable

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A server's stdin that is a pipe or a socket is read through the poller: a pipe from a description
// of its own, a socket with reads that do not block; the caller's descriptions stay blocking, and both
// read to EOF as before. A regular file is read as it is.
func TestPollableStdin(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	// os.Pipe's ends are non-blocking; a caller's pipe is not.
	if err := unix.SetNonblock(int(pr.Fd()), false); err != nil {
		t.Fatal(err)
	}
	in, closeIn := Stdin(pr)
	if in == io.Reader(pr) {
		t.Fatal("a pipe was not opened again")
	}
	go func() { _, _ = pw.WriteString("{\"id\":1}\n"); pw.Close() }()
	if b, err := io.ReadAll(in); err != nil || string(b) != "{\"id\":1}\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	closeIn()
	if fl, err := unix.FcntlInt(pr.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Fatalf("the caller's pipe was changed: flags %#x, %v", fl, err)
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, peer := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "peer")
	defer sock.Close()
	in, closeIn = Stdin(sock)
	defer closeIn()
	if in == io.Reader(sock) {
		t.Fatal("a socket was not made pollable")
	}
	// The socket's description is shared (a caller that gives one socket as stdin and stdout, socat's
	// way, writes our responses through it): it stays blocking.
	if fl, err := unix.FcntlInt(sock.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Fatalf("the socket was made non-blocking: flags %#x, %v", fl, err)
	}
	read := make(chan string)
	go func() { b, err := io.ReadAll(in); read <- fmt.Sprintf("%q, %v", b, err) }()
	if _, err := peer.WriteString("line\n"); err != nil { // while the reader waits, or before: either way
		t.Fatal(err)
	}
	if _, err := peer.WriteString("two\n"); err != nil {
		t.Fatal(err)
	}
	peer.Close()
	if got := <-read; got != `"line\ntwo\n", <nil>` {
		t.Fatalf("read %s", got)
	}

	f, err := os.CreateTemp(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in, _ := Stdin(f); in != io.Reader(f) {
		t.Fatal("a regular file was replaced")
	}
}
