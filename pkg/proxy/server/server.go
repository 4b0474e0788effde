// Package server is the sandbox's network proxy itself (docs/architecture.md, "The network proxy"): an HTTP
// proxy for one run that lets through only the hosts of its allow-list (pkg/proxy), resolves names itself
// and dials exactly what it resolved, and counts what it refused. It registers itself with pkg/proxy from
// its init (proxy.Serve); a package of its own, so that the supervisor's start does not wait for net/http's
// initialization and everything ordered with it (pkg/supervisor/entry).
package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentbash/agentbash/pkg/proxy"
)

func init() {
	proxy.Register(func(ln net.Listener, allow proxy.AllowList, onDeny func([]proxy.Denial)) proxy.Server {
		return Serve(ln, Config{Allow: allow, OnDeny: onDeny})
	})
}

// halfClosedTunnel is how long a tunnel lasts once one of its directions ended (relay); a variable for
// the tests.
var halfClosedTunnel = 2 * time.Minute

// Resolver resolves a name to its addresses (net.Resolver's LookupNetIP).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what one proxy lets through, and how it reaches what it lets through.
type Config struct {
	Allow proxy.AllowList
	// Resolver resolves the names asked for, once each request; nil is net.DefaultResolver.
	Resolver Resolver
	// Dial connects to one address, `ip:port` (never a name); nil is a net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// OnDeny, if set, is called after each refusal with everything refused so far (Denied), from the
	// connection's goroutine: it must not block.
	OnDeny func([]proxy.Denial)
	// OwnAddrs are the machine's own addresses, which a name only a wildcard allows may not resolve to; nil
	// is the addresses of its interfaces (net.InterfaceAddrs: the proxy serves in the host's network
	// namespace), read again at each lookup that needs them.
	OwnAddrs []netip.Addr
}

// The proxy's bounds (docs/architecture.md, "The network proxy").
const (
	MaxConns        = 128              // client connections served at once; the next waits in the listen queue
	maxRequestHead  = 64 << 10         // a request's line and headers
	maxResponseHead = 256 << 10        // a response's status line and headers (128 connections: 32 MiB at most)
	idleTimeout     = 2 * time.Minute  // a client connection that sends no request for this long is closed
	dialTimeout     = 30 * time.Second // resolving a name and connecting to one of its addresses
)

// Proxy is the proxy of one run, serving its listener until Close.
type Proxy struct {
	ln     net.Listener
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // every open connection, both sides, so Close ends them all
	denied map[string]*proxy.Denial
	order  []*proxy.Denial
	others int
}

// Serve serves ln as cfg says, in goroutines of its own, until Close. ln is the proxy's: Close closes it.
func Serve(ln net.Listener, cfg Config) *Proxy {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, cfg: cfg, ctx: ctx, cancel: cancel, slots: make(chan struct{}, MaxConns),
		conns: map[net.Conn]struct{}{}, denied: map[string]*proxy.Denial{}}
	p.wg.Add(1)
	go p.accept()
	return p
}

// Close stops the proxy: the listener and every connection close, and it returns once nothing of it runs,
// with what it refused (Denied).
func (p *Proxy) Close() []proxy.Denial {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.ln.Close()
	p.wg.Wait()
	return p.Denied()
}

// Denied is what the proxy refused so far, in the order first refused.
func (p *Proxy) Denied() []proxy.Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxy.Denial
	for _, d := range p.order {
		out = append(out, *d)
	}
	if p.others > 0 {
		out = append(out, proxy.Denial{Host: proxy.OtherHosts, Count: p.others})
	}
	return out
}

func (p *Proxy) deny(host string, port int) {
	p.count(host, port)
	if p.cfg.OnDeny != nil {
		p.cfg.OnDeny(p.Denied())
	}
}

func (p *Proxy) count(host string, port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := proxy.JoinHostPort(host, port)
	switch d, ok := p.denied[key]; {
	case ok:
		d.Count++
	case len(p.order) < proxy.MaxDenied:
		d = &proxy.Denial{Host: host, Port: port, Count: 1}
		p.denied[key], p.order = d, append(p.order, d)
	default:
		p.others++
	}
}

