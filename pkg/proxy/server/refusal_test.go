package server

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/proxy"
)

// A host spelled as neither a name nor an IP address in full is refused, and counted as a refusal under the
// host as it came, made printable (ASCII, 253 bytes at most); the 400 says what the sandbox takes.
func TestUnreadableHostCounted(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	p, addr := startProxy(t, Config{Allow: allowList(t, "127.0.0.1:"+ps, "localhost:"+ps)})
	long := strings.Repeat("a", 300) + ".example"
	for _, request := range []string{
		"GET http://0x7f000001:" + ps + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://127.1:" + ps + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT 127.1:" + ps + " HTTP/1.1\r\n\r\n",
		"CONNECT 127.0.0.1.:" + ps + " HTTP/1.1\r\n\r\n",
		"GET http://" + long + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT \u00fc.example:443 HTTP/1.1\r\n\r\n",
	} {
		c := dial(t, addr)
		method, _, _ := strings.Cut(request, " ")
		c.send(request)
		resp, body := c.response(method)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "names or full IP addresses") ||
			!strings.Contains(resp.Header.Get("Proxy-Status"), "http_request_denied") {
			t.Errorf("%q: %s %q %v", request, resp.Status, body, resp.Header)
		}
	}
	want := []proxy.Denial{
		{Host: "0x7f000001", Port: port, Count: 1},
		{Host: "127.1", Port: port, Count: 2},
		{Host: "127.0.0.1.", Port: port, Count: 1},
		{Host: long[:253], Port: 80, Count: 1},
		{Host: "??.example", Port: 443, Count: 1},
	}
	if got := p.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("Denied() = %v,\nwant %v", got, want)
	}
}

// A refused loopback destination (127.0.0.0/8, ::1, localhost) is most likely a server the command started
// itself: the 403 says how to reach that one (directly, not through the proxy), and that an allowHosts entry
// would reach the host's port instead. Its first sentence stays what scripts match.
func TestLoopbackRefusalSaysHowToReachItsOwn(t *testing.T) {
	_, addr := startProxy(t, Config{Allow: allowList(t, "example.test:80")})
	for _, target := range []string{"127.0.0.1:5000", "127.0.0.2:5000", "[::1]:5000", "localhost:5000", "example.test:5000",
		"10.0.0.1:5000"} {
		c := dial(t, addr)
		c.send("CONNECT " + target + " HTTP/1.1\r\n\r\n")
		resp, body := c.response("CONNECT")
		if resp.StatusCode != http.StatusForbidden ||
			!strings.HasPrefix(body, "agentbash sandbox proxy: network access to "+target+" is blocked: it is not in sandbox.allowHosts. ") ||
			!strings.Contains(body, "--sandbox-allow-host "+target+", or sandbox.allowHosts in the config") ||
			strings.Count(body, "\n") != 1 {
			t.Errorf("CONNECT %s: %s %q", target, resp.Status, body)
		}
		loopback := !strings.HasPrefix(target, "example") && !strings.HasPrefix(target, "10.")
		says := strings.Contains(body, "curl --noproxy '*'") && strings.Contains(body, "NO_PROXY=127.0.0.1,localhost") &&
			strings.Contains(body, "port 5000 of the host's loopback")
		if says != loopback {
			t.Errorf("CONNECT %s: how to reach the command's own server said: %v, want %v: %q", target, says, loopback, body)
		}
	}
}
