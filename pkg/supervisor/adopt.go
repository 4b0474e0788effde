package supervisor

import (
	"fmt"
	"net"
	"os"

	"github.com/agentbash/agentbash/pkg/supervisor/early"
)

// TakeEarly returns a Pool whose next Start takes the supervisor started while the program initialized
// (pkg/supervisor/early), or nil when there is none (not a `run`, or its start failed).
func TakeEarly() *Pool {
	pid, socket, ok := early.Take()
	if !ok {
		return nil
	}
	p, err := adopt(pid, socket)
	if err != nil {
		return nil // it ends when its socket closes with this process; the caller spawns another
	}
	pool := &Pool{}
	pool.spares = []*child{p}
	return pool
}

// adopt makes a child of a supervisor started as spawn starts one: pid, and the client's end of its
// socket pair (adopt owns it).
func adopt(pid int, socket *os.File) (*child, error) {
	c, err := net.FileConn(socket)
	socket.Close()
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("supervisor: the socket of supervisor %d is not a unix socket", pid)
	}
	return &child{spid: pid, conn: uc}, nil
}
