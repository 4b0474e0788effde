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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbash/agentbash/pkg/run"
)

// transport wraps the connection of another transport so that a request the client cancelled gets no
// response (the MCP spec: a receiver of notifications/cancelled should not answer the request; the SDK
// would send the handler's result anyway), so that Serve learns when the client's input ended, and so
// that the calls still running then are killed as their client is gone (reference §11: SIGKILL
// [run.ClientGoneGrace] after SIGTERM, not the configured grace).
type transport struct {
	inner     mcp.Transport
	inputDone chan struct{}   // closed when Read fails: EOF, the client went away
	stop      <-chan struct{} // closed when the server ends the connection itself (Serve's context)
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &connection{Connection: c, inputDone: t.inputDone, stop: t.stop, calls: map[jsonrpc.ID]inFlight{},
		answered: make(chan struct{}, 1)}, nil
}

// connection is the wrapped connection: calls holds the requests in flight, so it stays as small as the
// calls running.
type connection struct {
	mcp.Connection
	inputDone chan struct{}
	stop      <-chan struct{}
	once      sync.Once
	mu        sync.Mutex
	calls     map[jsonrpc.ID]inFlight
	answered  chan struct{} // gets a token when a response was written
}

// inFlight is a request in flight.
type inFlight struct {
	cancelled bool // the client cancelled it: it gets no response
	tool      bool // tools/call, which may run for long
}

// endGrace bounds how long the end of the client's input waits for the answers to its requests other than
// tool calls (ping, tools/list, …: a client that writes its last requests and closes its end at once
// still gets them; the SDK writes nothing once it saw the end).
const endGrace = time.Second

// errClientGone is the error Read returns once the client's input ended: the SDK cancels the calls in
// flight with it as the cause, a run.KillGraceCause, which kills a call's tree with the grace of a client gone.
type errClientGone struct{ err error }

func (e errClientGone) Error() string          { return "the client went away: " + e.err.Error() }
func (e errClientGone) Unwrap() error          { return e.err }
func (errClientGone) KillGrace() time.Duration { return run.ClientGoneGrace }

func (c *connection) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.waitAnswers()
		c.once.Do(func() { close(c.inputDone) })
		return msg, errClientGone{err}
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.IsCall():
			c.calls[req.ID] = inFlight{tool: req.Method == "tools/call"}
		case req.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if cl, running := c.calls[id]; running {
						cl.cancelled = true
						c.calls[id] = cl
					}
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

// waitAnswers waits, up to endGrace, until every request in flight but the tool calls was answered,
// unless the server itself is ending the connection.
func (c *connection) waitAnswers() {
	timer := time.NewTimer(endGrace)
	defer timer.Stop()
	for c.quickPending() {
		select {
		case <-c.answered:
		case <-timer.C:
			return
		case <-c.stop:
			return
		}
	}
}

// quickPending tells whether a request other than a tool call is in flight and not cancelled.
func (c *connection) quickPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.calls {
		if !cl.tool && !cl.cancelled {
			return true
		}
	}
	return false
}

func (c *connection) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	cancelled := c.calls[resp.ID].cancelled
	delete(c.calls, resp.ID)
	c.mu.Unlock()
	var err error
	if !cancelled { // else the client cancelled it: no response
		err = c.Connection.Write(ctx, msg)
	}
	select {
	case c.answered <- struct{}{}:
	default:
	}
	return err
}

// MaxLineBytes is the longest request line the stdio transport takes (as rpc, reference §7.2): a longer one is
// read to its end and answered with an error (its id found at either end of the line, as clients write
// it), and the server reads on instead of ending the connection.
const MaxLineBytes = 16 << 20

// Stdio is the stdio transport over in and out: newline-delimited JSON-RPC, each message one write to out
// (so nothing interleaves inside a line), lines longer than [MaxLineBytes] and lines that are not one
// JSON-RPC 2.0 message answered with an error one by one, the server reading on.
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
// dropped, and answered on out with an invalid-request error, as a line the SDK could not take is
// ([checkLine]).
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

// next reads the next line that is a message the SDK can take (with its newline): a line too long, one
// that is not JSON or not a JSON-RPC 2.0 message is answered with an error instead (reference §9: the server
// goes on), a blank line skipped. The SDK would end the connection at any of them.
func (g *lineGuard) next() ([]byte, error) {
	for {
		line, err := g.readLine()
		if len(line) > 0 {
			if ok, answer := checkLine(line); !ok {
				if answer != nil {
					_, _ = g.out.Write(answer)
				}
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		return line, err
	}
}

// readLine reads the next line that is not too long (with its newline), answering the ones that are.
func (g *lineGuard) readLine() ([]byte, error) {
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
	idFirst = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)
	})
	idLast = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`,\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*\}\s*$`)
	})
)

