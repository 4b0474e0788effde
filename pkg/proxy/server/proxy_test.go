package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/proxy"
)

// A bound on any one wait of these tests, so that a proxy that hangs fails the test instead of hanging it.
const stuck = 20 * time.Second

// startProxy serves a proxy as cfg says on a loopback listener; the test's end closes it.
func startProxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := Serve(ln, cfg)
	t.Cleanup(func() { p.Close() })
	return p, ln.Addr().String()
}

func allowList(t *testing.T, entries ...string) proxy.AllowList {
	t.Helper()
	l, err := proxy.ParseAllowList(entries)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// originHTTP is an HTTP server on 127.0.0.1 serving h; it returns the server's port.
func originHTTP(t *testing.T, h http.HandlerFunc) int {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// originRaw is a TCP server on 127.0.0.1 that runs serve on each connection; the test's end closes the
// listener and the connections, and waits for serve to return. It returns the port.
func originRaw(t *testing.T, serve func(net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(stuck))
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// client is one raw connection to the proxy.
type client struct {
	t  *testing.T
	c  *net.TCPConn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(stuck))
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c.(*net.TCPConn), br: bufio.NewReader(c)}
}

func (c *client) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.c, s); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// response reads a response to a request of method, and its whole body (none for a CONNECT's 200: what
// follows is the tunnel's).
func (c *client) response(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("read a response: %v", err)
	}
	if method == http.MethodConnect && resp.StatusCode == http.StatusOK {
		return resp, ""
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("read a response's body: %v", err)
	}
	return resp, string(b)
}

// ends says whether the proxy ended the connection: the next read is EOF or a reset, with nothing before it.
func (c *client) ends() bool {
	c.t.Helper()
	b, err := c.br.ReadByte()
	if err == nil {
		c.t.Errorf("the connection goes on: %q", b)
		return false
	}
	return !isTimeout(err)
}

// get is an absolute-form GET of url on the client's connection.
func (c *client) get(url string) (*http.Response, string) {
	c.t.Helper()
	c.send("GET " + url + " HTTP/1.1\r\nHost: ignored.example\r\n\r\n")
	return c.response("GET")
}

// echo answers with what it was asked: the method, host, request URI, headers and body.
func echo(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("X-Method", r.Method)
	w.Header().Set("X-Host", r.Host)
	w.Header().Set("X-Uri", r.RequestURI)
	w.Header().Set("X-Remote", r.RemoteAddr)
	w.Header().Set("X-Transfer-Encoding", strings.Join(r.TransferEncoding, ","))
	w.Header().Set("X-Length", strconv.Itoa(len(body)))
	var names []string
	for name := range r.Header {
		names = append(names, name)
	}
	w.Header().Set("X-Headers", strings.Join(names, ","))
	w.Header().Set("Content-Length", strconv.Itoa(len("echo:")+len(body)))
	io.WriteString(w, "echo:")
	w.Write(body)
}

func at(port int, path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}

func TestForwardAllowedAndDenied(t *testing.T) {
	port := originHTTP(t, echo)
	other := freePort(t)
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})

	c := dial(t, addr)
	c.send("GET " + at(port, "/a/b?c=d") + " HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic eDp5\r\n" +
		"Proxy-Connection: keep-alive\r\nX-Mine: 1\r\n\r\n")
	resp, body := c.response("GET")
	if resp.StatusCode != 200 || body != "echo:" {
		t.Fatalf("an allowed GET: %s %q", resp.Status, body)
	}
	for k, want := range map[string]string{"X-Method": "GET", "X-Uri": "/a/b?c=d",
		"X-Host": "127.0.0.1:" + strconv.Itoa(port)} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("the host got %s %q, want %q", k, got, want)
		}
	}
	if h := resp.Header.Get("X-Headers"); strings.Contains(h, "Proxy-") || !strings.Contains(h, "X-Mine") {
		t.Errorf("the host got the headers %s: the proxy's own headers go no further, the others do", h)
	}
	if p.Denied() != nil {
		t.Errorf("Denied() = %v after an allowed request", p.Denied())
	}

	deny := func(target, hp string) {
		t.Helper()
		c := dial(t, addr)
		c.send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := c.response("GET")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "network access to "+hp+" is blocked") ||
			!strings.Contains(body, "--sandbox-allow-host "+hp) {
			t.Errorf("GET %s: %s %q, want a 403 naming %s", target, resp.Status, body, hp)
		}
		if ps := resp.Header.Get("Proxy-Status"); !strings.Contains(ps, "http_request_denied") ||
			!strings.Contains(ps, strconv.Quote(hp)) {
			t.Errorf("GET %s: Proxy-Status %q", target, ps)
		}
		if !resp.Close || !c.ends() {
			t.Errorf("GET %s: the connection goes on after a refusal", target)
		}
	}
	deny(at(other, "/"), "127.0.0.1:"+strconv.Itoa(other))
	deny("http://Denied.Example./x", "denied.example:80")
	deny(at(other, "/again"), "127.0.0.1:"+strconv.Itoa(other))
	deny("http://[::1]:"+strconv.Itoa(port)+"/", "[::1]:"+strconv.Itoa(port)) // another address than the entry's
	want := []proxy.Denial{
		{Host: "127.0.0.1", Port: other, Count: 2},
		{Host: "denied.example", Port: 80, Count: 1},
		{Host: "::1", Port: port, Count: 1},
	}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v, want %v", got, want)
	}
	if got := p.Close(); !reflect.DeepEqual(got, want) {
		t.Errorf("Close() = %v, want %v", got, want)
	}
}

