package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/screen"
)

// Request is one message to a task's console socket (docs/architecture.md, "Interactive"): text, then keys,
// then the end of input are written; Cols/Rows resize the terminal. A request with none of them asks only
// for the screen. Text is bytes (base64 in JSON), so any input crosses as given.
type Request struct {
	Text []byte   `json:"text,omitempty"`
	Keys []string `json:"keys,omitempty"`
	EOF  bool     `json:"eof,omitempty"`
	Cols int      `json:"cols,omitempty"`
	Rows int      `json:"rows,omitempty"`
}

// Reply is the console's answer: Error is the refusal's text ("" when done), Screen the screen after it
// (tty mode), Pending the input still waiting for the command, bytes.
type Reply struct {
	Error   string         `json:"error,omitempty"`
	Screen  *screen.Screen `json:"screen,omitempty"`
	Pending int            `json:"pending"`
}

// maxRequest bounds one request on the socket: MaxPending of text in base64, and room for the rest.
const maxRequest = MaxPending/3*4 + 64<<10

// ioLimit bounds one connection's request and reply.
const ioLimit = 5 * time.Second

// Listen serves c on a unix socket at path (mode 0600; a file left there is replaced) until the function
// it returns is called, which stops serving and removes the socket. Only this user's processes, or root's,
// are answered (the peer's credentials are checked).
func Listen(path string, c *Console) (stop func(), err error) {
	addr, done, err := sockaddr(path)
	if err != nil {
		return nil, err
	}
	defer done()
	_ = os.Remove(path)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen for input on %s: %w", path, err)
	}
	// 0600 (a umask would be the whole process's for the moment): until then the task directory (0700) and
	// the peer checks (untrusted) keep others out.
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("listen for input on %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false) // removed by path below: the address may be a /proc/self/fd one
	go func() {
		for {
			conn, err := l.AcceptUnix()
			if err != nil {
				return
			}
			go serveConn(conn, c)
		}
	}()
	return func() {
		l.Close()
		_ = os.Remove(path)
	}, nil
}

// serveConn answers one request on conn.
func serveConn(conn *net.UnixConn, c *Console) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(ioLimit))
	var req Request
	var reply Reply
	err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&req) // read first: the caller then reads the answer
	if why := untrusted(conn); why != "" {
		_ = json.NewEncoder(conn).Encode(Reply{Error: why})
		return
	}
	if err != nil {
		reply.Error = "a malformed input request: " + err.Error()
	} else if err := c.do(req); err != nil {
		reply.Error = err.Error()
	}
	reply.Screen, reply.Pending = c.Screen(), c.Pending()
	_ = json.NewEncoder(conn).Encode(reply)
}

// do carries out req on c.
func (c *Console) do(req Request) error {
	if req.Cols != 0 || req.Rows != 0 {
		if err := c.Resize(req.Cols, req.Rows); err != nil {
			return err
		}
	}
	if len(req.Text) > 0 || len(req.Keys) > 0 || req.EOF {
		return c.Input(req.Text, req.Keys, req.EOF)
	}
	return nil
}

// untrusted says why the peer of conn is not answered, "" when it is: it must run as this process's user or
// as root, and be confined no more than this process (a sandboxed command, whose seccomp filter and
// no_new_privs this process does not have, must not type into a task: in the sandbox's writes-only level
// the task directory is not hidden, and Landlock does not govern connecting to a socket).
func untrusted(conn *net.UnixConn) string {
	rc, err := conn.SyscallConn()
	if err != nil {
		return "input refused: the caller cannot be identified"
	}
	why := "input refused: the caller cannot be identified"
	_ = rc.Control(func(fd uintptr) {
		uid, pid, err := peer(int(fd))
		switch {
		case err != nil:
		case uid != uint32(os.Getuid()) && uid != 0:
			why = "input refused: the caller is another user"
		case moreConfined(pid):
			why = "input refused: the caller is confined (a sandboxed command cannot type into a task)"
		default:
			why = ""
		}
	})
	return why
}

// ErrNoConsole is returned (wrapped) by Send when nothing listens at the path: the task's shell ended, or
// its supervisor is gone.
var ErrNoConsole = errors.New("nobody listens for input")

// Send sends req to the console socket at path and returns its reply; a refusal is the reply's Error
// (the error returned is about reaching the console). A pid other than 0 is the process that must be
// listening there (the task's supervisor; Linux checks it): a socket swapped for another's is refused.
func Send(ctx context.Context, path string, pid int, req Request) (Reply, error) {
	addr, done, err := sockaddr(path)
	if err != nil {
		return Reply{}, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, ioLimit)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", addr)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED) {
			return Reply{}, fmt.Errorf("%w (%s)", ErrNoConsole, path)
		}
		return Reply{}, fmt.Errorf("reach the task's input at %s: %w", path, err)
	}
	defer conn.Close()
	if err := listener(conn, pid); err != nil {
		return Reply{}, fmt.Errorf("the socket %s: %w", path, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Reply{}, fmt.Errorf("send input to %s: %w", path, err)
	}
	var reply Reply
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&reply); err != nil {
		return Reply{}, fmt.Errorf("read the answer of %s: %w", path, err)
	}
	return reply, nil
}

// listener checks that process pid listens at the other end of conn (0: any). What cannot be told refuses,
// but a system that gives no pid (darwin) is taken at its word.
func listener(conn net.Conn, pid int) error {
	if pid == 0 {
		return nil
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return errors.New("not a unix socket")
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	got := 0
	if cerr := rc.Control(func(fd uintptr) { _, got, err = peer(int(fd)) }); cerr != nil {
		return cerr
	}
	switch {
	case err != nil:
		return fmt.Errorf("who listens cannot be told: %w", err)
	case got != 0 && got != pid:
		return fmt.Errorf("it is not the task's supervisor's (pid %d listens there, not %d)", got, pid)
	}
	return nil
}

// sockaddr is the address of the socket at path: path itself, or when it is too long for a socket address
// (108 bytes on Linux) the same file through /proc/self/fd of its directory, open until done is called.
func sockaddr(path string) (addr string, done func(), err error) {
	const max = len(unix.RawSockaddrUnix{}.Path) - 1
	if len(path) <= max {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, fmt.Errorf("the task's input socket: %w", err)
	}
	addr = "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	if len(addr) > max {
		dir.Close()
		return "", nil, fmt.Errorf("the task's input socket: its name is too long: %s", path)
	}
	return addr, func() { dir.Close() }, nil
}