// lineID is the id of the request line that starts with head and ends with tail, nil when neither shows it.
func lineID(head, tail []byte) any {
	var id any
	if m := idLast().FindSubmatch(tail); m != nil && json.Unmarshal(m[1], &id) == nil {
		return id
	}
	if m := idFirst().FindSubmatch(head); m != nil && json.Unmarshal(m[1], &id) == nil {
		return id
	}
	return nil
}

// refuse answers a request line of size bytes that is too long; without an id found, the error has a
// null id, as JSON-RPC answers a request it could not read.
func (g *lineGuard) refuse(head, tail []byte, size int) {
	var id json.RawMessage
	if v := lineID(head, tail); v != nil {
		id, _ = json.Marshal(v)
	}
	_, _ = g.out.Write(errorLine(id, jsonrpc.CodeInvalidRequest,
		fmt.Sprintf("request of %d bytes is longer than the %d bytes a request may have", size, g.limit)))
}

// errorResponse is a JSON-RPC error response as the guard writes it.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // as the request wrote it; null when it had none to answer
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorLine is the line of an error response: id as the request wrote it (nil is null), code, message.
func errorLine(id json.RawMessage, code int64, message string) []byte {
	r := errorResponse{JSONRPC: "2.0", ID: id}
	if r.ID == nil {
		r.ID = json.RawMessage("null")
	}
	r.Error.Code, r.Error.Message = code, message
	b, _ := json.Marshal(r) // never fails: id is JSON, the rest plain values
	return append(b, '\n')
}

// maxSafeID bounds an integer id: the SDK keeps a number id as a float64 and answers with its int64, so a
// larger one would come back changed and match no request of the client.
const maxSafeID = 1 << 53

// integerID matches a JSON number without fraction or exponent.
var integerID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)$`) })

// checkLine tells whether line (one line of input, with its newline) is a message the SDK can take: a
// JSON-RPC 2.0 request, notification or response as one object, with an id that is a string or an
// integer (within ±2^53), or null in a response (MCP allows no null id in a request). Else answer is the
// error response to write (-32700 for a line that is not JSON, -32600 for one that is not a valid
// request; the id the request's own when it is a valid one, else null), or nil for a line to drop
// unanswered: a blank line, or a response the SDK could not read (a response is never answered,
// JSON-RPC 2.0 §5).
func checkLine(line []byte) (ok bool, answer []byte) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return false, nil
	case !json.Valid(line):
		return false, errorLine(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	case line[0] == '[':
		return false, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported")
	case line[0] != '{':
		return false, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return false, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	invalid := func(id json.RawMessage, why string) (bool, []byte) {
		return false, errorLine(id, jsonrpc.CodeInvalidRequest, "invalid request: "+why)
	}
	rawID, hasID := m["id"]
	method, isRequest := m["method"]
	// One rule per kind of message, said the same way whatever the id was: MCP allows no null id in a
	// request (the SDK would take the line for a notification and never answer it); a response's may be.
	idRule := "a request's id must be a string or an integer (at most 2^53 in magnitude), not null"
	if !isRequest {
		idRule = "a response's id must be a string, an integer (at most 2^53 in magnitude) or null"
	}
	var id json.RawMessage // the id to answer with: a valid one, else nil (null)
	switch {
	case !hasID || string(rawID) == "null":
	case rawID[0] == '"':
		id = rawID
	case integerID().Match(rawID):
		if n, err := strconv.ParseInt(string(rawID), 10, 64); err != nil || n > maxSafeID || n < -maxSafeID {
			return invalid(nil, "id "+string(rawID)+" is out of range: "+idRule)
		}
		id = rawID
	default:
		shown := string(rawID)
		if len(shown) > 40 {
			shown = strings.ToValidUTF8(shown[:40], "") + "…"
		}
		return invalid(nil, "id "+shown+": "+idRule)
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	if isRequest {
		var name string
		if json.Unmarshal(method, &name) != nil {
			return invalid(id, `"method" must be a string`)
		}
		if hasID && id == nil {
			return invalid(nil, "id null: "+idRule)
		}
	} else {
		_, hasResult := m["result"]
		_, hasError := m["error"]
		switch {
		case !hasResult && !hasError:
			return invalid(id, `a request needs "method"`)
		case id == nil:
			return false, nil // a response to nothing the server can tell: dropped
		}
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil { // whatever else the SDK would stop at
		if !isRequest {
			return false, nil
		}
		return invalid(id, err.Error())
	}
	return true, nil
}