// track adds c to what Close closes; false (c closed) once the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) drop(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		select {
		case p.slots <- struct{}{}:
		case <-p.ctx.Done():
			return
		}
		c, err := p.ln.Accept()
		if err != nil {
			<-p.slots
			if p.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			select { // out of descriptors, say: try again shortly
			case <-time.After(50 * time.Millisecond):
			case <-p.ctx.Done():
				return
			}
			continue
		}
		if !p.track(c) {
			<-p.slots
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer func() { <-p.slots }()
			defer p.drop(c)
			p.serve(c)
		}()
	}
}

// headLimit bounds what a head (request or response line and headers) may take: n bytes, then an error;
// n < 0 is no bound (a body).
type headLimit struct {
	r    io.Reader
	n    int64
	over bool
}

var errHeadTooLarge = errors.New("the head is too large")

func (h *headLimit) Read(b []byte) (int, error) {
	if h.n < 0 {
		return h.r.Read(b)
	}
	if h.n == 0 {
		h.over = true
		return 0, errHeadTooLarge
	}
	if int64(len(b)) > h.n {
		b = b[:h.n]
	}
	n, err := h.r.Read(b)
	h.n -= int64(n)
	return n, err
}

// serve serves one client connection: requests one after the other, until one that ends it.
func (p *Proxy) serve(c net.Conn) {
	head := &headLimit{r: c}
	br := bufio.NewReaderSize(head, 8<<10)
	var up *upstream
	defer func() { up.close(p) }()
	for {
		_ = c.SetReadDeadline(time.Now().Add(idleTimeout))
		head.n = maxRequestHead
		req, err := http.ReadRequest(br)
		if err != nil {
			switch {
			case head.over:
				p.reply(c, answer{http.StatusRequestHeaderFieldsTooLarge, "http_request_error", "the request's head is over 64 KiB"}, "", 0)
			case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), errors.Is(err, io.ErrUnexpectedEOF), isTimeout(err):
			default:
				p.reply(c, answer{http.StatusBadRequest, "http_request_error", "a malformed request: " + err.Error()}, "", 0)
			}
			return
		}
		head.n = -1
		_ = c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req)
			return
		}
		var keep bool
		if keep, up = p.forward(c, br, req, up); !keep {
			return
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// answer is what the proxy answers itself when it does not pass a request on: the status, the error type of
// its Proxy-Status header (RFC 9209: http_request_denied for the allow-list's refusals), and why, in words.
type answer struct {
	status int
	kind   string
	why    string
}

// reply answers a request with a, and the connection ends after it. host and port name the destination
// when there is one.
func (p *Proxy) reply(c net.Conn, a answer, host string, port int) {
	text := "agentbash sandbox proxy: " + a.why + "\n"
	ps := "agentbash; error=" + a.kind
	if host != "" {
		ps += "; details=" + strconv.Quote(proxy.JoinHostPort(host, port))
	}
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"+
		"Proxy-Status: %s\r\nConnection: close\r\n\r\n%s", a.status, http.StatusText(a.status), len(text), ps, text)
}

// DeniedReason is the text a refused request gets back: what was refused, and what would allow it. For a
// loopback destination (127.0.0.0/8, ::1, localhost) it also says how a command reaches a server it started
// itself: that one is on the sandbox's own loopback, reached directly, where an allowHosts entry would reach
// the host's.
func DeniedReason(host string, port int, why string) string {
	hp := proxy.JoinHostPort(host, port)
	text := fmt.Sprintf("network access to %s is blocked: %s. Only the user who starts agentbash can allow "+
		"it (--sandbox-allow-host %s, or sandbox.allowHosts in the config)", hp, why, hp)
	if a, err := netip.ParseAddr(host); host == "localhost" || err == nil && a.IsLoopback() {
		text += fmt.Sprintf(", and that reaches port %d of the host's loopback. A server the command started "+
			"itself is on the sandbox's own loopback and is reached directly, not through this proxy: curl "+
			"--noproxy '*', or NO_PROXY=127.0.0.1,localhost set inside the command", port)
	}
	return text
}