// A Go client with the proxy as its HTTP proxy: what HTTP_PROXY does to most programs.
func TestForwardGoClient(t *testing.T) {
	port := originHTTP(t, echo)
	_, addr := startProxy(t, Config{Allow: allowList(t, "localhost:"+strconv.Itoa(port))})
	proxyURL, err := url.Parse("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: stuck}
	for i := range 3 {
		resp, err := cl.Post("http://localhost:"+strconv.Itoa(port)+"/p", "text/plain", strings.NewReader("body "+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "echo:body "+strconv.Itoa(i) {
			t.Errorf("POST %d: %s %q", i, resp.Status, b)
		}
	}
	resp, err := cl.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/") // localhost is a name, not its address
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET by address with only the name allowed: %s", resp.Status)
	}
}

func TestConnect(t *testing.T) {
	// The host reads to EOF, then answers and closes: the client's half-close reaches it.
	readAll := originRaw(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		fmt.Fprintf(c, "got %d bytes: %s", len(b), b)
	})
	// The host speaks first and half-closes; then it reads what the client says, and reports it.
	said := make(chan string, 1)
	speaksFirst := originRaw(t, func(c net.Conn) {
		io.WriteString(c, "hello")
		c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(c)
		said <- string(b)
	})
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(readAll), "localhost:"+strconv.Itoa(speaksFirst))})

	c := dial(t, addr)
	// The first bytes come in the same write as the request: the proxy has them in its buffer.
	c.send("CONNECT 127.0.0.1:" + strconv.Itoa(readAll) + " HTTP/1.1\r\nHost: whatever\r\n\r\nearly ")
	if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	c.send("late")
	c.c.CloseWrite()
	if b, err := io.ReadAll(c.br); err != nil || string(b) != "got 10 bytes: early late" {
		t.Errorf("through the tunnel: %q, %v", b, err)
	}

	c = dial(t, addr)
	c.send("CONNECT localhost:" + strconv.Itoa(speaksFirst) + " HTTP/1.1\r\n\r\n")
	if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	if b, err := io.ReadAll(c.br); err != nil || string(b) != "hello" { // the host's half-close reaches the client
		t.Errorf("from the host: %q, %v", b, err)
	}
	c.send("and goodbye") // the client can still write
	c.c.CloseWrite()
	if s := <-said; s != "and goodbye" {
		t.Errorf("the host got %q", s)
	}

	for _, target := range []string{"127.0.0.1:" + strconv.Itoa(speaksFirst), "localhost:" + strconv.Itoa(readAll),
		"github.com:443", "github.com:443"} {
		c := dial(t, addr)
		c.send("CONNECT " + target + " HTTP/1.1\r\n\r\n")
		resp, body := c.response("CONNECT")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, target) || !c.ends() {
			t.Errorf("CONNECT %s: %s %q, want a 403 naming it, then the end", target, resp.Status, body)
		}
	}
	want := []proxy.Denial{
		{Host: "127.0.0.1", Port: speaksFirst, Count: 1},
		{Host: "localhost", Port: readAll, Count: 1},
		{Host: "github.com", Port: 443, Count: 2},
	}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v, want %v", got, want)
	}
}

