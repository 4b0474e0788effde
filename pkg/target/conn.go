package target

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/rpc"
	"github.com/agentbash/agentbash/pkg/run"
)

// HelloTimeout bounds the handshake: a target whose hello has not come by then (an unreachable host,
// whose TCP connect alone can take minutes; a far side that never answers) is an error.
var HelloTimeout = 20 * time.Second

// errNoHello marks a handshake that did not come within HelloTimeout.
var errNoHello = errors.New("no hello")

// AbortWait is how long a cancelled call waits for the response to its abort_bash before it gives up.
var AbortWait = 5 * time.Second

// Limits of a connection.
const (
	// closeWait is how long Close waits for the connector to end after closing its stdin, before it kills it.
	closeWait = 2 * time.Second
	// stderrLines is how many of the connector's last stderr lines are kept for errors.
	stderrLines = 5
	// maxLine is the longest line read from the target (an rpc response with a 16 MiB result fits).
	maxLine = 64 << 20
)

// response is an rpc response: Data is the result or object of the request when Success, and for a task
// request that failed the error result; Error says what was wrong.
type response struct {
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   string          `json:"error"`
	Parts   *rpc.Parts      `json:"parts"` // a result's output and footer (this side said hello)
}

// update is an rpc update event of a streamed request.
type update struct {
	Text       string `json:"text"`
	TotalBytes int64  `json:"totalBytes"`
	TotalLines int64  `json:"totalLines"`
}

// line is any line the far side writes, decoded as far as routing needs.
type line struct {
	ID   json.RawMessage `json:"id"`
	Type string          `json:"type"`
	response
	update
}

// call is a request waiting for its response.
type call struct {
	done     chan response
	onUpdate func(update)
}

// conn is one connection to `agentbash rpc` on a target, through the connector's stdio. Requests are
// multiplexed over it by id; it is opened by dial and ends with close or when the connector does.
type conn struct {
	uri    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	hello  rpc.HelloData

	wmu sync.Mutex // one request is one Write

	mu      sync.Mutex
	nextID  int64
	calls   map[int64]*call
	lost    error         // set when the connection ended; every later call fails with it
	why     string        // why it ended, known once ended: the engine's last stderr line, or what was wrong
	ended   chan struct{} // closed when the reader saw the end and the connector was waited for
	exitErr error         // the connector's exit (exec.ExitError), known once ended
}

