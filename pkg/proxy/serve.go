package proxy

import (
	"errors"
	"net"
	"sync/atomic"
)

// Denial is one host:port the proxy refused, with how many times (details.sandbox.denied). Past
// MaxDenied distinct ones, the rest are counted in one entry whose Host is OtherHosts and Port 0.
type Denial struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

const (
	MaxDenied  = 100             // distinct host:port refusals listed; the rest are one OtherHosts entry
	OtherHosts = "(other hosts)" // the Host of that entry
)

// Server is the proxy of one run, serving its listener (pkg/proxy/server).
type Server interface {
	// Close stops the proxy: the listener and every connection close, and it returns once nothing of it
	// runs, with what it refused.
	Close() []Denial
}

// ServeFunc starts the proxy of one run on ln: it lets through what allow lets through, and calls onDeny
// (when set) after each refusal with everything refused so far, from its own goroutines.
type ServeFunc func(ln net.Listener, allow AllowList, onDeny func([]Denial)) Server

// serve is the server pkg/proxy/server registered from its init; nil until then.
var serve atomic.Pointer[ServeFunc]

// Register makes f the server Serve starts: pkg/proxy/server calls it from its init. The server is a
// package of its own so that what does not serve a proxy does not import net/http: a supervisor
// (pkg/supervisor/entry) starts before net/http's init and every init after it have run.
func Register(f ServeFunc) { serve.Store(&f) }

// ErrNoServer is Serve's error in a process where no server registered (pkg/proxy/server not linked in,
// or its init not run yet): a run that needs the proxy must not run without it.
var ErrNoServer = errors.New("the network proxy's server is not initialized in this process")

// Available says whether Serve has a server.
func Available() bool { return serve.Load() != nil }

// Serve starts the registered server on ln (see ServeFunc), or fails with ErrNoServer, leaving ln open.
func Serve(ln net.Listener, allow AllowList, onDeny func([]Denial)) (Server, error) {
	f := serve.Load()
	if f == nil {
		return nil, ErrNoServer
	}
	return (*f)(ln, allow, onDeny), nil
}
