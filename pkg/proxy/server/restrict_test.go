package server

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// An exact entry a request narrowed its server's wildcard to (proxy.AllowList.Restrict) keeps the wildcard's
// limits: its name may not lead to loopback, link-local or metadata addresses, as the wildcard's could
// not. The same exact entry written by the user who starts agentbash may.
func TestRestrictedExactEntry(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	r := resolver(map[string][]string{"evil.example.test": {"127.0.0.1"}, "meta.example.test": {"169.254.169.254"}})
	narrowed := allowList(t, "evil.example.test:"+ps, "meta.example.test:"+ps)
	narrowed.Restrict([]string{"evil.example.test:" + ps, "meta.example.test:" + ps, "*.other.test:" + ps})
	for _, p := range narrowed {
		if !p.Restricted || p.Wildcard {
			t.Fatalf("Restrict: %+v", p)
		}
	}
	d := &dialLog{}
	p, addr := startProxy(t, Config{Allow: narrowed, Resolver: r, Dial: d.dial})
	for _, name := range []string{"evil.example.test", "meta.example.test"} {
		resp, body := dial(t, addr).get("http://" + name + ":" + ps + "/")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "narrowed from a wildcard") {
			t.Errorf("GET %s, narrowed: %s %q", name, resp.Status, body)
		}
	}
	if got := d.take(); got != nil {
		t.Errorf("dialled %v", got)
	}
	if got := p.Denied(); len(got) != 2 {
		t.Errorf("Denied() = %v", got)
	}
	_, addr = startProxy(t, Config{Allow: allowList(t, "evil.example.test:"+ps), Resolver: r, Dial: d.dial})
	if resp, body := dial(t, addr).get("http://evil.example.test:" + ps + "/"); resp.StatusCode != 200 {
		t.Errorf("GET, the user's own exact entry: %s %q", resp.Status, body)
	}
}
