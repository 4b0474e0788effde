package proxy

import (
	"strconv"
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) // 3*64 + 61 = 253
	valid := []struct {
		in   string
		want Pattern
		str  string // the canonical String()
	}{
		{"github.com:443", Pattern{Host: "github.com", Port: 443}, "github.com:443"},
		{"github.com.:443", Pattern{Host: "github.com", Port: 443}, "github.com:443"},
		{"GitHub.COM:443", Pattern{Host: "github.com", Port: 443}, "github.com:443"},
		{"a-b_c.example:1", Pattern{Host: "a-b_c.example", Port: 1}, "a-b_c.example:1"},
		{"x.example:65535", Pattern{Host: "x.example", Port: 65535}, "x.example:65535"},
		{"*.npmjs.org:443", Pattern{Host: "npmjs.org", Wildcard: true, Port: 443, Restricted: true}, "*.npmjs.org:443"},
		{"*.Registry.NPMjs.org.:443", Pattern{Host: "registry.npmjs.org", Wildcard: true, Port: 443, Restricted: true}, "*.registry.npmjs.org:443"},
		{"127.0.0.1:5432", Pattern{Host: "127.0.0.1", Port: 5432}, "127.0.0.1:5432"},
		{"10.1.2.3:80", Pattern{Host: "10.1.2.3", Port: 80}, "10.1.2.3:80"},
		{"[::1]:8080", Pattern{Host: "::1", Port: 8080}, "[::1]:8080"},
		{"[2001:DB8:0:0::1]:443", Pattern{Host: "2001:db8::1", Port: 443}, "[2001:db8::1]:443"},
		{"[::ffff:127.0.0.1]:80", Pattern{Host: "127.0.0.1", Port: 80}, "127.0.0.1:80"},
		{"[::ffff:7f00:1]:80", Pattern{Host: "127.0.0.1", Port: 80}, "127.0.0.1:80"},
		{"localhost:3000", Pattern{Host: "localhost", Port: 3000}, "localhost:3000"},
		{"LOCALHOST.:3000", Pattern{Host: "localhost", Port: 3000}, "localhost:3000"},
		{"0x.example:80", Pattern{Host: "0x.example", Port: 80}, "0x.example:80"}, // a label "0x" is a name
		{"1.example:80", Pattern{Host: "1.example", Port: 80}, "1.example:80"},    // numeric labels, not the last
		{label63 + ".example:80", Pattern{Host: label63 + ".example", Port: 80}, label63 + ".example:80"},
		{name253 + ":80", Pattern{Host: name253, Port: 80}, name253 + ":80"},
		{name253 + ".:80", Pattern{Host: name253, Port: 80}, name253 + ":80"},
	}
	for _, c := range valid {
		p, err := ParsePattern(c.in)
		if err != nil {
			t.Errorf("ParsePattern(%q): %v", c.in, err)
			continue
		}
		if p != c.want {
			t.Errorf("ParsePattern(%q) = %+v, want %+v", c.in, p, c.want)
		}
		if s := p.String(); s != c.str {
			t.Errorf("ParsePattern(%q).String() = %q, want %q", c.in, s, c.str)
		}
		if q, err := ParsePattern(p.String()); err != nil || q != p {
			t.Errorf("ParsePattern(%q) = %+v, %v: not the pattern %q came from", p.String(), q, err, c.in)
		}
	}

	invalid := []struct{ in, why string }{
		{"", "HOST:PORT"},
		{"github.com", "HOST:PORT"},
		{"github.com:", "port"},
		{":443", "empty"},
		{"github.com:0", "port"},
		{"github.com:65536", "port"},
		{"github.com:+1", "port"},
		{"github.com:0080", "port"},
		{"github.com:-1", "port"},
		{"github.com: 80", "port"},
		{"github.com:https", "port"},
		{"::1:80", "brackets"},
		{"2001:db8::1:443", "brackets"},
		{"[::1:80", "brackets"},
		{"::1]:80", "brackets"},
		{"[127.0.0.1]:80", "IPv6"},
		{"[]:80", "IPv6"},
		{"[example.com]:80", "IPv6"},
		{"[fe80::1%eth0]:80", "IPv6"},
		{"[fe80::1%25eth0]:80", "IPv6"},
		{"fe80::1%eth0:80", "brackets"},
		{"*:443", "not a host name"},
		{"*.:443", "empty"},
		{"*.com:443", "two labels"},
		{"*.com.:443", "two labels"},
		{"*.*.example.com:443", "not a host name"},
		{"a.*.example.com:443", "not a host name"},
		{"*example.com:443", "not a host name"},
		{"*.127.0.0.1:80", "wildcard"},
		{"*.[::1]:80", "brackets"},
		{"*.1.2.3:80", "address is written in full"},
		{"0.0.0.0:80", "unspecified"},
		{"[::]:80", "unspecified"},
		{"[::ffff:0.0.0.0]:80", "unspecified"},
		{"224.0.0.1:80", "multicast"},
		{"[ff02::1]:80", "multicast"},
		{"127.1:80", "address is written in full"},
		{"0x7f.1:80", "address is written in full"},
		{"2130706433:80", "address is written in full"},
		{"0x7f000001:80", "address is written in full"},
		{"017700000001:80", "address is written in full"},
		{"10.0.0.1.2:80", "address is written in full"},
		{"example.0x:80", "address is written in full"},
		{"256.0.0.1:80", "address is written in full"},
		{strings.Repeat("a", 64) + ".example:80", "63"},
		{"a..example:80", "label is empty"},
		{".example:80", "a leading dot: write example:80"},
		{"example..:80", "label is empty"},
		{name253 + "b:80", "253"},
		{"*." + name253 + "b:80", "253"},
		{"exa mple.com:80", "not a letter"},
		{" example.com:80", "not a letter"},
		{"example.com :80", "not a letter"},
		{"http://x:80", "not a URL"},
		{"user@x:80", "not a letter"},
		{"ex\u00e4mple.com:80", "not a letter"},
		{"x/y:80", "not a URL"},
		{"a.com:443,b.com:443", "one HOST:PORT per entry (commas separate entries only in AGENTBASH_SANDBOX_ALLOWHOSTS)"},
		{"a.com,b.com:443", "one HOST:PORT per entry"},
		{"a.com:443 b.com:443", "one HOST:PORT per entry"},
		{"a.com:443\tb.com:443", "one HOST:PORT per entry"},
		{"192.168.0.0/16:80", "a network range cannot be allowed: name each host"},
		{"10.0.0.0/8", "a network range cannot be allowed"},
		{"[fd00::/8]:80", "a network range cannot be allowed"},
		{"*:443", "a wildcard is *. followed by a domain (*.example.com:443)"},
		{"*github.com:443", "a wildcard is *. followed by a domain"},
		{"*.*.example.com:443", "a wildcard is *. followed by a domain"},
		{".example.com:443", "a leading dot: write *.example.com:443 for the names below example.com, and example.com:443 for the name itself"},
		{"\u00fcmlaut.de:443", "'\u00fc' is not a letter"},
		{"\u00fcmlaut.de:443", "an internationalized name is written in its xn-- (punycode) form"},
		{"b\u00fccher.example:443", "'\u00fc' is not a letter"},
		{"a\x00b:443", "'\\x00' is not a letter"},
	}
	for _, c := range invalid {
		p, err := ParsePattern(c.in)
		if err == nil {
			t.Errorf("ParsePattern(%q) = %+v, want an error about %q", c.in, p, c.why)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParsePattern(%q): %v, want it to say %q", c.in, err, c.why)
		}
		if !strings.HasPrefix(err.Error(), strconv.Quote(c.in)+": ") {
			t.Errorf("ParsePattern(%q): %v: the error does not quote the entry", c.in, err)
		}
	}
}