// An HTTP request inside a tunnel: what `curl -p` (--proxytunnel) does.
func TestConnectThenHTTP(t *testing.T) {
	port := originHTTP(t, echo)
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	c := dial(t, addr)
	c.send("CONNECT 127.0.0.1:" + strconv.Itoa(port) + " HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) + "\r\n\r\n")
	if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	for i := range 2 {
		c.send("POST /in HTTP/1.1\r\nHost: inside.example\r\nContent-Length: 3\r\n\r\nabc")
		resp, body := c.response("POST")
		if resp.StatusCode != 200 || body != "echo:abc" || resp.Header.Get("X-Host") != "inside.example" {
			t.Errorf("request %d in the tunnel: %s %q %v", i, resp.Status, body, resp.Header)
		}
	}
}

// One client connection, requests to two allowed hosts in turn and one refused: each request is checked on
// its own, and a host's connection is kept for its next request.
func TestKeepAlive(t *testing.T) {
	a := originHTTP(t, echo)
	b := originHTTP(t, echo)
	denied := originHTTP(t, echo)
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(a), "localhost:"+strconv.Itoa(b))})
	c := dial(t, addr)
	var remotes []string
	for _, u := range []string{at(a, "/1"), at(a, "/2"), "http://localhost:" + strconv.Itoa(b) + "/3", at(a, "/4")} {
		resp, body := c.get(u)
		if resp.StatusCode != 200 || body != "echo:" || resp.Close {
			t.Fatalf("GET %s: %s %q close=%v", u, resp.Status, body, resp.Close)
		}
		if want := u[strings.LastIndexByte(u, '/'):]; resp.Header.Get("X-Uri") != want {
			t.Errorf("GET %s reached %s", u, resp.Header.Get("X-Uri"))
		}
		remotes = append(remotes, resp.Header.Get("X-Remote"))
	}
	if remotes[0] != remotes[1] || remotes[1] == remotes[3] {
		t.Errorf("the hosts saw the proxy from %v: the connection to a host is kept while the requests go to it", remotes)
	}
	// Pipelined: the second request is sent before the first's answer.
	c.send("GET " + at(a, "/p1") + " HTTP/1.1\r\nHost: x\r\n\r\nGET http://localhost:" + strconv.Itoa(b) +
		"/p2 HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, want := range []string{"/p1", "/p2"} {
		if resp, _ := c.response("GET"); resp.StatusCode != 200 || resp.Header.Get("X-Uri") != want {
			t.Errorf("pipelined %s: %s %s", want, resp.Status, resp.Header.Get("X-Uri"))
		}
	}
	resp, _ := c.get(at(denied, "/5"))
	if resp.StatusCode != http.StatusForbidden || !c.ends() {
		t.Errorf("a refused request on a kept connection: %s", resp.Status)
	}
	if got := p.Denied(); len(got) != 1 || got[0].Port != denied {
		t.Errorf("Denied() = %v", got)
	}
	// A request that asks for the connection's end gets it, after its response.
	c = dial(t, addr)
	c.send("GET " + at(a, "/") + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp, _ := c.response("GET"); resp.StatusCode != 200 || !resp.Close || !c.ends() {
		t.Errorf("Connection: close: %s close=%v", resp.Status, resp.Close)
	}
}