// errSpelling is target's error for a host spelled as neither a name nor an IP address in full (0x7f000001,
// 127.1, 127.0.0.1.): nothing lets it through, and it is counted as a refusal.
var errSpelling = errors.New("the sandbox only takes hosts spelled as names or full IP addresses")

// target is the canonical host and the port a request asks for: the authority of a CONNECT, the URL of an
// absolute-form request (http only, port 80 by default). status is what to answer when err is set; for
// errSpelling, host is the host as the request spelled it, made printable (printable).
func target(req *http.Request) (host string, port int, status int, err error) {
	var portText string
	if req.Method == http.MethodConnect {
		h, pt, err := net.SplitHostPort(req.URL.Host)
		if err != nil || req.URL.Host == "" {
			return "", 0, http.StatusBadRequest, fmt.Errorf("CONNECT wants HOST:PORT, got %q", req.RequestURI)
		}
		host, portText = h, pt
	} else {
		switch {
		case !req.URL.IsAbs() || req.URL.Host == "":
			return "", 0, http.StatusBadRequest, errors.New("this is the sandbox's proxy: it takes CONNECT " +
				"and absolute-form requests (GET http://host/…), as HTTP_PROXY gives them")
		case req.URL.Scheme != "http":
			return "", 0, http.StatusNotImplemented, fmt.Errorf("%s:// through the proxy: only http:// is "+
				"forwarded; https goes through CONNECT (what HTTPS_PROXY does)", req.URL.Scheme)
		}
		host, portText = req.URL.Hostname(), req.URL.Port()
		if portText == "" {
			portText = "80"
		}
	}
	port, perr := strconv.Atoi(portText)
	if perr != nil || port < 1 || port > 65535 || portText != strconv.Itoa(port) {
		return "", 0, http.StatusBadRequest, fmt.Errorf("the port of %q is not a number from 1 to 65535", req.RequestURI)
	}
	h, err := proxy.CanonicalHost(host)
	if err != nil && host != "" {
		return printable(host), port, http.StatusBadRequest, fmt.Errorf("%w (%q: %v)", errSpelling, host, err)
	}
	if err != nil {
		return "", 0, http.StatusBadRequest, fmt.Errorf("%q: %v", host, err)
	}
	return h, port, 0, nil
}

// printable is a host as a request spelled it, made safe to show and record: printable ASCII, any other byte
// as ?, and 253 bytes at most.
func printable(host string) string {
	b := []byte(host[:min(len(host), 253)])
	for i, c := range b {
		if c < ' ' || c > '~' {
			b[i] = '?'
		}
	}
	return string(b)
}

// badTarget answers a request whose target (target) is err: a host spelled as no name or address is a
// refusal, counted; the rest are errors of the request.
func (p *Proxy) badTarget(c net.Conn, host string, port int, status int, err error) {
	if !errors.Is(err, errSpelling) {
		p.reply(c, answer{status, "http_request_error", err.Error()}, "", 0)
		return
	}
	p.deny(host, port)
	p.reply(c, answer{status, "http_request_denied", fmt.Sprintf("network access to %s is blocked: %v",
		proxy.JoinHostPort(host, port), err)}, host, port)
}

// errNotReached is the error of a name whose addresses are all ones its entry may not reach.
var errNotReached = errors.New("not reachable through this entry")

// reach connects to host:port when the allow-list lets it through: the name is resolved once, and what is
// dialled is exactly the addresses it resolved to, in order. Otherwise the status and why, and a refusal
// is counted.
func (p *Proxy) reach(host string, port int) (net.Conn, answer) {
	by, ok := p.cfg.Allow.Match(host, port)
	if !ok {
		p.deny(host, port)
		return nil, answer{http.StatusForbidden, "http_request_denied", DeniedReason(host, port, "it is not in sandbox.allowHosts")}
	}
	ctx, cancel := context.WithTimeout(p.ctx, dialTimeout)
	defer cancel()
	addrs, err := p.addresses(ctx, host, by)
	if errors.Is(err, errNotReached) {
		p.deny(host, port)
		return nil, answer{http.StatusForbidden, "destination_ip_prohibited", DeniedReason(host, port, err.Error())}
	}
	if err != nil {
		return nil, answer{http.StatusBadGateway, "dns_error", fmt.Sprintf("cannot resolve %s: %v", host, err)}
	}
	var last error
	for _, a := range addrs {
		c, err := p.cfg.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			if !p.track(c) {
				return nil, answer{http.StatusServiceUnavailable, "proxy_internal_error", "the run is ending"}
			}
			return c, answer{}
		}
		last = err
	}
	kind := "connection_refused"
	if isTimeout(last) {
		kind = "connection_timeout"
	}
	return nil, answer{http.StatusBadGateway, kind, fmt.Sprintf("cannot connect to %s: %v", proxy.JoinHostPort(host, port), last)}
}

