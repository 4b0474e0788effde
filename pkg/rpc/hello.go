package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"github.com/agentbash/agentbash/pkg/request"
)

// Hello is a hello request: the first request of a target's connection (pkg/target), naming the protocol
// version the caller speaks. The answer names this side's: a caller speaking another one is refused.
type Hello struct {
	Protocol int
}

// HelloData is the data of a hello response, success or not: the protocol version this agentbash
// speaks, its version and the platform it runs on (GOOS and GOARCH names).
type HelloData struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

type helloWire struct {
	ID       json.RawMessage `json:"id"`
	Type     string          `json:"type"`
	Protocol *int            `json:"protocol"`
}

func decodeHello(line []byte) (*Hello, error) {
	var w struct {
		Protocol *int `json:"protocol"`
	}
	if err := unmarshal(line, &w); err != nil {
		return nil, err
	}
	if w.Protocol == nil {
		return nil, errors.New("protocol: required, " + wants["protocol"])
	}
	return &Hello{Protocol: *w.Protocol}, nil
}

// hello answers a hello request at once: this side's protocol, version and platform, and an error naming
// both versions when the caller speaks another protocol.
func (l *loop) hello(m Message) {
	data := HelloData{Protocol: request.Protocol, Version: l.s.Version, OS: runtime.GOOS, Arch: runtime.GOARCH}
	r := Response{ID: m.ID, Type: TypeResponse, Command: TypeHello, Success: true, Data: data}
	switch {
	case m.Hello.Protocol != request.Protocol:
		r.Success = false
		r.Error = fmt.Sprintf("this agentbash (version %s) speaks protocol %d; the request speaks protocol %d",
			l.s.Version, request.Protocol, m.Hello.Protocol)
	case l.s.Forwards != "":
		// A target's agentbash runs its commands where it is: one that forwards them on would make a chain
		// of connections (or a loop, a config naming its own host), so it refuses to be a target.
		r.Success = false
		r.Error = fmt.Sprintf("this agentbash rpc runs its commands on %s (its --target, AGENTBASH_TARGET or "+
			"config target), so it cannot be a target itself: a target's agentbash runs commands where it is", l.s.Forwards)
	}
	if r.Success {
		l.agent.Store(true)
	}
	l.send(r)
}