func TestBodies(t *testing.T) {
	port := originHTTP(t, echo)
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	c := dial(t, addr)
	big := strings.Repeat("0123456789", 100_000) // 1 MB, more than any buffer on the way

	c.send("PUT " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	if resp, body := c.response("PUT"); body != "echo:hello" || resp.Header.Get("X-Method") != "PUT" {
		t.Errorf("a Content-Length body: %s %q", resp.Status, body)
	}
	go io.WriteString(c.c, "POST "+at(port, "/")+" HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(len(big))+"\r\n\r\n"+big)
	if resp, body := c.response("POST"); body != "echo:"+big {
		t.Errorf("a 1 MB body: %s, %d bytes back", resp.Status, len(body))
	}
	c.send("POST " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n")
	if resp, body := c.response("POST"); body != "echo:hello, world" || resp.Header.Get("X-Transfer-Encoding") != "chunked" {
		t.Errorf("a chunked body: %s %q %v", resp.Status, body, resp.Header)
	}

	// HEAD: the response says how long the body would be, and has none; the connection goes on.
	c.send("HEAD " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := c.response("HEAD")
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("X-Method") != "HEAD" {
		t.Errorf("HEAD: %s %q", resp.Status, body)
	}
	c.send("POST " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
	if resp, body := c.response("POST"); body != "echo:ok" {
		t.Errorf("after a HEAD: %s %q", resp.Status, body)
	}
}

// Expect: 100-continue: the client waits for the 100 before it sends the body, as curl does for a large one.
func TestExpectContinue(t *testing.T) {
	port := originHTTP(t, echo)
	hints := originHTTP(t, func(w http.ResponseWriter, r *http.Request) { // an interim response of its own
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		echo(w, r)
	})
	refuses := originHTTP(t, func(w http.ResponseWriter, r *http.Request) { // answers without reading the body
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port), "127.0.0.1:"+strconv.Itoa(refuses),
		"127.0.0.1:"+strconv.Itoa(hints))})
	c := dial(t, addr)
	for i := range 2 {
		c.send("POST " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
		// Far below the second a client waits before it sends its body anyway (curl's --expect100-timeout):
		// a 100 that comes later than that is no use.
		_ = c.c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "POST"})
		if err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("request %d: want a 100 Continue before the body, got %v, %v", i, resp, err)
		}
		_ = c.c.SetReadDeadline(time.Now().Add(stuck))
		c.send("body")
		if resp, body := c.response("POST"); resp.StatusCode != 200 || body != "echo:body" {
			t.Errorf("request %d: %s %q", i, resp.Status, body)
		}
	}
	c.send("POST " + at(hints, "/") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
	if resp, _ := c.response("POST"); resp.StatusCode != http.StatusEarlyHints || resp.Header.Get("Link") == "" {
		t.Errorf("an interim response: %s %v", resp.Status, resp.Header)
	}
	if resp, body := c.response("POST"); resp.StatusCode != 200 || body != "echo:body" {
		t.Errorf("after an interim response: %s %q", resp.Status, body)
	}
	// A host that answers at once: the client gets its answer, and no body is needed.
	c.send("POST " + at(refuses, "/") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := c.response("POST"); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a refused body: %s", resp.Status)
	}
}

// upgrader answers an `Upgrade: echo` with a 101, then says hello and echoes lines in upper case.
func upgrader(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "echo" || !strings.EqualFold(r.Header.Get("Connection"), "upgrade") {
		http.Error(w, "no upgrade asked for", http.StatusBadRequest)
		return
	}
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nhello\n")
	rw.Flush()
	for {
		line, err := rw.ReadString('\n')
		if err != nil {
			return
		}
		rw.WriteString(strings.ToUpper(line))
		rw.Flush()
	}
}

func TestUpgrade(t *testing.T) {
	port := originHTTP(t, upgrader)
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	c := dial(t, addr)
	// What the client says after the request, in the same write: the new protocol's first bytes.
	c.send("GET " + at(port, "/ws") + " HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nfirst\n")
	resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != "echo" {
		t.Fatalf("an upgrade: %v, %v", resp, err)
	}
	for _, want := range []string{"hello\n", "FIRST\n"} {
		if line, err := c.br.ReadString('\n'); line != want {
			t.Fatalf("after the 101: %q, %v, want %q", line, err, want)
		}
	}
	c.send("second\n")
	if line, err := c.br.ReadString('\n'); line != "SECOND\n" {
		t.Fatalf("after the 101: %q, %v", line, err)
	}
	c.c.CloseWrite()
	if rest, err := io.ReadAll(c.br); err != nil || len(rest) != 0 {
		t.Errorf("the end: %q, %v", rest, err)
	}
}

// Requests the proxy answers itself, and hosts that do not answer as they should.
func TestErrors(t *testing.T) {
	port := originHTTP(t, echo)
	hugeHead := originRaw(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Filler: " + strings.Repeat("x", 1000) + "\r\n"
		io.WriteString(c, strings.Repeat(line, 300)+"Content-Length: 0\r\n\r\n") // 300 KB of head
	})
	hangsUp := originRaw(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
	})
	closed := freePort(t)
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port),
		"127.0.0.1:"+strconv.Itoa(hugeHead), "127.0.0.1:"+strconv.Itoa(hangsUp), "127.0.0.1:"+strconv.Itoa(closed))})

	cases := []struct {
		name    string
		request string
		status  int
		says    string
	}{
		{"origin-form", "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) + "\r\n\r\n", 400, "absolute-form"},
		{"https", "GET https://127.0.0.1:" + strconv.Itoa(port) + "/ HTTP/1.1\r\nHost: x\r\n\r\n", 501, "CONNECT"},
		{"ftp", "GET ftp://127.0.0.1:" + strconv.Itoa(port) + "/ HTTP/1.1\r\nHost: x\r\n\r\n", 501, "only http://"},
		{"malformed", "GARBAGE\r\n\r\n", 400, "malformed"},
		{"bad header", "GET " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, "malformed"},
		{"an address a C resolver would guess", "GET http://127.1:" + strconv.Itoa(port) + "/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "127.0.0.1"},
		{"a zone", "GET http://[fe80::1%25lo]:80/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "zone"},
		{"port 0", "GET http://127.0.0.1:0/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, "port"},
		{"CONNECT without a port", "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", 400, "HOST:PORT"},
		{"CONNECT to a path", "CONNECT /x HTTP/1.1\r\n\r\n", 400, "HOST:PORT"},
		{"CONNECT port 0080", "CONNECT 127.0.0.1:0080 HTTP/1.1\r\n\r\n", 400, "port"},
		{"a head over 64 KiB", "GET " + at(port, "/") + " HTTP/1.1\r\nHost: x\r\nX-Big: " +
			strings.Repeat("b", 70<<10) + "\r\n\r\n", 431, "64 KiB"},
		{"a line over 64 KiB", "GET " + at(port, "/"+strings.Repeat("p", 70<<10)) + " HTTP/1.1\r\n\r\n", 431, "64 KiB"},
		{"a response head over 256 KiB", "GET " + at(hugeHead, "/") + " HTTP/1.1\r\nHost: x\r\n\r\n", 502, "over 256 KiB"},
		{"no answer", "GET " + at(hangsUp, "/") + " HTTP/1.1\r\nHost: x\r\n\r\n", 502, "gave no answer"},
		{"nobody listens (GET)", "GET " + at(closed, "/") + " HTTP/1.1\r\nHost: x\r\n\r\n", 502, "cannot connect"},
		{"nobody listens (CONNECT)", "CONNECT 127.0.0.1:" + strconv.Itoa(closed) + " HTTP/1.1\r\n\r\n", 502, "cannot connect"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			go io.WriteString(c.c, tc.request) // the proxy may stop reading before the end
			method, _, _ := strings.Cut(tc.request, " ")
			resp, body := c.response(method)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) {
				t.Errorf("%s %q, want %d saying %q", resp.Status, body, tc.status, tc.says)
			}
			if !resp.Close || !c.ends() {
				t.Error("the connection goes on")
			}
		})
	}
	// Of these only the hosts spelled as neither a name nor an address are refusals (TestUnreadableHostCounted).
	want := []proxy.Denial{{Host: "127.1", Port: port, Count: 1}, {Host: "fe80::1%lo", Port: 80, Count: 1}}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v, want %v", got, want)
	}
}

