package local

import "testing"

// The proxy variables a request's environment sets, which network proxy replaces, named as the request
// wrote them (any case, once each, in order); other variables and look-alikes are none.
func TestProxyNames(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, ""},
		{[]string{"A=1", "PROXY=x", "HTTP_PROXY_USER=u", "NO_PROXYX=1", "SOCKS_PROXY=s"}, ""},
		{[]string{"NO_PROXY=127.0.0.1"}, "NO_PROXY"},
		{[]string{"no_proxy=localhost", "A=1", "HTTPS_PROXY=http://p:3128"}, "no_proxy and HTTPS_PROXY"},
		{[]string{"http_proxy=h", "Https_Proxy=h", "ALL_PROXY=a", "http_proxy=again", "NO_PROXY="}, "http_proxy, Https_Proxy, ALL_PROXY and NO_PROXY"},
	} {
		if got := proxyNames(tc.env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}