// addresses is what host may be dialled at: an address itself, or what the name resolves to, but never an
// unspecified address (it reaches the host's loopback), and for a name a Restricted entry allows (a
// wildcard, or a name a request narrowed one to), none of the machine's own addresses or a cloud's
// metadata service (a wildcard over names someone else controls must not lead there; ownOrMetadata).
func (p *Proxy) addresses(ctx context.Context, host string, by proxy.Pattern) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.IsUnspecified() { // no entry proxy.ParsePattern makes lets it through, but a proxy.AllowList made by hand may
			return nil, fmt.Errorf("%w: an unspecified address is never dialled (it reaches the host's loopback)",
				errNotReached)
		}
		return []netip.Addr{a}, nil
	}
	resolved, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", lookupName(host))
	if err != nil {
		return nil, err
	}
	ownOrMetadata := p.ownOrMetadata()
	var out, refused []netip.Addr
	for _, a := range resolved {
		a = a.Unmap()
		if a.IsUnspecified() || by.Restricted && ownOrMetadata(a) {
			refused = append(refused, a)
			continue
		}
		out = append(out, a)
	}
	switch {
	case len(out) > 0:
		return out, nil
	case len(refused) > 0 && by.Wildcard:
		return nil, fmt.Errorf("%w: it resolves to %v, which only an exact entry for the name (or the address "+
			"itself) may reach, not %s", errNotReached, refused[0], by)
	case len(refused) > 0:
		return nil, fmt.Errorf("%w: it resolves to %v, which a name narrowed from a wildcard of the server's "+
			"sandbox.allowHosts may not reach: only an exact entry in the server's own list may", errNotReached, refused[0])
	}
	return nil, fmt.Errorf("no address for %s", host)
}

// lookupName is the name a canonical host name (no trailing dot) is resolved by. A name of several labels
// gets its trailing dot back: fully qualified, it is never tried under resolv.conf's search domains (pypi.org
// without an answer of its own would reach pypi.org.corp.example, a name the allow-list never named). A
// name of one label stays as it is: the search list is what a short name (an intranet's) means, and
// /etc/hosts keeps such names without a dot (Go's resolver finds localhost there, not localhost.).
func lookupName(host string) string {
	if strings.Contains(host, ".") {
		return host + "."
	}
	return host
}

// metadataAddrs are cloud metadata services outside the link-local range: AWS's IPv6 one, Alibaba's,
// Azure's wire server, Oracle's, Google Cloud's IPv6 one, Akamai (Linode)'s and Scaleway's IPv6 ones.
// Refusing a unique-local address nothing else uses costs nothing.
var metadataAddrs = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"), netip.MustParseAddr("192.0.0.192"), netip.MustParseAddr("fd20:ce::254"),
	netip.MustParseAddr("fd00:a9fe:a9fe::1"), netip.MustParseAddr("fd00:42::42")}

// ownOrMetadata is one lookup's test of what a name only a wildcard allows may not lead to: the machine's
// own addresses (loopback, and its interfaces': Config.OwnAddrs, read once, at the first address that is not
// refused already), link-local ones (169.254.169.254 among them), and the metadata services of clouds
// outside the link-local range (metadataAddrs). A private network's addresses (RFC 1918) are not among
// them: a wildcard over a company's own names is meant to lead there. When the interfaces cannot be read,
// every address counts as the machine's own.
func (p *Proxy) ownOrMetadata() func(netip.Addr) bool {
	var own []netip.Addr
	var err error
	read := false
	return func(a netip.Addr) bool {
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || slices.Contains(metadataAddrs, a) {
			return true
		}
		if !read {
			read = true
			if own = p.cfg.OwnAddrs; own == nil {
				own, err = interfaceAddrs()
			}
		}
		return err != nil || slices.Contains(own, a)
	}
}