// fakeResolver answers each name with its answers in turn, the last one again once they run out. Like Go's
// resolver with resolv.conf's `search corp.test` (and ndots 1), a name asked without its trailing dot that
// has no answer is tried again under corp.test; asked keeps the names as asked.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
	asked   []string
}

func resolver(answers map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, list := range answers {
		for _, one := range list {
			var addrs []netip.Addr
			for a := range strings.FieldsSeq(one) {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
			r.answers[name] = append(r.answers[name], addrs)
		}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	name, rooted := strings.CutSuffix(host, ".")
	tries := []string{name}
	if !rooted {
		tries = append(tries, name+".corp.test")
	}
	for _, name := range tries {
		if list := r.answers[name]; len(list) > 0 {
			n := r.calls[name]
			r.calls[name]++
			return list[min(n, len(list)-1)], nil
		}
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// dialLog is a Config.Dial that dials for real and keeps what it was asked to dial.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	return (&net.Dialer{}).DialContext(ctx, network, address)
}

func (d *dialLog) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.addrs
	d.addrs = nil
	return out
}

func TestResolvedOnceDialledAsResolved(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	// The second answer is another address (DNS rebinding): nothing listens on it.
	r := resolver(map[string][]string{"app.test": {"127.0.0.1", "127.0.0.2"}})
	d := &dialLog{}
	p, addr := startProxy(t, Config{Allow: allowList(t, "app.test:"+ps), Resolver: r, Dial: d.dial})

	c := dial(t, addr)
	c.send("GET http://App.Test.:" + ps + "/x HTTP/1.1\r\nHost: 127.0.0.2:" + ps + "\r\n\r\n")
	resp, _ := c.response("GET")
	if resp.StatusCode != 200 || resp.Header.Get("X-Host") != "App.Test.:"+ps {
		t.Errorf("GET: %s, the host got Host %q: want the URL's host", resp.Status, resp.Header.Get("X-Host"))
	}
	if got := d.take(); !reflect.DeepEqual(got, []string{"127.0.0.1:" + ps}) || r.count("app.test") != 1 {
		t.Errorf("dialled %v after %d resolutions, want 127.0.0.1:%s after one", got, r.count("app.test"), ps)
	}
	resp, _ = c.get("http://app.test:" + ps + "/y") // the kept connection: no resolution
	if resp.StatusCode != 200 || r.count("app.test") != 1 || d.take() != nil {
		t.Errorf("a second request to the same host: %s, %d resolutions", resp.Status, r.count("app.test"))
	}

	// A new connection resolves again, and dials only what that resolution gave.
	c = dial(t, addr)
	c.send("CONNECT app.test:" + ps + " HTTP/1.1\r\n\r\n")
	resp, body := c.response("CONNECT")
	if resp.StatusCode != http.StatusBadGateway || r.count("app.test") != 2 {
		t.Errorf("CONNECT after the answer changed: %s %q, %d resolutions", resp.Status, body, r.count("app.test"))
	}
	if got := d.take(); !reflect.DeepEqual(got, []string{"127.0.0.2:" + ps}) {
		t.Errorf("dialled %v, want only 127.0.0.2:%s", got, ps)
	}
	if p.Denied() != nil {
		t.Errorf("Denied() = %v: a host that does not answer is not a refusal", p.Denied())
	}
}

func TestWildcardNotToTheHostsOwn(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	r := resolver(map[string][]string{
		"lo4.evil.test":    {"127.0.0.1"},
		"lo6.evil.test":    {"::1"},
		"mapped.evil.test": {"::ffff:127.0.0.1"},
		"meta.evil.test":   {"169.254.169.254"},
		"ll6.evil.test":    {"fe80::1"},
		"zero.evil.test":   {"0.0.0.0"},
		"zero6.evil.test":  {"::"},
		"mixed.evil.test":  {"0.0.0.0 127.0.0.2 169.254.169.254 127.0.0.1"},
		"aws6.evil.test":   {"fd00:ec2::254"},
		"ali.evil.test":    {"100.100.100.200"},
		"gcp6.evil.test":   {"fd20:ce::254"},
	})
	d := &dialLog{}
	p, addr := startProxy(t, Config{Allow: allowList(t, "*.evil.test:"+ps), Resolver: r, Dial: d.dial})
	names := []string{"lo4.evil.test", "lo6.evil.test", "mapped.evil.test", "meta.evil.test", "ll6.evil.test",
		"zero.evil.test", "zero6.evil.test", "mixed.evil.test", "aws6.evil.test", "ali.evil.test", "gcp6.evil.test"}
	var want []proxy.Denial
	for _, name := range names {
		for _, method := range []string{"GET", "CONNECT"} {
			c := dial(t, addr)
			if method == "GET" {
				c.send("GET http://" + name + ":" + ps + "/ HTTP/1.1\r\nHost: x\r\n\r\n")
			} else {
				c.send("CONNECT " + name + ":" + ps + " HTTP/1.1\r\n\r\n")
			}
			resp, body := c.response(method)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "only an exact entry") {
				t.Errorf("%s %s, only a wildcard allows it: %s %q", method, name, resp.Status, body)
			}
		}
		want = append(want, proxy.Denial{Host: name, Port: port, Count: 2})
	}
	if got := d.take(); got != nil {
		t.Errorf("dialled %v", got)
	}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v, want %v", got, want)
	}

	// The same names allowed by an exact entry reach loopback, and never an unspecified address.
	exact := []string{"*.evil.test:" + ps}
	for _, name := range names {
		exact = append(exact, name+":"+ps)
	}
	p, addr = startProxy(t, Config{Allow: allowList(t, exact...), Resolver: r, Dial: d.dial})
	for _, name := range []string{"lo4.evil.test", "lo6.evil.test", "mapped.evil.test", "mixed.evil.test"} {
		c := dial(t, addr)
		if resp, body := c.get("http://" + name + ":" + ps + "/"); resp.StatusCode != 200 && !strings.Contains(body, "cannot connect") {
			t.Errorf("GET %s with an exact entry: %s %q", name, resp.Status, body)
		}
	}
	wantDials := []string{"127.0.0.1:" + ps, "[::1]:" + ps, "127.0.0.1:" + ps, "127.0.0.2:" + ps,
		"169.254.169.254:" + ps}
	if got := d.take(); len(got) < len(wantDials) || !reflect.DeepEqual(got[:len(wantDials)], wantDials) {
		t.Errorf("dialled %v, want %v first", got, wantDials)
	}
	for _, name := range []string{"zero.evil.test", "zero6.evil.test"} {
		c := dial(t, addr)
		if resp, _ := c.get("http://" + name + ":" + ps + "/"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s, an unspecified address: %s", name, resp.Status)
		}
	}
	if got := d.take(); got != nil {
		t.Errorf("dialled %v", got)
	}
}

