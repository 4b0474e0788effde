package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string // "" for none
	}{
		{Policy{}, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, ""},
		{Policy{Mode: "strict"}, `sandbox.mode: want off, workspace-write or read-only, got "strict"`},
		{Policy{Mode: ModeReadOnly, Network: NetworkProxy}, ""},
		{Policy{Mode: ModeReadOnly, Network: NetworkProxy, AllowHosts: []string{"github.com:443", "*.npmjs.org:443", "[::1]:80"}}, ""},
		{Policy{Mode: ModeReadOnly, Network: NetworkProxy, AllowHosts: []string{"github.com"}}, `sandbox.allowHosts: "github.com": want HOST:PORT`},
		{Policy{Mode: ModeReadOnly, Network: NetworkProxy, AllowHosts: []string{"::1:80"}}, `sandbox.allowHosts: "::1:80": an IPv6 address goes in brackets`},
		{Policy{Mode: ModeReadOnly, Network: "wifi"}, `got "wifi"`},
		{Policy{Mode: ModeReadOnly, AllowHosts: []string{"a:1"}}, "sandbox.allowHosts: only network: proxy"},
	} {
		err := tc.p.Check()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
}

// A request may only add restrictions to its server's policy; a looser one is an error naming the field.
func TestTighten(t *testing.T) {
	floor := Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn, Writable: []string{"/w"}, DenyRead: []string{"/s"}}
	for _, tc := range []struct {
		req  Policy
		want string // "" for allowed
	}{
		{Policy{}, ""},
		{Policy{Mode: ModeReadOnly}, ""},
		{Policy{Network: NetworkOff}, ""},
		{Policy{Writable: []string{"/w/sub"}}, ""},
		{Policy{DenyRead: []string{"/w/secret"}}, ""},
		{Policy{Mode: ModeOff}, "sandbox.mode off would loosen this server's workspace-write"},
		{Policy{Writable: []string{"/"}}, "sandbox.writable: / is not within"},
		{Policy{Writable: []string{"/wx"}}, "sandbox.writable: /wx is not within"},
	} {
		got, err := Tighten(floor, tc.req)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
		if err == nil && !slices.Contains(got.DenyRead, "/s") {
			t.Errorf("%+v: the floor's denied path was dropped: %+v", tc.req, got)
		}
	}
	strict := Policy{Mode: ModeReadOnly, Network: NetworkOff}
	if _, err := Tighten(strict, Policy{Network: NetworkOn}); err == nil || !strings.Contains(err.Error(), "sandbox.network on") {
		t.Errorf("network on under off: %v", err)
	}
	// Under a proxy floor: fewer hosts, or the network off without the floor's hosts (they are its proxy's).
	proxied := Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"*.example.com:443", "127.0.0.1:8080"}}
	if got, err := Tighten(proxied, Policy{Network: NetworkOff}); err != nil || got.AllowHosts != nil || got.Check() != nil {
		t.Errorf("network off under proxy: %+v %v %v", got, err, got.Check())
	}
	if got, err := Tighten(proxied, Policy{Mode: ModeReadOnly}); err != nil || len(got.AllowHosts) != 2 || got.Check() != nil {
		t.Errorf("read-only under proxy keeps the floor's hosts: %+v %v", got, err)
	}
	if got, err := Tighten(proxied, Policy{AllowHosts: []string{"api.example.com:443"}}); err != nil || !slices.Equal(got.AllowHosts, []string{"api.example.com:443"}) {
		t.Errorf("fewer hosts: %+v %v", got, err)
	}
	if _, err := Tighten(proxied, Policy{AllowHosts: []string{"example.com:443"}}); err == nil || !strings.Contains(err.Error(), "sandbox.allowHosts: example.com:443 is not allowed") {
		t.Errorf("a host the floor does not allow: %v", err)
	}
	if got, err := Tighten(proxied, Policy{Network: NetworkOff, AllowHosts: []string{"api.example.com:443"}}); err != nil || got.Check() == nil {
		t.Errorf("hosts the request gives with network off are its own error: %+v %v", got, err)
	}
	if got, err := Tighten(Policy{}, Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}); err != nil || got.Mode != ModeWorkspaceWrite {
		t.Errorf("an unsandboxed server takes any sandbox: %+v %v", got, err)
	}
}

