package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
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
