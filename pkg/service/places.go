package service

import (
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/agentbash/agentbash/pkg/executor"
)

// Places is the services of one server process (rpc, mcp) by target (README "Targets"): its own, over the
// target it was started with, and one for each other target a request named, opened on the first request
// that names it and kept until Close, so a server holds one connection per target. They all share the
// own service's config: only the place differs. A request may name only the server's own target, "local"
// when that is this machine, or a target config targets.allowed lets it name; cmd:// never.
// Its methods are safe for concurrent use.
type Places struct {
	own     *Service
	target  string   // the server's own target as configured; "local" for this machine
	allowed []string // targets.allowed
	open    func(uri string) (executor.Executor, error)

	mu     sync.Mutex
	others map[string]*Service // by URI as the requests named it
	closed bool
}

// NewPlaces makes the places of a server whose own service is own, over target (its --target, config or
// environment; "" is "local"); allowed is config targets.allowed, and open opens the executor of a URI
// (executor.Open).
func NewPlaces(own *Service, target string, allowed []string, open func(uri string) (executor.Executor, error)) *Places {
	if target == "" {
		target = "local"
	}
	return &Places{own: own, target: target, allowed: slices.Clone(allowed), open: open,
		others: map[string]*Service{}}
}

// Own is the server's own service: the one of requests that name no target.
func (p *Places) Own() *Service { return p.own }

// For is the service of a request's target: the server's own for "" or its own target, else the one kept
// for uri, opened now when it is the first request naming it. The error is a target a request may not
// name (saying how to allow it), or one that cannot be opened; both name the target.
func (p *Places) For(uri string) (*Service, error) {
	if uri == "" || uri == p.target {
		return p.own, nil
	}
	if err := p.allow(uri); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.others[uri]; s != nil {
		return s, nil
	}
	if p.closed {
		return nil, fmt.Errorf("target %q: the server is ending", uri)
	}
	exe, err := p.open(uri)
	if err != nil {
		return nil, err
	}
	c := p.own.c
	c.Warn = nil // a broken rule was said once, by the own service; results still carry it
	s := New(c, exe)
	p.others[uri] = s
	return s, nil
}

// Opened is the services of the targets used so far, the server's own first.
func (p *Places) Opened() []*Service {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []*Service{p.own}
	for _, uri := range slices.Sorted(maps.Keys(p.others)) {
		out = append(out, p.others[uri])
	}
	return out
}

// Close closes the executor of every target opened, the server's own included: their connections end.
// Nothing is opened after it.
func (p *Places) Close() error {
	p.mu.Lock()
	p.closed = true
	others := p.others
	p.others = map[string]*Service{}
	p.mu.Unlock()
	errs := []error{p.own.exe.Close()}
	for _, s := range others {
		errs = append(errs, s.exe.Close())
	}
	return errors.Join(errs...)
}

// allow says why a request may not name uri, nil when it may (README "Targets", "Who may name a target"):
//   - cmd:// never, listed or not: it would run an argv of the request's choosing on this machine;
//   - "local" only when the server's own target is this machine: a server started on a target keeps its
//     requests there;
//   - any other URI when targets.allowed lists it exactly, or, for ssh://, when the list has an entry
//     ssh://HOST (a host alone: no user, port or directory) and the URI's host is HOST (letter case
//     aside), whatever its user, port and directory.
func (p *Places) allow(uri string) error {
	switch {
	case strings.HasPrefix(uri, "cmd://"):
		return fmt.Errorf("target %q: a request never names a cmd:// target, which would run a program of its "+
			"choosing on this machine; give it to the server instead (--target, AGENTBASH_TARGET or target in the "+
			"config file)", uri)
	case uri == "local":
		return fmt.Errorf("target %q: this server runs its commands on %s; a request names local only on a "+
			"server whose target is local", uri, p.target)
	}
	for _, a := range p.allowed {
		if a == uri || hostPattern(a, uri) {
			return nil
		}
	}
	return fmt.Errorf("target %q: not allowed: a request names only this server's target (%s) or one listed "+
		"in targets.allowed of the config file (a URI, or ssh://HOST for that host with any user, port or "+
		"directory); a request cannot allow one", uri, p.target)
}

// CheckAllowed checks config targets.allowed when a server starts: every entry must be a target a request
// could name (README "Targets"). local and cmd:// never can, and an entry no target kind takes (open fails:
// executor.Open) is a typo; each is an error naming the entry, so the list never allows less than it says.
// Opening connects nothing: an executor connects on its first use.
func CheckAllowed(allowed []string, open func(uri string) (executor.Executor, error)) error {
	var errs []error
	for _, a := range allowed {
		switch {
		case a == "local":
			errs = append(errs, fmt.Errorf("targets.allowed: %q: a request names local only on a server whose "+
				"target is local, where it needs no entry", a))
		case strings.HasPrefix(a, "cmd://"):
			errs = append(errs, fmt.Errorf("targets.allowed: %q: a request never names a cmd:// target; give it "+
				"to the server (--target, AGENTBASH_TARGET or target)", a))
		default:
			exe, err := open(a)
			if err != nil {
				errs = append(errs, fmt.Errorf("targets.allowed: %w", err))
				continue
			}
			_ = exe.Close()
		}
	}
	return errors.Join(errs...)
}

// hostPattern says whether entry is ssh://HOST and uri an ssh:// URI of that host.
func hostPattern(entry, uri string) bool {
	e, err := url.Parse(entry)
	if err != nil || e.Scheme != "ssh" || e.User != nil || e.Port() != "" || e.Path != "" || e.RawQuery != "" ||
		e.Fragment != "" || e.Hostname() == "" || strings.HasSuffix(e.Host, ":") {
		return false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "ssh" {
		return false
	}
	return strings.EqualFold(u.Hostname(), e.Hostname())
}

// CheckSandbox refuses a server's sandbox policy whose paths cannot be confined as written on this machine
// (home: where `~` expands), so a server says so at its start rather than refuse every request (reference
// §13). A policy that is off, or a server forwarding to a target (whose place resolves the paths), passes.
func CheckSandbox(p sandbox.Policy, home string, forwards bool) error {
	if !p.On() || forwards {
		return nil
	}
	_, err := p.Resolve(home)
	return err
}