// Under a proxy floor, a request's allowed hosts must each be covered by one of the floor's entries (a name
// under a wildcard, a narrower wildcard); a proxy under network on takes any hosts, under off none.
func TestTightenHosts(t *testing.T) {
	floor := Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"*.github.com:443", "127.0.0.1:8080"}}
	for _, tc := range []struct {
		req  Policy
		want string
	}{
		{Policy{AllowHosts: []string{"api.github.com:443"}}, ""},
		{Policy{AllowHosts: []string{"*.eu.github.com:443", "127.0.0.1:8080"}}, ""},
		{Policy{AllowHosts: []string{"API.GitHub.com.:443"}}, ""},
		{Policy{AllowHosts: []string{}}, ""},
		{Policy{Network: NetworkOff}, ""},
		{Policy{AllowHosts: []string{"github.com:443"}}, "sandbox.allowHosts: github.com:443 is not allowed"},
		{Policy{AllowHosts: []string{"*.github.com:80"}}, "sandbox.allowHosts: *.github.com:80 is not allowed"},
		{Policy{AllowHosts: []string{"*.com:443"}}, `sandbox.allowHosts: "*.com:443": a wildcard needs`},
		{Policy{AllowHosts: []string{"localhost:8080"}}, "sandbox.allowHosts: localhost:8080 is not allowed"},
		{Policy{Network: NetworkOn}, "sandbox.network on would loosen this server's proxy"},
	} {
		_, err := Tighten(floor, tc.req)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
	if got, err := Tighten(Policy{Mode: ModeReadOnly, Network: NetworkOn}, Policy{Network: NetworkProxy, AllowHosts: []string{"x.org:443"}}); err != nil || got.AllowHosts[0] != "x.org:443" {
		t.Errorf("proxy under network on: %+v %v", got, err)
	}
	if _, err := Tighten(Policy{Mode: ModeReadOnly}, Policy{Network: NetworkProxy}); err == nil {
		t.Error("proxy under network off was taken")
	}
	if got, _ := Tighten(floor, Policy{Mode: ModeReadOnly}); !slices.Equal(got.AllowHosts, floor.AllowHosts) {
		t.Errorf("a request without hosts keeps the floor's: %v", got.AllowHosts)
	}
}

// A session's later command must be confined at least as its strictest was: its hosts within those.
func TestWithinHosts(t *testing.T) {
	q := Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"*.npmjs.org:443", "github.com:443"}}
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{q, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"registry.npmjs.org:443"}}, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOff}, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"npmjs.org:443"}}, "sandbox.allowHosts: npmjs.org:443 is not within"},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, "sandbox.network on is looser than proxy"},
	} {
		err := tc.p.Within(q)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.p, err, tc.want)
		}
	}
}

// Writes-only (network on, nothing denied) needs Landlock and seccomp alone; anything else the namespaces.
func TestNeeds(t *testing.T) {
	names := func(p Policy) string {
		var s []string
		for _, m := range p.Needs() {
			s = append(s, string(m))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, "landlock-fs landlock-scope seccomp"},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn, DenyRead: []string{"/s"}}, "landlock-fs landlock-scope userns mountns seccomp"},
		{Policy{Mode: ModeReadOnly}, "landlock-fs landlock-scope userns mountns netns seccomp"},
	} {
		if got := names(tc.p); got != tc.want {
			t.Errorf("%+v: needs %q, want %q", tc.p, got, tc.want)
		}
	}
}

