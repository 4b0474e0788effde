package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
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

// A name only a wildcard allows may not resolve to the machine's own addresses (its interfaces': the proxy
// serves in the host's network namespace) or another cloud's metadata service; a private network's
// addresses (RFC 1918) it may, and an exact entry for the name reaches all of them.
func TestWildcardNotToTheMachinesOwn(t *testing.T) {
	r := resolver(map[string][]string{
		"own4.evil.test":  {"192.0.2.77"},
		"own6.evil.test":  {"2001:db8::77"},
		"azure.evil.test": {"168.63.129.16"},
		"oci.evil.test":   {"192.0.0.192"},
		"corp.evil.test":  {"10.1.2.3"},
		"mixed.evil.test": {"192.0.2.77 172.16.0.9"},
	})
	d := &dialLog{}
	refuse := func(_ context.Context, _, address string) (net.Conn, error) { // kept, and not dialled
		d.mu.Lock()
		defer d.mu.Unlock()
		d.addrs = append(d.addrs, address)
		return nil, errors.New("not dialled in this test")
	}
	own := []netip.Addr{netip.MustParseAddr("192.0.2.77"), netip.MustParseAddr("2001:db8::77")}
	p, addr := startProxy(t, Config{Allow: allowList(t, "*.evil.test:80", "own4.evil.test:80"), Resolver: r,
		Dial: refuse, OwnAddrs: own})
	for name, want := range map[string]int{"own4.evil.test": 502, "own6.evil.test": 403, "azure.evil.test": 403,
		"oci.evil.test": 403, "corp.evil.test": 502, "mixed.evil.test": 502} {
		c := dial(t, addr)
		if resp, body := c.get("http://" + name + "/"); resp.StatusCode != want {
			t.Errorf("GET %s: %s %q, want %d", name, resp.Status, body, want)
		}
	}
	dialled := d.take()
	slices.Sort(dialled)
	if want := []string{"10.1.2.3:80", "172.16.0.9:80", "192.0.2.77:80"}; !reflect.DeepEqual(dialled, want) {
		t.Errorf("dialled %v, want %v", dialled, want)
	}
	if got := p.Denied(); len(got) != 3 {
		t.Errorf("Denied() = %v, want own6, azure and oci", got)
	}

	// By default the machine's own are its interfaces' addresses.
	var mine netip.Addr
	addrs, err := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
				mine = ip.Unmap()
				break
			}
		}
	}
	if !mine.IsValid() {
		t.Skipf("no address of this machine's beyond loopback and link-local (%v)", err)
	}
	r = resolver(map[string][]string{"mine.evil.test": {mine.String()}})
	p, addr = startProxy(t, Config{Allow: allowList(t, "*.evil.test:80"), Resolver: r, Dial: refuse})
	c := dial(t, addr)
	if resp, body := c.get("http://mine.evil.test/"); resp.StatusCode != http.StatusForbidden || d.take() != nil {
		t.Errorf("GET a name at %s, this machine's: %s %q", mine, resp.Status, body)
	}
}