func TestAddressesInOrder(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	// 127.0.0.2 and 127.0.0.3 are loopback too, but nothing listens there: each refuses at once.
	r := resolver(map[string][]string{"multi.test": {"127.0.0.2 127.0.0.3 127.0.0.1 127.0.0.4"}, "none.test": {""}})
	d := &dialLog{}
	p, addr := startProxy(t, Config{Allow: allowList(t, "multi.test:"+ps, "none.test:"+ps, "unknown.test:"+ps),
		Resolver: r, Dial: d.dial})
	c := dial(t, addr)
	if resp, _ := c.get("http://multi.test:" + ps + "/"); resp.StatusCode != 200 {
		t.Errorf("GET: %s", resp.Status)
	}
	want := []string{"127.0.0.2:" + ps, "127.0.0.3:" + ps, "127.0.0.1:" + ps}
	if got := d.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("dialled %v, want %v", got, want)
	}
	for _, name := range []string{"none.test", "unknown.test"} {
		c := dial(t, addr)
		if resp, body := c.get("http://" + name + ":" + ps + "/"); resp.StatusCode != http.StatusBadGateway ||
			!strings.Contains(body, "cannot resolve "+name) {
			t.Errorf("GET %s: %s %q", name, resp.Status, body)
		}
	}
	if d.take() != nil || p.Denied() != nil {
		t.Errorf("a name without addresses: dialled, or counted as refused: %v", p.Denied())
	}
}