// dial starts the connector of t and makes the handshake: hello with this side's protocol version, whose
// answer must name the same one. The error names the target and what went wrong: the engine's last stderr
// line for a connection that closed first, the install hint for a target without agentbash.
func dial(ctx context.Context, t Target, version string) (*conn, error) {
	c := &conn{uri: t.URI, stderr: &tail{}, calls: map[int64]*call{}, ended: make(chan struct{})}
	cmd := exec.Command(t.Argv[0], t.Argv[1:]...)
	cmd.SysProcAttr = sysProcAttr()
	// A connector that runs agentbash here (cmd://) inherits this environment: it must run its commands
	// where it is, not connect on to this process's own target again (AGENTBASH_TARGET beats a config file).
	cmd.Env = append(os.Environ(), "AGENTBASH_TARGET=local")
	cmd.Stderr = c.stderr
	cmd.WaitDelay = closeWait // a connector's child holding stderr open does not hold up Wait
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("target %s: cannot start the connector %s: %w", t.URI, t.Argv[0], err)
	}
	c.cmd, c.stdin = cmd, stdin
	go c.read(stdout)

	hctx, cancel := context.WithTimeoutCause(ctx, HelloTimeout, errNoHello)
	defer cancel()
	resp, err := c.call(hctx, rpc.TypeHello, map[string]int{"protocol": request.Protocol}, nil)
	if err != nil {
		if hctx.Err() != nil { // given up while connecting: nothing to wait for
			_ = cmd.Process.Kill()
		}
		c.close()
		if errors.Is(err, errNoHello) {
			says := c.stderr.Last()
			if says == "" {
				says = "the connector wrote nothing on stderr"
			}
			return nil, fmt.Errorf("target %s: no hello from %s within %s: %s", t.URI, t.URI, HelloTimeout, says)
		}
		return nil, c.dialError(err)
	}
	if len(resp.Data) > 0 {
		_ = json.Unmarshal(resp.Data, &c.hello)
	}
	c.hello.Version, c.hello.OS, c.hello.Arch = oneLine(c.hello.Version), oneLine(c.hello.OS), oneLine(c.hello.Arch)
	switch {
	case !resp.Success && strings.Contains(resp.Error, `unknown request type "hello"`):
		err = fmt.Errorf("target %s runs an older agentbash, one without the target handshake; this one is %s: "+
			"install the same version there: agentbash target install %s", t.URI, version, t.URI)
	case c.hello.Protocol != request.Protocol && (resp.Success || c.hello.Protocol != 0):
		err = fmt.Errorf("target %s speaks agentbash protocol %d (version %s); this agentbash speaks %d (version %s): "+
			"install the same version there: agentbash target install %s",
			t.URI, c.hello.Protocol, c.hello.Version, request.Protocol, version, t.URI)
	case !resp.Success:
		err = fmt.Errorf("target %s refused the handshake: %s", t.URI, oneLine(resp.Error))
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// dialError is the error of a connection that failed before the handshake's answer.
func (c *conn) dialError(err error) error {
	if errors.Is(err, errLost) {
		<-c.ended
		if ee, ok := errors.AsType[*exec.ExitError](c.exitErr); ok && ee.ExitCode() == 127 &&
			strings.Contains(c.stderr.String(), notInstalled) {
			return fmt.Errorf("agentbash is not installed on %s: run `agentbash target install %s`", c.uri, c.uri)
		}
		return fmt.Errorf("target %s: cannot connect: %s", c.uri, c.why)
	}
	return fmt.Errorf("target %s: %w", c.uri, err)
}

// engineSays is the connector's last stderr line, or its exit status when it wrote none.
func (c *conn) engineSays() string {
	if l := c.stderr.Last(); l != "" {
		return l
	}
	if c.exitErr != nil {
		return "the connector ended: " + c.exitErr.Error()
	}
	return "the connection closed"
}

// errLost marks the error of a call whose connection ended before its response.
var errLost = errors.New("connection lost")

// call sends one request of type typ with the fields of fields (a struct or map that encodes as a JSON
// object) and returns its response, passing the update events of the request to onUpdate (nil: none
// asked). When ctx ends first, a bash request is aborted (abort_bash) and its response still awaited, for
// at most AbortWait; any other is left to its answer, which nobody reads. The error is the connection's
// loss (wrapping errLost), or ctx's cause when no answer came.
func (c *conn) call(ctx context.Context, typ string, fields any, onUpdate func(update)) (response, error) {
	body, err := json.Marshal(fields)
	if err != nil || len(body) < 2 || body[0] != '{' {
		return response{}, fmt.Errorf("encode a %s request: want an object, got %s (%v)", typ, body, err)
	}
	ca := &call{done: make(chan response, 1), onUpdate: onUpdate}
	c.mu.Lock()
	if c.lost != nil {
		c.mu.Unlock()
		return response{}, c.lost
	}
	id := c.nextID
	c.nextID++
	c.calls[id] = ca
	c.mu.Unlock()

	head := fmt.Sprintf(`{"id":%d,"type":%q`, id, typ)
	if len(body) > 2 {
		head += ","
	}
	msg := append(append([]byte(head), body[1:]...), '\n')
	if err := c.write(msg); err != nil {
		c.forget(id)
		return response{}, err
	}
	select {
	case r := <-ca.done:
		return r, nil
	case <-c.ended:
		return c.settled(ca)
	case <-ctx.Done():
	}
	if typ != rpc.TypeBash { // only a foreground command is aborted; the far side ends the others' waits itself
		c.forget(id)
		return response{}, context.Cause(ctx)
	}
	// A cancel that carries its own grace (this process's caller went away: rpc or mcp at EOF, a supervisor
	// whose client is gone) passes it on, so the far tree ends as a dead caller's, not after its kill grace.
	grace := ""
	if gc, ok := errors.AsType[run.KillGraceCause](context.Cause(ctx)); ok {
		grace = fmt.Sprintf(`,"killGrace":%g`, min(gc.KillGrace().Seconds(), request.MaxKillGrace))
	}
	_ = c.write(fmt.Appendf(nil, `{"id":null,"type":%q,"target":%d%s}`+"\n", rpc.TypeAbort, id, grace))
	timer := time.NewTimer(AbortWait)
	defer timer.Stop()
	select {
	case r := <-ca.done:
		return r, nil
	case <-c.ended:
		return c.settled(ca)
	case <-timer.C:
		c.forget(id)
		return response{}, fmt.Errorf("target %s did not answer the abort within %s: %w", c.uri, AbortWait, context.Cause(ctx))
	}
}

// settled is a call's response when the connection ended: the one that came first, else the loss.
func (c *conn) settled(ca *call) (response, error) {
	select {
	case r := <-ca.done:
		return r, nil
	default:
		return response{}, c.lost
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// write sends one request line; a failed write is the connection's loss.
func (c *conn) write(msg []byte) error {
	c.wmu.Lock()
	_, err := c.stdin.Write(msg)
	c.wmu.Unlock()
	if err != nil {
		c.mu.Lock()
		lost := c.lost
		c.mu.Unlock()
		if lost != nil {
			return lost
		}
		<-c.ended // the reader sees the end too, and says why
		return c.lost
	}
	return nil
}

// read routes the far side's lines to their calls until the connection ends, then fails the calls still
// waiting with the loss, naming the target and the engine's last stderr line.
// A line that is not JSON (an SSH banner, a profile's greeting, binary junk), or one over maxLine, ends the
// connection at once: the far side is not an agentbash rpc, or no longer speaks it.
func (c *conn) read(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 64<<10)
	var junk string
	for {
		b, err := readLine(br)
		if len(bytes.TrimSpace(b)) > 0 && !c.route(b) {
			junk = fmt.Sprintf("it wrote what is not agentbash rpc's JSON: %s", excerpt(b))
		}
		if errors.Is(err, errLongLine) {
			junk = err.Error()
		}
		if err != nil || junk != "" {
			break
		}
	}
	if junk != "" {
		_ = c.cmd.Process.Kill()
	}
	c.exitErr = c.cmd.Wait()
	says := c.engineSays()
	if junk != "" {
		says = junk
	}
	c.mu.Lock()
	c.why = says
	c.lost = fmt.Errorf("target %s: %w: %s", c.uri, errLost, says)
	c.calls = map[int64]*call{}
	c.mu.Unlock()
	close(c.ended)
}

// errLongLine marks a line over maxLine.
var errLongLine = fmt.Errorf("it wrote a line over %d MiB", maxLine>>20)

// readLine reads one line without its newline; a line over maxLine is errLongLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, errLongLine
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

// route hands one line to its call: a response ends it, an update goes to its onUpdate. Other events
// (task_done) and lines for no call are dropped. It says false for a line that is not a JSON object.
func (c *conn) route(b []byte) bool {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return false
	}
	var id int64
	if err := json.Unmarshal(l.ID, &id); err != nil {
		return true
	}
	c.mu.Lock()
	ca := c.calls[id]
	if l.Type == rpc.TypeResponse {
		delete(c.calls, id)
	}
	c.mu.Unlock()
	if ca == nil {
		return true
	}
	switch l.Type {
	case rpc.TypeResponse:
		ca.done <- l.response
	case rpc.TypeUpdate:
		if ca.onUpdate != nil {
			ca.onUpdate(l.update)
		}
	}
	return true
}

// excerpt is what a far side wrote, for an error: sanitized, on one line, quoted, shortened.
func excerpt(b []byte) string {
	const most = 120
	s := oneLine(string(b[:min(len(b), 4*most)]))
	if len(s) > most {
		s = s[:runeStart(s, most)] + "…"
	}
	return strconv.Quote(s)
}

// close ends the connection: stdin closed (the far side takes EOF as its caller gone), then the connector
// is waited for, and killed when it has not ended after closeWait.
func (c *conn) close() {
	c.wmu.Lock()
	_ = c.stdin.Close()
	c.wmu.Unlock()
	select {
	case <-c.ended:
		return
	case <-time.After(closeWait):
	}
	_ = c.cmd.Process.Kill()
	<-c.ended
}

// tail keeps the last lines written to it (a connector's stderr).
type tail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.add(string(t.part[:i]))
		t.part = t.part[i+1:]
	}
	if len(t.part) > 4<<10 { // a line without end: keep its start
		t.add(string(t.part[:4<<10]))
		t.part = nil
	}
	return len(p), nil
}

func (t *tail) add(l string) {
	l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
	if l == "" {
		return
	}
	t.lines = append(t.lines, l)
	if len(t.lines) > stderrLines {
		t.lines = t.lines[len(t.lines)-stderrLines:]
	}
}

// Last is the last non-empty line, an unfinished one included.
func (t *tail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := strings.TrimSpace(string(t.part)); p != "" {
		return p
	}
	if len(t.lines) == 0 {
		return ""
	}
	return t.lines[len(t.lines)-1]
}

// String is the kept lines.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(append(t.lines, string(t.part)), "\n")
}