// interfaceAddrs are the addresses of the machine's interfaces (of the network namespace it runs in).
func interfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// tunnel answers a CONNECT: the connection becomes a tunnel to the host, both ways, until either side ends.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, status, err := target(req)
	if err != nil {
		p.badTarget(c, host, port, status, err)
		return
	}
	up, a := p.reach(host, port)
	if up == nil {
		p.reply(c, a, host, port)
		return
	}
	defer p.drop(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if passBuffered(up, br) == nil { // what the client sent right after its request
		relay(c, up)
	}
}

// passBuffered writes to w what br has read ahead and holds (the first bytes of a tunnel, sent with the
// request that opened it).
func passBuffered(w io.Writer, br *bufio.Reader) error {
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		_, err := w.Write(b)
		return err
	}
	return nil
}

// relay copies a to b and b to a until both directions ended; each end's write side is closed when its
// source ends (TCP to TCP is spliced by the kernel).
//
// Once one direction ended, the other has halfClosedTunnel to end too: TCP cannot tell a client that closed
// its end and went away from one that only finished sending, and a host that never answers the close must
// not hold a slot until the run ends.
func relay(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		copyClose(b, a)
		_ = b.SetReadDeadline(time.Now().Add(halfClosedTunnel))
		close(done)
	}()
	copyClose(a, b)
	_ = a.SetReadDeadline(time.Now().Add(halfClosedTunnel))
	<-done
}

func copyClose(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		_ = cw.CloseWrite()
		return
	}
	dst.Close() // an error either way: end both
	src.Close()
}

// upstream is the connection to the host of the last absolute-form request of a client connection, kept for
// the next request to the same host:port.
type upstream struct {
	conn net.Conn
	head *headLimit
	br   *bufio.Reader
	bw   *bufio.Writer
	host string
	port int
}

func (u *upstream) close(p *Proxy) {
	if u != nil {
		p.drop(u.conn)
	}
}

// hopHeaders are the headers of one connection, not forwarded (RFC 9110 §7.6.1), with the ones a client
// sends its proxy.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// removeHop removes the hop-by-hop headers of h, those Connection names included; it returns the Upgrade
// header when Connection asked for one.
func removeHop(h http.Header) (upgrade string) {
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			name = strings.TrimSpace(name)
			if strings.EqualFold(name, "upgrade") {
				upgrade = h.Get("Upgrade")
			}
			if name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
	return upgrade
}

