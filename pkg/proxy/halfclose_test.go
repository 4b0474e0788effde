package proxy

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
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			defer c.Close() // never reads, never writes, never closes while the test runs
		}
	}()
	port := host.Addr().(*net.TCPAddr).Port
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