func TestParseAllowList(t *testing.T) {
	l, err := ParseAllowList([]string{" github.com:443 ", "*.NPMjs.org:443", "[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"github.com:443", "*.npmjs.org:443", "[::1]:8080"}
	if got := l.Strings(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Strings() = %q, want %q", got, want)
	}
	_, err = ParseAllowList([]string{"ok.example:80", "bad", "*.com:443", "also.ok:1"})
	if err == nil {
		t.Fatal("ParseAllowList took bad entries")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `"bad": `) || !strings.HasPrefix(lines[1], `"*.com:443": `) {
		t.Errorf("the error is not one line per bad entry, each quoted: %q", err)
	}
	if l, err := ParseAllowList(nil); err != nil || len(l) != 0 {
		t.Errorf("ParseAllowList(nil) = %v, %v", l, err)
	}
}

func mustPattern(t *testing.T, s string) Pattern {
	t.Helper()
	p, err := ParsePattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPatternMatches(t *testing.T) {
	cases := []struct {
		pattern string
		host    string
		port    int
		want    bool
	}{
		{"github.com:443", "github.com", 443, true},
		{"github.com:443", "github.com", 80, false},
		{"github.com:443", "api.github.com", 443, false},
		{"github.com:443", "agithub.com", 443, false},
		{"github.com:443", "github.co", 443, false},
		{"*.example.com:443", "a.example.com", 443, true},
		{"*.example.com:443", "a.b.c.example.com", 443, true},
		{"*.example.com:443", "example.com", 443, false}, // the bare domain is not under its wildcard
		{"*.example.com:443", "aexample.com", 443, false},
		{"*.example.com:443", "a.example.com", 80, false},
		{"*.example.com:443", "a.example.com.evil.org", 443, false},
		{"*.example.com:443", "a.example.org", 443, false},
		{"*.b.example.com:443", "a.example.com", 443, false},
		{"127.0.0.1:80", "127.0.0.1", 80, true},
		{"127.0.0.1:80", "127.0.0.2", 80, false},
		{"[::1]:80", "::1", 80, true},
		{"localhost:80", "localhost", 80, true},
		{"localhost:80", "127.0.0.1", 80, false}, // a name is a name, not what it resolves to
	}
	for _, c := range cases {
		if got := mustPattern(t, c.pattern).Matches(c.host, c.port); got != c.want {
			t.Errorf("%s .Matches(%q, %d) = %v, want %v", c.pattern, c.host, c.port, got, c.want)
		}
	}
}

func TestPatternCovers(t *testing.T) {
	cases := []struct {
		p, q string
		want bool
	}{
		{"github.com:443", "github.com:443", true},
		{"github.com:443", "GitHub.com.:443", true},
		{"github.com:443", "github.com:80", false},
		{"github.com:443", "api.github.com:443", false},
		{"github.com:443", "*.github.com:443", false},
		{"*.example.com:443", "a.example.com:443", true},
		{"*.example.com:443", "a.b.example.com:443", true},
		{"*.example.com:443", "example.com:443", false},
		{"*.example.com:443", "*.example.com:443", true},
		{"*.example.com:443", "*.a.example.com:443", true},
		{"*.example.com:443", "*.a.example.com:80", false},
		{"*.example.com:443", "a.example.com:80", false},
		{"*.a.example.com:443", "*.example.com:443", false},
		{"*.a.example.com:443", "b.example.com:443", false},
		{"*.example.com:443", "*.xexample.com:443", false},
		{"*.example.com:443", "xexample.com:443", false},
		{"127.0.0.1:80", "127.0.0.1:80", true},
		{"127.0.0.1:80", "[::ffff:127.0.0.1]:80", true},
		{"127.0.0.1:80", "localhost:80", false},
	}
	for _, c := range cases {
		if got := mustPattern(t, c.p).Covers(mustPattern(t, c.q)); got != c.want {
			t.Errorf("%s .Covers(%s) = %v, want %v", c.p, c.q, got, c.want)
		}
	}
	l, _ := ParseAllowList([]string{"github.com:443", "*.npmjs.org:443"})
	for q, want := range map[string]bool{"github.com:443": true, "registry.npmjs.org:443": true,
		"*.a.npmjs.org:443": true, "npmjs.org:443": false, "gitlab.com:443": false, "github.com:22": false} {
		if got := l.Covers(mustPattern(t, q)); got != want {
			t.Errorf("%v .Covers(%s) = %v, want %v", l.Strings(), q, got, want)
		}
	}
	if (AllowList{}).Covers(mustPattern(t, "github.com:443")) {
		t.Error("an empty list covers something")
	}
}

func TestAllowListMatch(t *testing.T) {
	l, err := ParseAllowList([]string{"*.example.com:443", "*.a.example.com:443", "a.example.com:443",
		"b.example.com:80", "127.0.0.1:5432"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host string
		port int
		want string // "" for no match
	}{
		{"a.example.com", 443, "a.example.com:443"}, // the exact entry, though wildcards come first
		{"x.a.example.com", 443, "*"},               // one of the two wildcards
		{"b.example.com", 443, "*.example.com:443"},
		{"b.example.com", 80, "b.example.com:80"},
		{"c.example.com", 80, ""},
		{"example.com", 443, ""},
		{"127.0.0.1", 5432, "127.0.0.1:5432"},
		{"127.0.0.1", 5433, ""},
	}
	for _, c := range cases {
		p, ok := l.Match(c.host, c.port)
		switch {
		case c.want == "" && ok:
			t.Errorf("Match(%q, %d) = %s, want none", c.host, c.port, p)
		case c.want == "*" && (!ok || !p.Wildcard || !p.Matches(c.host, c.port)):
			t.Errorf("Match(%q, %d) = %s, %v, want a wildcard that matches", c.host, c.port, p, ok)
		case c.want != "" && c.want != "*" && (!ok || p.String() != c.want):
			t.Errorf("Match(%q, %d) = %s, %v, want %s", c.host, c.port, p, ok, c.want)
		}
	}
	if _, ok := (AllowList{}).Match("example.com", 443); ok {
		t.Error("an empty list lets something through")
	}
}

func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM.":     "example.com",
		"::FFFF:10.0.0.1":  "10.0.0.1",
		"2001:db8:0::1":    "2001:db8::1",
		"127.0.0.1":        "127.0.0.1",
		"localhost":        "localhost",
		"xn--bcher-kva.ch": "xn--bcher-kva.ch",
	} {
		if got, err := CanonicalHost(in); err != nil || got != want {
			t.Errorf("CanonicalHost(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "fe80::1%eth0", "127.1", "0x7f.1", "2130706433", "a b", "a:b", "[::1]"} {
		if got, err := CanonicalHost(in); err == nil {
			t.Errorf("CanonicalHost(%q) = %q, want an error", in, got)
		}
	}
}

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"github.com:443", "*.npmjs.org:443", "127.0.0.1:5432", "[::1]:8080",
		"[::ffff:127.0.0.1]:80", "localhost:3000", "GitHub.COM.:443", "*.com:443", "0.0.0.0:80", "[::]:80",
		"127.1:80", "0x7f.1:80", "2130706433:80", "[fe80::1%eth0]:80", "::1:80", "x:0080", "x:+1", "*:1",
		"http://x:80", "", ":", "[", "]:1", "[]:1", "*.:1", "*.1.2.3:4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), `"`) {
				t.Errorf("ParsePattern(%q): %v: the error does not start with the quoted entry", s, err)
			}
			return
		}
		if p.Port < 1 || p.Port > 65535 || p.Host == "" {
			t.Fatalf("ParsePattern(%q) = %+v", s, p)
		}
		if h, err := CanonicalHost(p.Host); err != nil || h != p.Host {
			t.Fatalf("ParsePattern(%q).Host = %q is not canonical: %q, %v", s, p.Host, h, err)
		}
		q, err := ParsePattern(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePattern(%q) = %+v, String %q parses to %+v, %v", s, p, p.String(), q, err)
		}
		if !p.Covers(p) || !AllowList([]Pattern{p}).Covers(q) {
			t.Fatalf("%s does not cover itself", p)
		}
		if !p.Wildcard && !p.Matches(p.Host, p.Port) {
			t.Fatalf("%s does not match its own host", p)
		}
	})
}