// forward sends an absolute-form request to its host and its response back. keep says whether the client
// connection serves another request; up is the host connection to keep for it. br is what reads c.
func (p *Proxy) forward(c net.Conn, br *bufio.Reader, req *http.Request, up *upstream) (keep bool, _ *upstream) {
	host, port, status, err := target(req)
	if err != nil {
		p.badTarget(c, host, port, status, err)
		return false, up
	}
	if up != nil && (up.host != host || up.port != port || !up.alive()) {
		up.close(p)
		up = nil
	}
	reused := up != nil
	if up == nil {
		if up = p.dialUpstream(c, host, port); up == nil {
			return false, nil
		}
	}
	if upgrade := removeHop(req.Header); upgrade != "" {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", upgrade)
	}
	req.Host = req.URL.Host // the host that was checked, whatever Host said
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // none (Write would add Go's)
	}
	var s *sending
	var w *clientWatch
	var resp *http.Response
	for {
		s = p.send(up, req)
		w = watch(c, br, s, up.conn)
		var interim bool
		resp, interim, err = p.response(c, up, req)
		if err == nil {
			break
		}
		if w.end() {
			err = errClientGone
		}
		if err == errClientGone || !reused || interim || req.Body != http.NoBody || !closedBeforeAnswer(err) {
			break
		}
		// A kept connection the host closed meanwhile (its idle timeout): once more on a new one, as a
		// client would (a request without a body is sent again as it was).
		s.wait()
		up.close(p)
		if up, reused = p.dialUpstream(c, host, port), false; up == nil {
			return false, nil
		}
	}
	defer w.end() // before the client's next request is read
	if err != nil {
		up.close(p)
		if err != errClientGone {
			kind := "http_response_incomplete"
			if errors.Is(err, errResponseHead) {
				kind = "http_response_header_section_size"
			}
			p.reply(c, answer{http.StatusBadGateway, kind, fmt.Sprintf("%s gave no answer: %v", proxy.JoinHostPort(host, port), err)}, host, port)
		}
		c.Close() // the body's writer may be waiting for the client
		s.wait()
		return false, nil
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		err := resp.Write(c) // the head: a 101 has no body
		if werr := s.wait(); !w.end() && err == nil && werr == nil &&
			passBuffered(c, up.br) == nil && passBuffered(up.conn, br) == nil {
			relay(c, up.conn)
		}
		up.close(p)
		return false, nil
	}
	removeHop(resp.Header)
	resp.Close = resp.Close || req.Close
	if !req.ProtoAtLeast(1, 1) && len(resp.TransferEncoding) > 0 { // an HTTP/1.0 client knows no chunks
		resp.TransferEncoding, resp.Close = nil, true // the body, decoded, ends with the connection
		err = writeWhole(c, resp)
	} else {
		err = writeResponse(c, up, resp)
	}
	var werr error
	select {
	case <-s.done:
		werr = s.err
	case <-time.After(time.Second): // the host answered before it read the whole body: this connection cannot go on
		werr = errors.New("the request's body was not sent in full")
		up.close(p)
		c.Close()
		s.wait()
	}
	if err != nil || werr != nil || resp.Close {
		up.close(p)
		return false, nil
	}
	return true, up
}

// sending is a request being written to its host, in a goroutine of its own: its body may wait for a 100
// Continue that the response loop passes on.
type sending struct {
	done chan struct{}
	err  error // once done is closed
}

func (p *Proxy) send(up *upstream, req *http.Request) *sending {
	s := &sending{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(s.done)
		if s.err = req.Write(up.bw); s.err == nil {
			s.err = up.bw.Flush()
		}
	}()
	return s
}

// wait waits for the request to be sent, and says whether it failed.
func (s *sending) wait() error {
	<-s.done
	return s.err
}

// clientWatch notices a client that goes away while its request is served. A host may take its time to
// answer (a long poll) or stop in the middle of a body, and only a write to the client would show that it
// left: its slot would stay taken until the host ends, maybe never. Once the request is sent, body and all
// (nothing else reads the client's connection then), the watch reads ahead on the client's connection
// (what it reads stays in br, for the next request); at its end, or an error, it closes the host's
// connection, which ends whatever waits on the host. A client that only ends its writing counts as gone, as
// for net/http's server. end stops the watch, before anything else reads the client's connection again.
type clientWatch struct {
	c     net.Conn
	stop  chan struct{}
	done  chan struct{}
	gone  bool // once done is closed
	ended bool
}

func watch(c net.Conn, br *bufio.Reader, s *sending, up net.Conn) *clientWatch {
	w := &clientWatch{c: c, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		select {
		case <-s.done:
		case <-w.stop:
			return
		}
		for n := 1; n <= br.Size(); n = br.Buffered() + 1 { // a next request stays, until the buffer is full
			if _, err := br.Peek(n); err != nil {
				select {
				case <-w.stop: // end's deadline
				default:
					w.gone = true
					up.Close()
				}
				return
			}
		}
	}()
	return w
}

// end stops the watch (a read deadline in the past ends its read), and says whether the client went away.
func (w *clientWatch) end() bool {
	if !w.ended {
		w.ended = true
		close(w.stop)
		_ = w.c.SetReadDeadline(time.Unix(1, 0))
		<-w.done
		_ = w.c.SetReadDeadline(time.Time{})
	}
	return w.gone
}

var (
	errClientGone   = errors.New("the client went away")
	errResponseHead = errors.New("its response's head is over 256 KiB")
)

