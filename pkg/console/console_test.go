package console

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/internal/syncbuf"
)

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		o    *Options
		want string
	}{
		{nil, ""},
		{&Options{}, ""},
		{&Options{TTY: true}, ""},
		{&Options{TTY: true, Cols: 2, Rows: 1000}, ""},
		{&Options{TTY: true, Cols: 1}, "cols: want 2 to 1000, got 1"},
		{&Options{TTY: true, Rows: 1001}, "rows: want 2 to 1000, got 1001"},
		{&Options{Cols: 80}, "a size needs a terminal"},
		{&Options{TTY: true, Cols: 750, Rows: 40}, ""},
		{&Options{TTY: true, Cols: 750, Rows: 41}, "at most 30000 cells"},
		{&Options{TTY: true, Cols: 750}, ""},                    // 40 rows unless given: 30,000
		{&Options{TTY: true, Rows: 300}, "at most 30000 cells"}, // 120 columns unless given
	} {
		err := tc.o.Check()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestPipe writes text and the end of input to a pipe a child reads, as `input` does.
func TestPipe(t *testing.T) {
	c, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command("cat")
	cmd.Stdin = c.Stdin()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.Started()
	if err := c.Input([]byte("one\n"), []string{"Enter"}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Input([]byte("two\xff"), nil, true); err != nil { // bytes as given, invalid UTF-8 too
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil { // cat ends at the pipe's EOF
		t.Fatal(err)
	}
	if got := out.String(); got != "one\n\ntwo\xff" {
		t.Errorf("cat read %q", got)
	}
	if err := c.Input([]byte("x"), nil, false); !errors.Is(err, ErrClosed) {
		t.Errorf("input after eof: %v, want ErrClosed", err)
	}
	if err := c.Resize(80, 24); !errors.Is(err, ErrNoTTY) {
		t.Errorf("resize of a pipe: %v, want ErrNoTTY", err)
	}
	c.Close()
	if err := c.Input([]byte("x"), nil, false); !errors.Is(err, ErrEnded) {
		t.Errorf("input after close: %v, want ErrEnded", err)
	}
}

// TestPending: input a command does not read waits up to MaxPending, past which a request is refused whole.
func TestPending(t *testing.T) {
	c, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // the writer, blocked on the full pipe, ends when the console does
	if err := c.Input(make([]byte, MaxPending), nil, false); err != nil {
		t.Fatalf("1 MiB of input: %v", err)
	}
	if err := c.Input(make([]byte, 128<<10), nil, false); !errors.Is(err, ErrFull) {
		t.Fatalf("more: %v, want ErrFull", err)
	}
	if n := c.Pending(); n > MaxPending {
		t.Fatalf("pending %d > %d", n, MaxPending)
	}
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs behind a write to a pipe nobody reads")
	}
}

// TestTerminal runs a shell on the console's terminal: it is its controlling terminal, reads typed input,
// gets EOF from the terminal's EOF character, and sees a resize.
func TestTerminal(t *testing.T) {
	c, err := Open(Options{TTY: true, Cols: 77, Rows: 21})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("bash", "--norc", "-c",
		`stty size; read -r x; echo "got:$x"; read -r y; stty size; cat; echo "end:$?"`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin(), c.Terminal(), c.Terminal()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.Started()
	var seen syncbuf.Buffer
	read := make(chan struct{})
	go func() { _, _ = io.Copy(&seen, out); close(read) }() // ends with EIO once the shell is gone
	waitFor(t, &seen, "21 77")
	if err := c.Input([]byte("hello\r"), nil, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &seen, "got:hello")
	if err := c.Resize(90, 30); err != nil {
		t.Fatal(err)
	}
	if err := c.Input(nil, []string{"Enter"}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &seen, "30 90")
	if err := c.Input(nil, nil, true); err != nil { // VEOF: cat ends
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	<-read
	if !strings.Contains(seen.String(), "end:0") {
		t.Errorf("the terminal showed %q", seen.String())
	}
	if s := c.Screen(); s == nil || s.Cols != 90 || s.Rows != 30 {
		t.Errorf("screen %+v, want 90×30", s)
	}
}

// waitFor polls what a reader collects until it holds want (bounded: a hang fails, it is no timing check).
func waitFor(t *testing.T, b *syncbuf.Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(b.String(), want) {
			return
		}
	}
	t.Fatalf("never saw %q in %q", want, b.String())
}

// TestSocket reaches a console through its socket, at a path too long for a socket address too.
func TestSocket(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), strings.Repeat("d", 120))} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		c, err := Open(Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "7.sock")
		stop, err := Listen(path, c)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("socket %v %v, want mode 0600", fi, err)
		}
		cmd := exec.Command("head", "-c", "3")
		cmd.Stdin = c.Stdin()
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.Started()
		reply, err := Send(context.Background(), path, 0, Request{Text: []byte("abc")})
		if err != nil || reply.Error != "" {
			t.Fatalf("send: %v %q", err, reply.Error)
		}
		if err := cmd.Wait(); err != nil || out.String() != "abc" {
			t.Fatalf("head read %q (%v)", out.String(), err)
		}
		if reply, err := Send(context.Background(), path, 0, Request{Cols: 80}); err != nil || !strings.Contains(reply.Error, "cannot be resized") {
			t.Errorf("resize of a pipe through the socket: %v %q", err, reply.Error)
		}
		stop()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("socket left after stop: %v", err)
		}
		if _, err := Send(context.Background(), path, 0, Request{}); !errors.Is(err, ErrNoConsole) {
			t.Errorf("send after stop: %v, want ErrNoConsole", err)
		}
		c.Close()
	}
}

// TestConfinedCallerRefused: a process under no_new_privs (as every sandboxed command is) while this one is
// not gets a refusal from the socket, not the console (the sandbox's writes-only level does not hide it).
func TestConfinedCallerRefused(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	c, path := listening(t)
	client := `import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'{"text":"eA=="}\n'); print(s.recv(999).decode())`
	out, err := exec.Command(setpriv, "--no-new-privs", "python3", "-c", client, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "the caller is confined") {
		t.Errorf("a confined caller got %q (%v)", out, err)
	}
	if n := c.Pending(); n != 0 {
		t.Errorf("%d bytes of its input were queued", n)
	}
	out, err = exec.Command("python3", "-c", client, path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "error") {
		t.Errorf("an unconfined caller got %q (%v)", out, err)
	}
}

// TestSendChecksTheListener: Send with a pid goes only to that process's socket (here this test's own), so a
// socket swapped for another task's is refused.
func TestSendChecksTheListener(t *testing.T) {
	_, path := listening(t)
	if _, err := Send(context.Background(), path, os.Getpid(), Request{}); err != nil {
		t.Errorf("to its own supervisor: %v", err)
	}
	if _, err := Send(context.Background(), path, 1, Request{}); err == nil || !strings.Contains(err.Error(), "not the task's supervisor's") {
		t.Errorf("to another's: %v", err)
	}
}

// listening is a pipe console served at a socket in a temporary directory, both ended with the test.
func listening(t *testing.T) (*Console, string) {
	t.Helper()
	c, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	path := filepath.Join(t.TempDir(), "1.sock")
	stop, err := Listen(path, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c, path
}
