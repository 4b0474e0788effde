package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// A host connection the proxy kept for the next request, which the host closed meanwhile (its idle
// timeout), is not the next request's undoing: it goes on a new connection.
func TestKeptConnectionClosedByHost(t *testing.T) {
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	closed := make(chan struct{}, 4)
	go func() {
		for n := 1; ; n++ {
			c, err := origin.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn, n int) {
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err == nil {
					body := fmt.Sprintf("answer %d", n)
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
				c.Close() // keep-alive said, and closed all the same: an idle timeout of zero
				closed <- struct{}{}
			}(c, n)
		}
	}()
	port := origin.Addr().(*net.TCPAddr).Port
	allow, _ := ParseAllowList([]string{fmt.Sprintf("127.0.0.1:%d", port)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := Serve(ln, Config{Allow: allow})
	defer p.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(c, "GET http://127.0.0.1:%d/%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, i, port)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "answer ") {
			t.Fatalf("request %d: %s %q", i, resp.Status, b)
		}
		<-closed // the host has closed the kept connection before the next request
	}
}
