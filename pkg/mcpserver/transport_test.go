package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"regexp"
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

// Every line the SDK would end the connection at is answered (or dropped) by the guard; the messages it
// can take pass.
// TestIDRuleSaidOneWay: every request refused for its id says the same rule, so a client told that 1.5
// is wrong is not then told something else for the null it tries next; a response's rule allows null.
func TestIDRuleSaidOneWay(t *testing.T) {
	message := func(line string) string {
		_, answer := checkLine([]byte(line))
		var m struct{ Error struct{ Message string } }
		json.Unmarshal(answer, &m)
		return m.Error.Message
	}
	const request = "a request's id must be a string or an integer (at most 2^53 in magnitude), not null"
	for _, id := range []string{"1.5", "null", "true", "1e3", "{}", "9007199254740993"} {
		if got := message(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`); !strings.HasSuffix(got, request) || !strings.Contains(got, "id "+id) {
			t.Errorf("request id %s: %q, want it named and %q", id, got, request)
		}
	}
	long := `{"jsonrpc":"2.0","id":[` + strings.Repeat(`"é",`, 40) + `1],"method":"ping"}`
	if got := message(long); len(got) > 200 || !strings.Contains(got, "…: "+request) {
		t.Errorf("a long id is clipped: %q", got)
	}
	if got := message(`{"jsonrpc":"2.0","id":1.5,"result":{}}`); !strings.HasSuffix(got, "an integer (at most 2^53 in magnitude) or null") {
		t.Errorf("response id 1.5: %q", got)
	}
}

func TestCheckLine(t *testing.T) {
	const pass, drop = 0, 1 // want codes besides the JSON-RPC ones
	for _, tc := range []struct {
		line string
		code int64
		id   string // the answer's id, as JSON
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, pass, ""},
		{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"bash"}}`, pass, ""},
		{`{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}`, pass, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"}, // MCP: never null
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass, ""},
		{"  {\"jsonrpc\":\"2.0\",\"method\":\"\",\"id\":2}\r\n", pass, ""}, // the SDK: method not found
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, pass, ""},                 // a response to the server's request
		{`{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}`, pass, ""},
		{"", drop, ""},
		{" \t\r\n", drop, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, drop, ""}, // never answer a response
		{`{"jsonrpc":"2.0","id":5,"error":"bad"}`, drop, ""},
		{`garbage`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":6,"method":"ping"`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":6,"method":"ping"} {}`, jsonrpc.CodeParseError, "null"},
		{`{}`, jsonrpc.CodeInvalidRequest, "null"},
		{`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, jsonrpc.CodeInvalidRequest, "null"}, // a batch
		{`[]`, jsonrpc.CodeInvalidRequest, "null"},
		{`"ping"`, jsonrpc.CodeInvalidRequest, "null"},
		{`null`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"1.0","id":8,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "8"},
		{`{"jsonrpc":2,"id":"s","method":"ping"}`, jsonrpc.CodeInvalidRequest, `"s"`},
		{`{"id":9,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "9"},
		{`{"jsonrpc":"2.0","method":"ping"}{"id":1}`, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0","id":10,"method":5}`, jsonrpc.CodeInvalidRequest, "10"},
		{`{"jsonrpc":"2.0","id":11}`, jsonrpc.CodeInvalidRequest, "11"},
		{`{"jsonrpc":"2.0","method":"ping","ID":12}`, pass, ""}, // keys are case-sensitive: a notification
	} {
		ok, answer := checkLine([]byte(tc.line))
		switch {
		case tc.code == pass:
			if !ok || answer != nil {
				t.Errorf("%s: not passed (answer %s)", tc.line, answer)
			}
			continue
		case ok:
			t.Errorf("%s: passed, want code %d", tc.line, tc.code)
			continue
		case tc.code == drop:
			if answer != nil {
				t.Errorf("%s: answered %s, want dropped", tc.line, answer)
			}
			continue
		}
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if !strings.HasSuffix(string(answer), "}\n") || strings.Count(string(answer), "\n") != 1 {
			t.Errorf("%s: answer %q is not one line", tc.line, answer)
		}
		if err := json.Unmarshal(answer, &m); err != nil {
			t.Fatalf("%s: answer %q: %v", tc.line, answer, err)
		}
		if m.JSONRPC != "2.0" || string(m.ID) != tc.id || m.Error.Code != tc.code || m.Error.Message == "" {
			t.Errorf("%s: answer %s, want code %d id %s", tc.line, answer, tc.code, tc.id)
		}
	}
}

// The guard answers a bad line on out and passes the lines around it.
func TestLineGuardAnswersBadLines(t *testing.T) {
	input := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\ngarbage\n\n" + `{"jsonrpc":"2.0","id":true}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" + `[1` // a last bad line without newline
	var out strings.Builder
	g := &lineGuard{in: strings.NewReader(input), r: bufio.NewReader(strings.NewReader(input)), out: &out, limit: 100}
	got, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	if string(got) != want {
		t.Errorf("passed %q, want %q", got, want)
	}
	codes := regexp.MustCompile(`"code":(-[0-9]+)`).FindAllStringSubmatch(out.String(), -1)
	if len(codes) != 3 || codes[0][1] != "-32700" || codes[1][1] != "-32600" || codes[2][1] != "-32700" {
		t.Errorf("answers %q", out.String())
	}
}
