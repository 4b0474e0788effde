package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeConn reads the messages it was given, then EOF, and records what is written.
type fakeConn struct {
	in      []jsonrpc.Message
	written []jsonrpc.Message
}

func (f *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	if len(f.in) == 0 {
		return nil, io.EOF
	}
	m := f.in[0]
	f.in = f.in[1:]
	return m, nil
}
func (f *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	f.written = append(f.written, m)
	return nil
}
func (f *fakeConn) Close() error      { return nil }
func (f *fakeConn) SessionID() string { return "" }

type fakeTransport struct{ c *fakeConn }

func (t fakeTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

func decode(t *testing.T, line string) jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The response to a request the client cancelled is not sent; the others are; inputDone closes at EOF.
func TestCancelledRequestGetsNoResponse(t *testing.T) {
	fc := &fakeConn{in: []jsonrpc.Message{
		decode(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`),
		decode(t, `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{}}`),
		decode(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`),
		decode(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}`),
		decode(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`),
		decode(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`),
	}}
	tr := &transport{inner: fakeTransport{fc}, inputDone: make(chan struct{})}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := c.Read(context.Background()); err != nil {
			break
		}
	}
	select {
	case <-tr.inputDone:
	default:
		t.Error("inputDone is open after EOF")
	}
	for _, id := range []any{1.0, "b", 3.0, 99.0} {
		jid, _ := jsonrpc.MakeID(id)
		_ = c.Write(context.Background(), &jsonrpc.Response{ID: jid, Result: json.RawMessage(`{}`)})
	}
	var ids []any
	for _, m := range fc.written {
		ids = append(ids, m.(*jsonrpc.Response).ID.Raw())
	}
	if len(ids) != 2 || ids[0] != int64(3) || ids[1] != int64(99) {
		t.Errorf("responses written for %v, want [3 99]", ids)
	}
}

// A line over the limit is answered with an error naming its id and size; the lines around it pass whole.
func TestLineGuard(t *testing.T) {
	long := strings.Repeat("a", 300)
	input := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"method":"tools/call","params":{"x":"` + long + `"},"jsonrpc":"2.0","id":7}` + "\n" + // the TS client's order
		`{"jsonrpc":"2.0","id":"s","params":{"x":"` + long + `"}}` + "\n" + // the Go and Python clients' order
		`{"params":"` + long + `"}` + "\n" + // no id
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` // the last line, without newline
	var out strings.Builder
	g := &lineGuard{in: strings.NewReader(input), r: bufio.NewReaderSize(strings.NewReader(input), 16), out: &out, limit: 100}
	got, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if string(got) != want {
		t.Errorf("passed %q, want %q", got, want)
	}
	answers := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	wantIDs := []any{7.0, "s", nil}
	if len(answers) != len(wantIDs) {
		t.Fatalf("answers %q", answers)
	}
	for i, a := range answers {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
			ID      any    `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a), &m); err != nil {
			t.Fatal(err)
		}
		if m.JSONRPC != "2.0" || m.ID != wantIDs[i] || m.Error.Code != jsonrpc.CodeInvalidRequest ||
			!strings.Contains(m.Error.Message, "longer than the 100 bytes") {
			t.Errorf("answer %d: %s", i, a)
		}
	}
}
