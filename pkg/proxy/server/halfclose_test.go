package server

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// A client that ends its side of a tunnel to a host that never answers the close (nor sends anything)
// holds its slot for halfClosedTunnel at most, not until the run ends.
func TestHalfClosedTunnelEnds(t *testing.T) {
	defer func(d time.Duration) { halfClosedTunnel = d }(halfClosedTunnel)
	halfClosedTunnel = 100 * time.Millisecond
	done := make(chan struct{})
	port := originRaw(t, func(net.Conn) { <-done }) // never reads, never writes, never closes
	t.Cleanup(func() { close(done) })               // before originRaw's own, which waits for it
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+strconv.Itoa(port))})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "HTTP/1.1 200 Connection established\r\n" {
		t.Fatalf("%q %v", line, err)
	}
	c.Close()
	open := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.conns)
	}
	for i := 0; i < 500 && open() > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := open(); n != 0 {
		t.Errorf("%d connections still open", n)
	}
}
