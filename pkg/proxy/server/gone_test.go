package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// endless is a host that answers each connection's request with head, then chunks of a body that never
// ends, as fast as it can, until a write fails; it reports that error.
func endless(t *testing.T, head string) (port int, ended chan error) {
	t.Helper()
	ended = make(chan error, 4)
	chunk := "4000\r\n" + strings.Repeat("d", 0x4000) + "\r\n"
	port = originRaw(t, func(c net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, err := io.WriteString(c, head)
		for err == nil {
			_, err = io.WriteString(c, chunk)
		}
		ended <- err
	})
	return port, ended
}

// hostEnds waits for what a host reports when its connection ends: an end the proxy made, not the test's
// deadline (originRaw's) running out.
func hostEnds(t *testing.T, what string, ended chan error) {
	t.Helper()
	if err := <-ended; err == nil || isTimeout(err) {
		t.Errorf("%s: the host's connection was not ended by the proxy (%v)", what, err)
	}
}

// A client that gives up on a download: the proxy ends the host's connection rather than read the rest of
// the body (here without end) for nobody, however the body reaches the client.
func TestAbandonedDownloadNotDrained(t *testing.T) {
	port, ended := endless(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	for _, proto := range []string{"HTTP/1.1", "HTTP/1.0"} { // chunks as they come; decoded to the end
		c := dial(t, addr)
		c.send("GET " + at(port, "/") + " " + proto + "\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
			t.Fatalf("%s: the body: %v", proto, err)
		}
		c.c.Close() // unread bytes left: a reset
		hostEnds(t, proto, ended)
	}
}

// stalls is a host that reads a request (its body too), sends what, and then nothing: it waits for its
// connection's end and reports it (nil for an EOF). Its connections outlast the clients' deadline (stuck),
// so that a client the proxy kept waiting is not freed by the host's deadline.
func stalls(t *testing.T, what string) (port int, ended chan error) {
	t.Helper()
	ended = make(chan error, 4)
	port = originRaw(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(2 * stuck))
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Header.Get("Expect") == "" {
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				return
			}
		}
		if _, err := io.WriteString(c, what); err != nil {
			return
		}
		_, err = io.Copy(io.Discard, br)
		if err == nil {
			err = io.EOF
		}
		select {
		case ended <- err:
		default: // nobody asks
		}
	})
	return port, ended
}

// A client that gives up while the host has not answered, or has stopped in the middle of its body (a
// long-poll, a stalled download): the proxy notices the client's end and ends the host's connection, and
// the client's slot is free.
func TestClientGoneWhileAwaited(t *testing.T) {
	cases := []struct {
		name    string
		host    string // what the host sends before it stalls
		request string
		reads   string // what the client reads before it leaves: "" nothing, "head", "100" an interim response
	}{
		{"no answer", "", "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", ""},
		{"no answer to a body", "", "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", ""},
		{"no answer to chunks", "", "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", ""},
		{"no answer, HTTP/1.0", "", "GET %s HTTP/1.0\r\n\r\n", ""},
		{"a 100 Continue, and no body sent", "HTTP/1.1 100 Continue\r\n\r\n",
			"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", "100"},
		{"half a body of known length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", "head"},
		{"a body to the end", "HTTP/1.1 200 OK\r\n\r\nhello", "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", "head"},
		{"chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", "head"},
		{"chunks, HTTP/1.0", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "GET %s HTTP/1.0\r\n\r\n", "head"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port, ended := stalls(t, tc.host)
			_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
			c := dial(t, addr)
			c.send(strings.Replace(tc.request, "%s", at(port, "/"), 1))
			switch tc.reads {
			case "head":
				if _, err := http.ReadResponse(c.br, &http.Request{Method: "GET"}); err != nil {
					t.Fatal(err)
				}
			case "100":
				if resp, err := http.ReadResponse(c.br, &http.Request{Method: "POST"}); err != nil || resp.StatusCode != 100 {
					t.Fatalf("want a 100 Continue: %v, %v", resp, err)
				}
			}
			c.c.Close()
			hostEnds(t, tc.name, ended)
		})
	}
}

// A client that leaves a tunnel: the host's connection ends too, whether the host sends (the client's
// reset ends it) or reads (the client's end reaches it, and it closes).
func TestClientGoneFromTunnel(t *testing.T) {
	sends, sent := endless(t, "")
	reads := make(chan error, 1)
	readsThenCloses := originRaw(t, func(c net.Conn) {
		_, err := io.Copy(io.Discard, c)
		reads <- err
	})
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(sends), "127.0.0.1:"+strconv.Itoa(readsThenCloses))})
	c := dial(t, addr)
	c.send("CONNECT 127.0.0.1:" + strconv.Itoa(sends) + " HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n")
	if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	if _, err := io.CopyN(io.Discard, c.br, 1<<20); err != nil {
		t.Fatal(err)
	}
	c.c.Close()
	hostEnds(t, "a host that sends", sent)

	c = dial(t, addr)
	c.send("CONNECT 127.0.0.1:" + strconv.Itoa(readsThenCloses) + " HTTP/1.1\r\n\r\n")
	if resp, _ := c.response("CONNECT"); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	c.send("bytes")
	c.c.Close()
	if err := <-reads; err != nil {
		t.Errorf("a host that reads: %v, want the client's end", err)
	}
}

// More abandoned requests than MaxConns, to a host that never answers: each frees its slot, and a request
// after them is served (not left in the listen queue).
func TestAbandonedRequestsFreeSlots(t *testing.T) {
	never, _ := stalls(t, "")
	port := originHTTP(t, echo)
	_, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(never), "127.0.0.1:"+strconv.Itoa(port))})
	for i := range MaxConns + 2 {
		c := dial(t, addr)
		c.send("GET " + at(never, "/"+strconv.Itoa(i)) + " HTTP/1.1\r\nHost: x\r\n\r\n")
		c.c.Close()
	}
	c := dial(t, addr)
	if resp, body := c.get(at(port, "/")); resp.StatusCode != 200 || body != "echo:" {
		t.Errorf("after %d abandoned requests: %s %q", MaxConns+2, resp.Status, body)
	}
}