// goroutinesBack waits until no more goroutines run than before, and fails with their stacks if they do not.
func goroutinesBack(t *testing.T, before int) {
	t.Helper()
	for end := time.Now().Add(stuck); runtime.NumGoroutine() > before; {
		if time.Now().After(end) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClose(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() { goroutinesBack(t, before) }) // the last clean-up: after the hosts' and the clients'
	hostEnd := make(chan error, 2)
	tunnelHost := originRaw(t, func(c net.Conn) {
		_, err := io.ReadAll(c)
		hostEnd <- err
	})
	started := make(chan struct{}, 1)
	slowHost := originHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done() // until the proxy's connection ends
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	p := Serve(ln, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(tunnelHost), "127.0.0.1:"+strconv.Itoa(slowHost))})

	denied := dial(t, addr)
	if resp, _ := denied.get("http://nope.example/"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a refused GET: %s", resp.Status)
	}
	tunnel := dial(t, addr)
	tunnel.send("CONNECT 127.0.0.1:" + strconv.Itoa(tunnelHost) + " HTTP/1.1\r\n\r\n")
	if resp, _ := tunnel.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	tunnel.send("some bytes")
	forward := dial(t, addr)
	forward.send("GET " + at(slowHost, "/") + " HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	idle := dial(t, addr) // a connection that has not sent anything

	if got, want := p.Close(), []proxy.Denial{{Host: "nope.example", Port: 80, Count: 1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Close() = %v, want %v", got, want)
	}
	for name, c := range map[string]*client{"a tunnel": tunnel, "a forward": forward, "an idle connection": idle} {
		if !c.ends() {
			t.Errorf("%s goes on after Close", name)
		}
	}
	if err := <-hostEnd; err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Errorf("the tunnel's host: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the proxy's listener takes connections after Close")
	}
	if got := p.Close(); len(got) != 1 {
		t.Errorf("Close() again = %v", got)
	}
}

// Past MaxConns client connections, the next one waits in the listen queue until one ends, then is served.
func TestMaxConns(t *testing.T) {
	echoBack := originRaw(t, func(c net.Conn) { io.Copy(c, c) })
	connect := "CONNECT 127.0.0.1:" + strconv.Itoa(echoBack) + " HTTP/1.1\r\n\r\n"
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(echoBack))})
	open := make([]*client, MaxConns)
	for i := range open {
		c := dial(t, addr)
		c.send(connect)
		if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
			t.Fatalf("tunnel %d: %s", i, resp.Status)
		}
		c.send("x")
		if b, err := c.br.ReadByte(); b != 'x' {
			t.Fatalf("tunnel %d: %q, %v", i, b, err)
		}
		open[i] = c
	}
	extra := dial(t, addr) // the kernel's listen queue takes it
	extra.send(connect)
	// Not served while the others are open: nothing to read for a while (a slow proxy would pass this
	// wrongly, never fail it).
	_ = extra.c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if b, err := extra.br.ReadByte(); !isTimeout(err) {
		t.Fatalf("a connection past MaxConns served at once: %q, %v", b, err)
	}
	p.mu.Lock()
	tracked := len(p.conns)
	p.mu.Unlock()
	if tracked != 2*MaxConns {
		t.Errorf("%d connections open, want %d (each tunnel's two)", tracked, 2*MaxConns)
	}
	_ = extra.c.SetReadDeadline(time.Now().Add(stuck))
	open[0].c.Close()
	if resp, _ := extra.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("the waiting connection, once one ended: %s", resp.Status)
	}
	extra.send("y")
	if b, err := extra.br.ReadByte(); b != 'y' {
		t.Fatalf("the waiting connection's tunnel: %q, %v", b, err)
	}
}