// dialUpstream is a new connection to host:port for absolute-form requests, or nil once the client was
// answered why there is none.
func (p *Proxy) dialUpstream(c net.Conn, host string, port int) *upstream {
	conn, a := p.reach(host, port)
	if conn == nil {
		p.reply(c, a, host, port)
		return nil
	}
	h := &headLimit{r: conn, n: -1}
	return &upstream{conn: conn, head: h, br: bufio.NewReaderSize(h, 8<<10), bw: bufio.NewWriterSize(conn, 4<<10),
		host: host, port: port}
}

// alive says whether a kept connection can take another request: the host has neither closed it nor sent
// anything unasked since its last response. A host closes a kept connection when its own keep-alive time
// runs out, without a word: a request sent on it would get no answer where a new connection serves it. The
// look does not wait and takes nothing (MSG_PEEK|MSG_DONTWAIT: a read deadline in the past would not even
// look).
func (u *upstream) alive() bool {
	if u.br.Buffered() > 0 {
		return false
	}
	sc, ok := u.conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(err, syscall.EAGAIN) // nothing to read: no bytes, no end
		return true
	})
	return err == nil && open
}

// closedBeforeAnswer says whether err is a connection the host closed before any of its answer.
func closedBeforeAnswer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// errHeadWritten is what the body of a response gives Response.Write when only its head is wanted.
var errHeadWritten = errors.New("the head is written")

type headOnly struct{}

func (headOnly) Read([]byte) (int, error) { return 0, errHeadWritten }

// writeResponse sends the client resp, read from up. A body of known length, or one that ends with the
// connection, is copied from the host's connection itself (TCP to TCP, spliced by the kernel, as a CONNECT
// tunnel is): Response.Write copies it through a 32 KiB buffer, twice the time of a tunnel for a 100 MB
// download on loopback (docs/benchmarks.md). The head is still Response.Write's: it stops where the body
// would start. A chunked body goes through Response.Write whole.
func writeResponse(c net.Conn, up *upstream, resp *http.Response) error {
	if resp.Body == http.NoBody || resp.ContentLength == 0 || len(resp.TransferEncoding) > 0 {
		return writeWhole(c, resp)
	}
	// resp.Body is left unread and unclosed: closing it would read the body from up.br.
	var head bytes.Buffer
	r := *resp
	r.Body = io.NopCloser(headOnly{})
	if err := r.Write(&head); !errors.Is(err, errHeadWritten) {
		if err == nil {
			err = errors.New("the response's head was not written")
		}
		return err
	}
	n := int64(up.br.Buffered()) // what of the body the head's read took along
	if resp.ContentLength > 0 {
		n = min(n, resp.ContentLength)
	}
	b, _ := up.br.Peek(int(n))
	head.Write(b)
	_, _ = up.br.Discard(int(n))
	if _, err := c.Write(head.Bytes()); err != nil {
		return err
	}
	if resp.ContentLength < 0 { // to the host's end of the connection
		_, err := io.Copy(c, up.conn)
		return err
	}
	rest := resp.ContentLength - n
	copied, err := io.Copy(c, &io.LimitedReader{R: up.conn, N: rest})
	if err == nil && copied < rest {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// writeWhole sends the client resp, body and all, through Response.Write. The body is never closed: closing
// a body not read to its end reads the rest of it from the host, and Response.Write closes the body it was
// given even when writing to the client failed, so a download the client gave up on would go on, at the
// host's pace or without end, for nobody. After an error the caller drops the host's connection instead.
func writeWhole(c net.Conn, resp *http.Response) error {
	resp.Body = io.NopCloser(resp.Body)
	return resp.Write(c)
}

// response reads the host's response to req, passing interim (1xx) responses on to the client; interim
// says whether it passed one on.
func (p *Proxy) response(c net.Conn, up *upstream, req *http.Request) (_ *http.Response, interim bool, _ error) {
	for {
		up.head.n = maxResponseHead
		resp, err := http.ReadResponse(up.br, req)
		up.head.n = -1
		if err != nil {
			if up.head.over {
				err = errResponseHead
			}
			return nil, interim, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, interim, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", resp.Status)
		_ = resp.Header.Write(&b)
		b.WriteString("\r\n")
		interim = true
		if _, err := io.WriteString(c, b.String()); err != nil {
			return nil, interim, errClientGone
		}
	}
}