// Resolve expands ~, follows symlinks, drops what does not exist where that widens nothing, and refuses
// what would widen silently.
func TestResolve(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"w", "secret", "w/inside", "real"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.Symlink(filepath.Join(home, "real"), filepath.Join(home, "link"))
	home, _ = filepath.EvalSymlinks(home)
	got, err := Policy{Mode: ModeWorkspaceWrite, Writable: []string{"~/w", "~/link", "~/secret/x"},
		DenyRead: []string{"~/secret", "~/missing"}, CacheDirs: []string{"~/nocache", "~/w"}}.Resolve(home)
	if err == nil || !strings.Contains(err.Error(), "sandbox.writable: "+home+"/secret/x does not exist") {
		t.Errorf("a missing writable path: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "sandbox.writable: "+home+"/link is reached through a symbolic link (it is "+home+"/real)") {
		t.Errorf("a writable symlink: %v", err)
	}
	if want := []string{home + "/w"}; !slices.Equal(got.Writable, want) {
		t.Errorf("writable %q, want %q", got.Writable, want)
	}
	if want := []string{home + "/secret"}; !slices.Equal(got.DenyRead, want) || !slices.Equal(got.CacheDirs, []string{home + "/w"}) {
		t.Errorf("denied %q, caches %q", got.DenyRead, got.CacheDirs)
	}
	for _, bad := range []Policy{{Writable: []string{"rel"}}, {Writable: []string{"/"}}, {DenyRead: []string{"x/y"}}} {
		if _, err := bad.Resolve(home); err == nil {
			t.Errorf("%+v resolved", bad)
		}
	}
	inDenied, err := Policy{Writable: []string{"~/secret"}, DenyRead: []string{"~/secret"}}.Resolve(home)
	if err != nil || len(inDenied.Writable) != 0 {
		t.Errorf("deny wins: %+v %v", inDenied, err)
	}
}

// A request's exact entry that only a wildcard of its proxy server covers is Narrowed: it keeps the
// wildcard's limits (pkg/proxy). One the server names exactly, a wildcard, or any under a server whose
// network is on, is not; a policy settled elsewhere keeps what it had narrowed.
func TestTightenNarrowed(t *testing.T) {
	floor := Policy{Mode: ModeWorkspaceWrite, Network: NetworkProxy, AllowHosts: []string{"*.example.test:80", "api.example.test:80"}}
	for _, tc := range []struct {
		floor Policy
		req   Policy
		want  []string
	}{
		{floor, Policy{AllowHosts: []string{"evil.example.test:80"}}, []string{"evil.example.test:80"}},
		{floor, Policy{AllowHosts: []string{"EVIL.Example.test.:80"}}, []string{"evil.example.test:80"}},
		{floor, Policy{AllowHosts: []string{"api.example.test:80", "*.a.example.test:80"}}, nil},
		{floor, Policy{}, nil},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, Policy{Network: NetworkProxy, AllowHosts: []string{"evil.example.test:80"}}, nil},
		{floor, Policy{AllowHosts: []string{"api.example.test:80"}, Narrowed: []string{"api.example.test:80"}}, []string{"api.example.test:80"}},
		{Policy{}, Policy{Mode: ModeReadOnly, Network: NetworkProxy, AllowHosts: []string{"x.test:80"}}, nil},
	} {
		got, err := Tighten(tc.floor, tc.req)
		if err != nil || !slices.Equal(got.Narrowed, tc.want) {
			t.Errorf("%+v under %+v: Narrowed %q (%v), want %q", tc.req, tc.floor.AllowHosts, got.Narrowed, err, tc.want)
		}
	}
	if _, err := Tighten(floor, Policy{AllowHosts: []string{"127.1:80"}}); err == nil || !strings.Contains(err.Error(), `sandbox.allowHosts: "127.1:80": not a host name`) {
		t.Errorf("a malformed entry: %v", err)
	}
	if _, err := Tighten(floor, Policy{AllowHosts: []string{"other.test:80"}}); err == nil ||
		!strings.Contains(err.Error(), "other.test:80 is not allowed by this server (it allows *.example.test:80, api.example.test:80)") {
		t.Errorf("a wider entry: %v", err)
	}
}
