package proxy

import (
	"errors"
	"net"
	"testing"
)

// Without a registered server (this test binary does not link pkg/proxy/server) Serve refuses, and
// leaves the listener to its caller; with one, it starts it.
func TestServeNeedsARegisteredServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if Available() {
		t.Fatal("a server is registered in a binary without pkg/proxy/server")
	}
	if s, err := Serve(ln, nil, nil); s != nil || !errors.Is(err, ErrNoServer) {
		t.Fatalf("Serve = %v, %v; want ErrNoServer", s, err)
	}
	var got net.Listener
	Register(func(l net.Listener, _ AllowList, _ func([]Denial)) Server { got = l; return closer{} })
	defer serve.Store(nil)
	if s, err := Serve(ln, nil, nil); err != nil || s == nil || got != ln || !Available() {
		t.Fatalf("Serve = %v, %v (listener %v)", s, err, got)
	}
}

type closer struct{}

func (closer) Close() []Denial { return nil }
