package proxy

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// A name of several labels is looked up fully qualified: without an answer of its own it is not tried under
// resolv.conf's search domains (pypi.org must not reach pypi.org.corp.test). A name of one label is asked as
// it is: a short name means the search list, and /etc/hosts keeps localhost without a dot.
func TestLookedUpFullyQualified(t *testing.T) {
	port := originHTTP(t, echo)
	ps := strconv.Itoa(port)
	r := resolver(map[string][]string{"pypi.org.corp.test": {"127.0.0.1"}, "files.pypi.org.corp.test": {"127.0.0.1"},
		"intranet.corp.test": {"127.0.0.1"}})
	d := &dialLog{}
	_, addr := startProxy(t, Config{Allow: allowList(t, "pypi.org:"+ps, "*.pypi.org:"+ps, "intranet:"+ps),
		Resolver: r, Dial: d.dial})
	for _, name := range []string{"pypi.org", "PyPI.org.", "files.pypi.org"} {
		c := dial(t, addr)
		if resp, body := c.get("http://" + name + ":" + ps + "/"); resp.StatusCode != http.StatusBadGateway ||
			!strings.Contains(body, "cannot resolve") {
			t.Errorf("GET %s, which has no address of its own: %s %q", name, resp.Status, body)
		}
	}
	if got := d.take(); got != nil {
		t.Errorf("dialled %v", got)
	}
	c := dial(t, addr)
	if resp, body := c.get("http://intranet:" + ps + "/"); resp.StatusCode != 200 {
		t.Errorf("GET intranet, a short name: %s %q", resp.Status, body)
	}
	if want := []string{"pypi.org.", "pypi.org.", "files.pypi.org.", "intranet"}; !reflect.DeepEqual(r.asked, want) {
		t.Errorf("asked the resolver for %q, want %q", r.asked, want)
	}

	// The machine's resolver: localhost from /etc/hosts.
	_, addr = startProxy(t, Config{Allow: allowList(t, "localhost:"+ps)})
	c = dial(t, addr)
	if resp, body := c.get("http://localhost:" + ps + "/"); resp.StatusCode != 200 {
		t.Errorf("GET localhost: %s %q", resp.Status, body)
	}
}
