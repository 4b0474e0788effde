// Package proxy is what the sandbox's network proxy (docs/architecture.md, "The network proxy"; reference
// §13) lets through and what it refused: the `host:port` patterns of sandbox.allowHosts and how a requested
// host is matched against them (this file), the refusals a run reports (Denial), and how a run starts its
// server (Serve). The server itself, with net/http, is pkg/proxy/server, which registers itself.
package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Pattern is one sandbox.allowHosts entry: a host and a port. The host is an IP address, a name, or a
// wildcard (`*.example.com`: every name below example.com, at any depth, but not example.com itself).
type Pattern struct {
	// Host is canonical: an address as netip prints it (IPv4-mapped IPv6 unmapped), or a name in lower case
	// without its trailing dot; for a wildcard, the name under `*.`.
	Host     string
	Wildcard bool
	Port     int // 1 to 65535
	// Restricted is an entry whose names may not lead to the machine's own addresses or a cloud's metadata
	// service (docs/architecture.md, "The network proxy"): a wildcard (names someone else may control), or
	// a name a request narrowed such a wildcard of its server's to (AllowList.Restrict). An exact entry the
	// user who starts agentbash wrote is not.
	Restricted bool
}

// ParsePattern reads one allowHosts entry: `host:port`, `[ipv6]:port` or `*.domain:port`. The error says
// what is wrong with it, quoting it.
func ParsePattern(s string) (Pattern, error) {
	bad := func(why string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("%q: %s", s, why)
	}
	if fields := strings.Fields(s); strings.Contains(s, ",") ||
		len(fields) > 1 && strings.Contains(fields[0], ":") && strings.Contains(fields[len(fields)-1], ":") {
		return bad("one HOST:PORT per entry (commas separate entries only in AGENTBASH_SANDBOX_ALLOWHOSTS): " +
			"--sandbox-allow-host once for each, one list item each in the config")
	}
	if before, _, ok := strings.Cut(s, "/"); ok && !strings.Contains(s, "://") {
		if _, err := netip.ParseAddr(strings.TrimPrefix(before, "[")); err == nil {
			return bad("a network range cannot be allowed: name each host (192.168.0.10:80)")
		}
	}
	if strings.Contains(s, "/") {
		return bad("want HOST:PORT, not a URL (github.com:443 for https://github.com/…)")
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return bad("want HOST:PORT (github.com:443, *.npmjs.org:443, 127.0.0.1:5432, [::1]:8080)")
	}
	host, portText := s[:i], s[i+1:]
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || portText != strconv.Itoa(port) {
		return bad("the port must be a number from 1 to 65535 (443 for https, 80 for http)")
	}
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return bad("an IPv6 address goes in brackets: [::1]:8080")
	}
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return bad("not an IPv6 address in brackets")
		}
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return bad("an IPv6 address goes in brackets: [::1]:8080")
	}
	wild := false
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		wild, host = true, rest
	}
	if strings.Contains(host, "*") {
		return bad("not a host name: a wildcard is *. followed by a domain (*.example.com:443), at the start only")
	}
	if rest, ok := strings.CutPrefix(host, "."); ok && !wild {
		if name, err := CanonicalHost(rest); err == nil && !strings.HasPrefix(rest, ".") {
			if _, err := netip.ParseAddr(name); err == nil || !strings.Contains(name, ".") {
				return bad(fmt.Sprintf("a leading dot: write %s", JoinHostPort(name, port)))
			}
			return bad(fmt.Sprintf("a leading dot: write %s for the names below %s, and %s for the name itself",
				JoinHostPort("*."+name, port), name, JoinHostPort(name, port)))
		}
	}
	h, err := CanonicalHost(host)
	if err != nil {
		return bad(err.Error())
	}
	if a, err := netip.ParseAddr(h); err == nil {
		switch {
		case wild:
			return bad("a wildcard covers names (*.example.com), not addresses")
		case a.IsUnspecified():
			return bad("an unspecified address reaches nothing of its own (the host's loopback, maybe): name the " +
				"address, 127.0.0.1 for the host's loopback")
		case a.IsMulticast():
			return bad("a multicast address cannot be connected to")
		}
	} else if wild && !strings.Contains(h, ".") {
		return bad("a wildcard needs a domain of at least two labels (*.example.com), not a top-level domain")
	}
	return Pattern{Host: h, Wildcard: wild, Port: port, Restricted: wild}, nil
}

// String is p as an allowHosts entry, canonical: `host:port`, `[ipv6]:port`, `*.domain:port`.
func (p Pattern) String() string {
	host := p.Host
	if p.Wildcard {
		host = "*." + host
	}
	return JoinHostPort(host, p.Port)
}

