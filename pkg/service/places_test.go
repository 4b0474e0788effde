package service

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/executor"
)

// closer is an executor that says when it was closed.
type closer struct {
	recorder
	uri    string
	closed *[]string
}

func (c *closer) Close() error { *c.closed = append(*c.closed, c.uri); return nil }

// TestPlacesAllow: which targets a request may name (README "Targets", "Who may name a target").
func TestPlacesAllow(t *testing.T) {
	allowed := []string{"ssh://build", "ssh://alice@db:2222/srv", "docker://dev", "cmd://agentbash rpc", "local"}
	for _, tc := range []struct {
		own, uri string
		want     string // "" allowed, else in the error
	}{
		{"local", "", ""},
		{"local", "local", ""},
		{"", "local", ""},
		{"ssh://h", "ssh://h", ""},
		{"cmd://agentbash rpc", "cmd://agentbash rpc", ""}, // the server's own, from its command line
		{"ssh://h", "local", "names local only on a server whose target is local"},
		{"local", "ssh://build", ""},
		{"local", "ssh://bob@BUILD:22/tmp", ""},
		{"local", "ssh://build.example", "not allowed"},
		{"local", "ssh://x@evil/build", "not allowed"},
		{"local", "ssh://build:22@evil", "not allowed"},
		{"local", "ssh://alice@db:2222/srv", ""},
		{"local", "ssh://db", "not allowed"}, // an entry with a user, port or dir is one URI
		{"local", "ssh://alice@db:2222/etc", "not allowed"},
		{"local", "docker://dev", ""},
		{"local", "docker://dev2", "not allowed"},
		{"local", "podman://dev", "not allowed"},
		{"local", "cmd://agentbash rpc", "never names a cmd:// target"},
		{"local", "cmd://sh -c id", "never names a cmd:// target"},
	} {
		var closed []string
		own := New(Config{}, &closer{uri: tc.own, closed: &closed})
		p := NewPlaces(own, tc.own, allowed, func(uri string) (executor.Executor, error) {
			return &closer{uri: uri, closed: &closed}, nil
		})
		s, err := p.For(tc.uri)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("server %q, request %q: %v", tc.own, tc.uri, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), `"`+tc.uri+`"`)):
			t.Errorf("server %q, request %q: %v, want %q naming the target", tc.own, tc.uri, err, tc.want)
		case tc.want == "" && (tc.uri == "" || tc.uri == tc.own || tc.uri == "local" && tc.own == "") && s != own:
			t.Errorf("server %q, request %q: not the server's own service", tc.own, tc.uri)
		}
	}
}

// TestPlacesKeepOnePerTarget: a target is opened once, on its first request, and kept; Close closes
// every one opened, the own included, and nothing opens after it.
func TestPlacesKeepOnePerTarget(t *testing.T) {
	var closed, opened []string
	own := New(Config{Timeout: 7}, &closer{uri: "local", closed: &closed})
	p := NewPlaces(own, "", []string{"ssh://a", "ssh://b"}, func(uri string) (executor.Executor, error) {
		opened = append(opened, uri)
		return &closer{uri: uri, closed: &closed}, nil
	})
	a1, _ := p.For("ssh://a")
	a2, _ := p.For("ssh://a")
	b, _ := p.For("ssh://b")
	if a1 != a2 || a1 == b || a1 == own || strings.Join(opened, " ") != "ssh://a ssh://b" {
		t.Errorf("opened %q; a %p %p b %p own %p", opened, a1, a2, b, own)
	}
	if a1.Timeout() != 7 {
		t.Errorf("a target's service has another config: timeout %v", a1.Timeout())
	}
	if got := p.Opened(); len(got) != 3 || got[0] != own || got[1] != a1 || got[2] != b {
		t.Errorf("opened services %v", got)
	}
	if err := p.Close(); err != nil || len(closed) != 3 || closed[0] != "local" {
		t.Errorf("close: %v, closed %q", err, closed)
	}
	if _, err := p.For("ssh://a"); err == nil {
		t.Error("a target opened after Close")
	}
}

// CheckAllowed refuses entries no request could name: local, cmd:// and what no target kind opens.
func TestCheckAllowed(t *testing.T) {
	open := func(uri string) (executor.Executor, error) {
		if strings.HasPrefix(uri, "ssh://") {
			return &closer{uri: uri, closed: new([]string)}, nil
		}
		return nil, fmt.Errorf("target %q: unknown kind of target", uri)
	}
	if err := CheckAllowed([]string{"ssh://a", "ssh://b:22/x"}, open); err != nil {
		t.Errorf("good entries: %v", err)
	}
	err := CheckAllowed([]string{"local", "cmd://sh -c id", "bogus", "ssh://ok"}, open)
	for _, want := range []string{`"local": a request names local only`, `"cmd://sh -c id": a request never names`,
		`targets.allowed: target "bogus": unknown kind`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
}