// Past proxy.MaxDenied distinct refused host:ports, the rest are counted in one entry; the order is the first
// refusals'.
func TestMaxDenied(t *testing.T) {
	p, addr := startProxy(t, Config{Allow: allowList(t, "allowed.example:80")})
	refuse := func(host string) {
		t.Helper()
		c := dial(t, addr)
		if resp, _ := c.get("http://" + host + "/"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("GET %s: %s", host, resp.Status)
		}
	}
	host := func(i int) string { return "h" + strconv.Itoa(i) + ".example" }
	for i := range proxy.MaxDenied + 5 {
		refuse(host(i))
	}
	refuse(host(3))                      // a listed one again: its count
	refuse(host(proxy.MaxDenied + 1))    // an unlisted one again: the others' count
	refuse(host(proxy.MaxDenied + 1000)) // a new one: the others' count
	var want []proxy.Denial
	for i := range proxy.MaxDenied {
		want = append(want, proxy.Denial{Host: host(i), Port: 80, Count: 1})
	}
	want[3].Count = 2
	want = append(want, proxy.Denial{Host: proxy.OtherHosts, Port: 0, Count: 7})
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v,\nwant %v", got, want)
	}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() again = %v", got)
	}
}

// An unspecified address is never dialled, even when a proxy.AllowList made by hand (not by proxy.ParsePattern, which
// refuses it) names it: on Linux it reaches the host's loopback.
func TestUnspecifiedLiteralNeverDialled(t *testing.T) {
	port := originHTTP(t, echo)
	d := &dialLog{}
	p, addr := startProxy(t, Config{Allow: proxy.AllowList{{Host: "0.0.0.0", Port: port}, {Host: "::", Port: port}}, Dial: d.dial})
	for _, host := range []string{"0.0.0.0", "[::]", "[::ffff:0.0.0.0]"} {
		c := dial(t, addr)
		if resp, body := c.get("http://" + host + ":" + strconv.Itoa(port) + "/"); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %s %q", host, resp.Status, body)
		}
	}
	if got := d.take(); got != nil {
		t.Errorf("dialled %v", got)
	}
	if got := p.Denied(); len(got) != 2 || got[0].Host != "0.0.0.0" || got[0].Count != 2 || got[1].Host != "::" {
		t.Errorf("Denied() = %v", got)
	}
}

// A host that closes its connection after a response, without saying so (its keep-alive time ran out): the
// next request on the client's connection goes on a new one, not to the closed one (a 502).
func TestKeptConnectionClosedByHost(t *testing.T) {
	closed := make(chan string, 4)
	oneShot := originRaw(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(req.URL.Path))+"\r\n\r\n"+req.URL.Path)
		c.Close()
		closed <- req.URL.Path
	})
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(oneShot))})
	c := dial(t, addr)
	for _, path := range []string{"/1", "/2", "/3"} {
		resp, body := c.get(at(oneShot, path))
		if resp.StatusCode != 200 || body != path {
			t.Fatalf("GET %s: %s %q", path, resp.Status, body)
		}
		<-closed // the host has closed it before the next request
	}
}

// A host that sends what nobody asked for after a response (here a second response): the connection is not
// used again, or the next request would get that as its answer.
func TestKeptConnectionWithUnaskedBytes(t *testing.T) {
	sent := make(chan bool, 4)
	chatty := originRaw(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(req.URL.Path))+"\r\n\r\n"+req.URL.Path)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
			sent <- true
		}
	})
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(chatty))})
	c := dial(t, addr)
	for _, path := range []string{"/1", "/2", "/3"} {
		if resp, body := c.get(at(chatty, path)); resp.StatusCode != 200 || body != path {
			t.Fatalf("GET %s: %s %q", path, resp.Status, body)
		}
		<-sent
	}
}

// An HTTP/1.0 client knows no chunked bodies: a host's chunked response reaches it as a body that ends
// with the connection.
func TestHTTP10Client(t *testing.T) {
	port := originHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part one, ")
		w.(http.Flusher).Flush() // no length known: chunked
		io.WriteString(w, "part two")
	})
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	c := dial(t, addr)
	c.send("GET " + at(port, "/") + " HTTP/1.0\r\n\r\n")
	b, err := io.ReadAll(c.br)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(b), "\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || strings.Contains(strings.ToLower(head), "transfer-encoding") ||
		body != "part one, part two" {
		t.Errorf("to an HTTP/1.0 client: %q", b)
	}
	c = dial(t, addr) // to an HTTP/1.1 one, the chunks go as they came
	resp, body := c.get(at(port, "/"))
	if len(resp.TransferEncoding) != 1 || body != "part one, part two" || resp.Close {
		t.Errorf("to an HTTP/1.1 client: %v %q close=%v", resp.TransferEncoding, body, resp.Close)
	}
}
