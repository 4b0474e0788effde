package rpc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
)

// TestDecodeHelloAndAbortAlias: hello names its protocol; abort_bash takes request as the name of
// target, never both.
func TestDecodeHelloAndAbortAlias(t *testing.T) {
	m, err := Decode([]byte(`{"id":0,"type":"hello","protocol":7}`), request.Command{})
	if err != nil || m.Hello == nil || m.Hello.Protocol != 7 {
		t.Errorf("hello: %+v, %v", m, err)
	}
	m, err = Decode([]byte(`{"type":"abort_bash","request":{"z":1,"a":2}}`), request.Command{})
	if err != nil || string(m.Abort.Target) != `{"a":2,"z":1}` {
		t.Errorf("request alias: %+v, %v", m.Abort, err)
	}
	for line, want := range map[string]string{
		`{"id":0,"type":"hello"}`:                      "protocol: required",
		`{"id":0,"type":"hello","protocol":"1"}`:       "protocol: want the protocol version",
		`{"id":0,"type":"hello","protocol":1,"x":1}`:   `unknown field "x" in a hello request`,
		`{"type":"abort_bash","request":1,"target":1}`: "give one",
		`{"type":"abort_bash","request":null}`:         "null names no request",
	} {
		_, err := Decode([]byte(line), request.Command{})
		if de, ok := errors.AsType[*DecodeError](err); !ok || !strings.Contains(de.Msg, want) {
			t.Errorf("Decode(%s) = %v; want an error with %q", line, err, want)
		}
	}
}

// TestHelloRefusedWhenForwarding: an rpc whose own commands run on a target refuses to be a target itself
// (a chain, or a loop of connections to itself), naming where it forwards.
func TestHelloRefusedWhenForwarding(t *testing.T) {
	for _, fwd := range []string{"", "ssh://build"} {
		var out strings.Builder
		s := &Server{Version: "v", Forwards: fwd}
		if err := s.Serve(context.Background(), strings.NewReader(`{"id":0,"type":"hello","protocol":1}`+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		refused := strings.Contains(out.String(), `"success":false`) && strings.Contains(out.String(), "ssh://build")
		if refused != (fwd != "") {
			t.Errorf("forwards %q: %s", fwd, out.String())
		}
	}
}
