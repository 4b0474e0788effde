package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport wraps the connection of another transport so that a request the client cancelled gets no
// response (the MCP spec: a receiver of notifications/cancelled should not answer the request; the SDK
// would send the handler's result anyway), and so that Serve learns when the client's input ended.
type transport struct {
	inner     mcp.Transport
	inputDone chan struct{} // closed when Read fails: EOF, the client went away
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &connection{Connection: c, inputDone: t.inputDone, calls: map[jsonrpc.ID]bool{}}, nil
}

// connection is the wrapped connection: calls holds the ids of the requests in flight (true once the
// client cancelled one), so it stays as small as the calls running.
type connection struct {
	mcp.Connection
	inputDone chan struct{}
	once      sync.Once
	mu        sync.Mutex
	calls     map[jsonrpc.ID]bool
}

func (c *connection) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.once.Do(func() { close(c.inputDone) })
		return msg, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.IsCall():
			c.calls[req.ID] = false
		case req.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, running := c.calls[id]; running {
						c.calls[id] = true
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *connection) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		cancelled := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		if cancelled {
			return nil // the client cancelled it: no response
		}
	}
	return c.Connection.Write(ctx, msg)
}

// MaxLineBytes is the longest request line the stdio transport takes (as rpc, SPEC §7.2): a longer one is
// read to its end and answered with an error (its id found at either end of the line, as clients write
// it), and the server reads on instead of ending the connection.
const MaxLineBytes = 16 << 20

// Stdio is the stdio transport over in and out: newline-delimited JSON-RPC, each message one write to out
// (so nothing interleaves inside a line), lines longer than [MaxLineBytes] refused one by one.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{
		Reader:        &lineGuard{in: in, r: bufio.NewReaderSize(in, 64<<10), out: w, limit: MaxLineBytes},
		Writer:        w,
		MaxLineLength: MaxLineBytes + 64, // the guard cuts first
	}
}

// lockedWriter makes each Write whole with respect to the others: the SDK writes a message in one Write,
// and the guard's error answers go through the same lock.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil } // stdout stays open: the process may still log

// lineGuard passes whole lines of r through, up to limit bytes each; a longer line is read to its end,
// dropped, and answered on out with an invalid-request error.
type lineGuard struct {
	in    io.Reader // closed with the connection when it is a Closer (as the SDK closes stdin)
	r     *bufio.Reader
	out   io.Writer
	limit int
	line  []byte // the rest of the current line, not yet read by the SDK
	err   error
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.line) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		g.line, g.err = g.next()
	}
	n := copy(p, g.line)
	g.line = g.line[n:]
	return n, nil
}

func (g *lineGuard) Close() error {
	if c, ok := g.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// next reads the next line that is not too long (with its newline), answering the ones that are.
func (g *lineGuard) next() ([]byte, error) {
	var line []byte
	var head, tail []byte // the ends of a line too long, for its id
	size := 0
	for {
		chunk, err := g.r.ReadSlice('\n')
		size += len(chunk)
		switch {
		case size <= g.limit:
			line = append(line, chunk...)
		case head == nil:
			line = append(line, chunk...)
			head = bytes.Clone(line[:min(len(line), 512)])
			tail = bytes.Clone(line[max(0, len(line)-512):])
			line = nil // let the memory go
		default:
			tail = append(tail, chunk...)
			tail = tail[max(0, len(tail)-512):]
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if head != nil {
			g.refuse(head, tail, size)
			if err != nil {
				return nil, err
			}
			head, tail, size = nil, nil, 0
			continue
		}
		if len(line) > 0 && err == io.EOF {
			return line, nil // a last line without newline; EOF comes next
		}
		return line, err
	}
}

// The id of a request line, where clients write it: first (`{"jsonrpc":"2.0","id":7,…`, the Go and Python
// clients) or last (`…,"jsonrpc":"2.0","id":7}`, the TypeScript one).
var (
	idFirst = regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)
	idLast  = regexp.MustCompile(`,\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*\}\s*$`)
)

// lineID is the id of the request line that starts with head and ends with tail, nil when neither shows it.
func lineID(head, tail []byte) any {
	var id any
	if m := idLast.FindSubmatch(tail); m != nil && json.Unmarshal(m[1], &id) == nil {
		return id
	}
	if m := idFirst.FindSubmatch(head); m != nil && json.Unmarshal(m[1], &id) == nil {
		return id
	}
	return nil
}

// refuse answers a request line of size bytes that is too long; without an id found, the error has a
// null id, as JSON-RPC answers a request it could not read.
func (g *lineGuard) refuse(head, tail []byte, size int) {
	answer := map[string]any{"jsonrpc": "2.0", "id": lineID(head, tail), "error": map[string]any{
		"code":    jsonrpc.CodeInvalidRequest,
		"message": fmt.Sprintf("request of %d bytes is longer than the %d bytes a request may have", size, g.limit),
	}}
	b, err := json.Marshal(answer)
	if err != nil {
		return
	}
	_, _ = g.out.Write(append(b, '\n'))
}