// JoinHostPort is `host:port`, with an IPv6 address in brackets.
func JoinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// Matches says whether p lets through host (canonical, see CanonicalHost) at port.
func (p Pattern) Matches(host string, port int) bool {
	if port != p.Port {
		return false
	}
	if p.Wildcard {
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
}

// Covers says whether everything q lets through, p lets through too: the same entry, a name under p's
// wildcard, or a wildcard under p's.
func (p Pattern) Covers(q Pattern) bool {
	if p.Port != q.Port {
		return false
	}
	switch {
	case !p.Wildcard:
		return !q.Wildcard && p.Host == q.Host
	case q.Wildcard:
		return q.Host == p.Host || strings.HasSuffix(q.Host, "."+p.Host)
	}
	return strings.HasSuffix(q.Host, "."+p.Host)
}

// AllowList is the parsed sandbox.allowHosts: what the proxy lets through. Empty lets nothing through.
type AllowList []Pattern

// ParseAllowList reads allowHosts entries. The error holds one line per bad entry, each `"entry": why`;
// the caller adds the key it came from.
func ParseAllowList(entries []string) (AllowList, error) {
	var l AllowList
	var errs []error
	for _, e := range entries {
		p, err := ParsePattern(strings.TrimSpace(e))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l = append(l, p)
	}
	return l, errors.Join(errs...)
}

// Restrict marks the exact entries of l among names (canonical entries, Pattern.String) Restricted: names a
// request narrowed its server's wildcard to keep the wildcard's limits.
func (l AllowList) Restrict(names []string) {
	for i, p := range l {
		if !p.Wildcard && slices.Contains(names, p.String()) {
			l[i].Restricted = true
		}
	}
}

// Strings is l as canonical entries.
func (l AllowList) Strings() []string {
	out := make([]string, len(l))
	for i, p := range l {
		out[i] = p.String()
	}
	return out
}

// Match is the entry of l that lets host (canonical) through at port, exact entries first; ok is false when
// none does.
func (l AllowList) Match(host string, port int) (Pattern, bool) {
	var found Pattern
	ok := false
	for _, p := range l {
		if p.Matches(host, port) {
			if !p.Wildcard {
				return p, true
			}
			if !ok {
				found, ok = p, true
			}
		}
	}
	return found, ok
}

// Covers says whether some entry of l covers q (Pattern.Covers): a request's allowHosts entry is within its
// server's when it is.
func (l AllowList) Covers(q Pattern) bool {
	for _, p := range l {
		if p.Covers(q) {
			return true
		}
	}
	return false
}

// CanonicalHost is host as the allow-list compares it: an IP address as netip prints it (IPv4-mapped IPv6
// unmapped, no zone), or a DNS name in lower case without its trailing dot, made of labels of letters,
// digits, `-` and `_` (1 to 63 bytes each, 253 in all). Anything else is an error: what a name cannot be is
// refused rather than guessed at (`127.1`, `0x7f.1` and other forms a C resolver would read as addresses
// are not names).
func CanonicalHost(host string) (string, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", errors.New("an address with a zone (%eth0) cannot be allowed")
		}
		return a.Unmap().String(), nil
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" {
		return "", errors.New("the host is empty")
	}
	if len(name) > 253 {
		return "", errors.New("a host name is 253 bytes at most")
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return "", errors.New("not a host name: a label is empty or longer than 63 bytes")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= utf8.RuneSelf:
				if r, _ := utf8.DecodeRuneInString(label[i:]); r != utf8.RuneError {
					return "", fmt.Errorf("not a host name: %q is not a letter, digit, - or _: an internationalized "+
						"name is written in its xn-- (punycode) form", r)
				}
				return "", errors.New("not a host name: it is not UTF-8")
			default:
				return "", fmt.Errorf("not a host name: %q is not a letter, digit, - or _", rune(c))
			}
		}
	}
	if last := name[strings.LastIndexByte(name, '.')+1:]; isNumber(last) {
		// 127.1, 2130706433, 10.0.0.1.2: a C resolver reads some of these as addresses, DNS has no such names.
		return "", errors.New("not a host name or an IP address (an address is written in full: 127.0.0.1)")
	}
	return name, nil
}

// isNumber says whether a label is a number as inet_aton reads one: decimal, octal or 0x hexadecimal.
func isNumber(s string) bool {
	if hex, ok := strings.CutPrefix(s, "0x"); ok {
		_, err := strconv.ParseUint(hex, 16, 64)
		return err == nil || hex == ""
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
