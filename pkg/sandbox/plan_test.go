package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	ws := Policy{Mode: ModeWorkspaceWrite, Writable: []string{"/w"}, DenyRead: []string{"~/.ssh"}}
	for _, tc := range []struct {
		p, q Policy
		want string // "" when p is within q
	}{
		{Policy{}, Policy{}, ""},
		{ws, Policy{}, ""},
		{Policy{}, ws, "sandbox.mode off is looser"},
		{Policy{Mode: ModeReadOnly, DenyRead: []string{"~/.ssh"}}, ws, ""},
		{Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn, DenyRead: []string{"~/.ssh"}}, ws, "sandbox.network on is looser than off"},
		{Policy{Mode: ModeWorkspaceWrite, Writable: []string{"/w/sub"}, DenyRead: []string{"~/.ssh"}}, ws, ""},
		{Policy{Mode: ModeWorkspaceWrite, Writable: []string{"/x"}, DenyRead: []string{"~/.ssh"}}, ws, "sandbox.writable: /x"},
		{Policy{Mode: ModeWorkspaceWrite}, ws, "sandbox.denyRead: ~/.ssh is not denied"},
		{Policy{Mode: ModeWorkspaceWrite, DenyRead: []string{"~"}}, ws, ""},
	} {
		err := tc.p.Within(tc.q)
		if got := ""; err != nil {
			got = err.Error()
			if tc.want == "" || !strings.Contains(got, tc.want) {
				t.Errorf("%+v within %+v: %v, want %q", tc.p, tc.q, err, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%+v within %+v: nil, want %q", tc.p, tc.q, tc.want)
		}
	}
}

// Plan: the cwd joins the writable set, agentbash's own directories never do, a cwd of / or inside a denied
// path is refused, .git/hooks and .git/config stay read-only (a missing hooks directory is made), and the
// writes-only level hides nothing.
func TestPlan(t *testing.T) {
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	own := filepath.Join(home, ".cache", "agentbash")
	for _, d := range []string{filepath.Join(home, ".ssh", "deep"), own, filepath.Join(ws, ".git"), filepath.Join(ws, "sub", ".git", "hooks")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git", "config"), nil, 0o644)
	p := Policy{Mode: ModeWorkspaceWrite, DenyRead: []string{"~/.ssh"}, CacheDirs: []string{"~/.cache"}}
	c, err := Plan(p, Place{Home: home, Dir: ws, Own: []string{own}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(home, ".cache"), ws}; !slices.Equal(c.Writable, want) {
		t.Errorf("writable %v, want %v", c.Writable, want)
	}
	for _, ro := range []string{own, filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "config"), filepath.Join(ws, "sub", ".git", "hooks")} {
		if !slices.Contains(c.ReadOnly, ro) {
			t.Errorf("%s not read-only: %v", ro, c.ReadOnly)
		}
	}
	if !c.Namespaced() || !slices.Contains(c.Hide, filepath.Join(home, ".ssh")) || !slices.Contains(c.HideSockets, "/run") {
		t.Errorf("%+v", c)
	}
	// A workspace holding agentbash's state directory: hidden, and not bound back read-only (which would
	// show it again).
	state := filepath.Join(home, ".local", "state", "agentbash")
	os.MkdirAll(filepath.Join(state, "artifacts"), 0o700)
	c, err = Plan(p, Place{Home: home, Dir: home, Own: []string{state, filepath.Join(state, "artifacts")}, Hidden: []string{state}})
	if err != nil || !slices.Contains(c.Hide, state) || slices.ContainsFunc(c.ReadOnly, func(ro string) bool { return strings.HasPrefix(ro, state) }) {
		t.Errorf("state in the workspace: %+v %v", c, err)
	}
	if _, err := Plan(p, Place{Home: home, Dir: filepath.Join(home, ".ssh", "deep")}); err == nil ||
		!strings.Contains(err.Error(), "inside the denied path") {
		t.Errorf("cwd in a denied path: %v", err)
	}
	if _, err := Plan(p, Place{Home: home, Dir: "/"}); err == nil || !strings.Contains(err.Error(), "working directory is /") {
		t.Errorf("cwd /: %v", err)
	}
	if c, err := Plan(Policy{Mode: ModeReadOnly}, Place{Home: home, Dir: "/"}); err != nil || len(c.Writable) != 0 {
		t.Errorf("read-only at /: %+v %v", c, err)
	}
	wo, err := Plan(Policy{Mode: ModeWorkspaceWrite, Network: NetworkOn}, Place{Home: home, Dir: ws, Own: []string{ws}})
	if err != nil || wo.Namespaced() || len(wo.Hide) != 0 || slices.Contains(wo.Writable, ws) {
		t.Errorf("writes-only with the cwd one of agentbash's own: %+v %v", wo, err)
	}
}

// carve: a writable directory holding a read-only one becomes its other entries.
func TestCarve(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/agentbash/x", "a/pip", "b"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "a", "file"), nil, 0o644)
	dirs, files := carve(filepath.Join(root, "a"), []string{filepath.Join(root, "a", "agentbash")})
	if !slices.Equal(dirs, []string{filepath.Join(root, "a", "pip")}) || !slices.Equal(files, []string{filepath.Join(root, "a", "file")}) {
		t.Errorf("dirs %v files %v", dirs, files)
	}
	if dirs, _ := carve(filepath.Join(root, "b"), []string{filepath.Join(root, "a")}); !slices.Equal(dirs, []string{filepath.Join(root, "b")}) {
		t.Errorf("untouched: %v", dirs)
	}
}

func TestHint(t *testing.T) {
	ws := Confinement{Mode: ModeWorkspaceWrite, Network: NetworkOff, Enforced: []Mechanism{UserNS}, Dir: "/w/sub",
		Writable: []string{"/w"}, ReadOnly: []string{"/w/.git/config"}}
	proxied := ws
	proxied.Network = NetworkProxy
	denying := ws
	denying.Hide = []string{"/h/.ssh"}
	inTmp := Confinement{Mode: ModeReadOnly, Enforced: []Mechanism{UserNS}, Dir: "/tmp/ro"}
	for _, tc := range []struct {
		c      Confinement
		output string
		want   string // a part of the hint; "" for none
	}{
		{ws, "touch: cannot touch '/etc/x': Read-only file system", "write only to /w and the private /tmp"},
		{ws, "touch: cannot touch '../../y': Read-only file system", "write only to /w"},
		{ws, "touch: cannot touch 'x': Read-only file system", ""},
		{ws, "open /Users/x/f: read-only file system", "write only to /w"},
		{ws, "error: could not write config file /w/.git/config: Device or resource busy", "/w/.git/config is read-only in the sandbox"},
		{ws, "curl: (6) Could not resolve host: example.com", "network is off"},
		{ws, "all good", ""},
		// What the sandbox hides: a denied path, a path in the private /tmp or /dev/shm, never one the host's
		// is bound at (a working directory under /tmp, read-only), and never by what the host has there.
		{denying, "cat: /h/.ssh/id_ed25519: No such file or directory", "/h/.ssh is hidden in the sandbox (sandbox.denyRead"},
		{ws, "cat: /tmp/x/y: No such file or directory", "/tmp/x/y is in the sandbox's private /tmp"},
		{ws, "cat: /dev/shm/z: No such file or directory", "private /dev/shm"},
		{ws, "ls: cannot access '/w/x': No such file or directory", ""},
		{ws, "cat: ./tmp/x: No such file or directory", ""}, // /w/sub/tmp/x, not the host's /tmp
		{inTmp, "mv: cannot move 'build.sh' to 'nodir/x': No such file or directory", ""},
		{Confinement{Mode: ModeWorkspaceWrite, Network: NetworkOn, Dir: "/w", Writable: []string{"/w"}},
			"cat: /tmp/x: No such file or directory", ""},
		{Confinement{Mode: ModeReadOnly, Dir: "/w"}, "touch: cannot touch 'x': Read-only file system", "the sandbox is read-only"},
		{Confinement{Mode: ModeWorkspaceWrite, Network: NetworkOn, Dir: "/w", Writable: []string{"/w"}},
			"curl: (6) Could not resolve host: example.com", ""},
		// With the proxy: a connection around it, not the proxy's own answer (it names what it refused).
		{proxied, "curl: (7) Failed to connect to 127.0.0.1 port 5432 after 0 ms: Couldn't connect to server", "only through agentbash's proxy"},
		{proxied, `Get "http://127.0.0.1:8080/": dial tcp 127.0.0.1:8080: connect: connection refused`, "Go's HTTP client"},
		{proxied, "agentbash sandbox proxy: cannot connect to 127.0.0.1:8080: dial tcp 127.0.0.1:8080: connect: connection refused", ""},
		{proxied, "curl: (56) CONNECT tunnel failed, response 403", ""},
		// Each tool's own words for a name that did not resolve or a host not reached.
		{proxied, "Error: connect ECONNREFUSED 127.0.0.1:3000", "only through agentbash's proxy"},
		{ws, "connect ECONNREFUSED 127.0.0.1:9", "network is off"},
		{ws, "connect ENETUNREACH 10.1.2.3:80 - Local (0.0.0.0:0)", "network is off"},
		{ws, "Error: connect EHOSTUNREACH 10.1.2.3:443", "network is off"},
		{ws, "npm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", "network is off"},
		{ws, "npm ERR! code ECONNREFUSED", "network is off"},
		{ws, "error An unexpected error occurred: \"https://registry.yarnpkg.com/x: getaddrinfo ENOTFOUND registry.yarnpkg.com\".", "network is off"},
		{ws, "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(': Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'", "network is off"},
		{ws, "  [6] Could not resolve hostname (Could not resolve host: index.crates.io)", "network is off"},
		{ws, `go: rsc.io/quote@v1.5.2: Get "https://proxy.golang.org/rsc.io/quote/@v/list": dial tcp: lookup proxy.golang.org: no such host`, "network is off"},
		{ws, "error sending request for url (https://x.org/): dns error: failed to lookup address information: Name or service not known", "network is off"},
		{ws, "java.net.UnknownHostException: repo.maven.apache.org", "network is off"},
		{ws, "wget: unable to resolve host address ‘example.com’", "network is off"},
		{ws, "curl: (6) Couldn't resolve host 'example.com'", "network is off"},
		{ws, "ssh: connect to host 10.1.2.3 port 22: No route to host", "network is off"},
	} {
		got := tc.c.Hint(tc.output)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.output, got, tc.want)
		}
	}
}

// Protected paths inside a writable root cannot be moved away: the directories between are pinned (mount
// points), and one of agentbash's own directories that is not there yet is made, to be kept read-only.
func TestPlanPinsAndMakesOwn(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "gh"), 0o755)
	os.MkdirAll(filepath.Join(home, "p", ".git"), 0o755)
	own := filepath.Join(home, ".config", "agentbash")
	c, err := Plan(Policy{Mode: ModeWorkspaceWrite, DenyRead: []string{"~/.config/gh"}}, Place{Home: home, Dir: home, Own: []string{own}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(own); err != nil || !fi.IsDir() || !slices.Contains(c.ReadOnly, own) {
		t.Errorf("own dir: %v, read-only %v", err, c.ReadOnly)
	}
	for _, pin := range []string{filepath.Join(home, ".config"), filepath.Join(home, "p"), filepath.Join(home, "p", ".git")} {
		if !slices.Contains(c.Pins, pin) {
			t.Errorf("%s not pinned: %v", pin, c.Pins)
		}
	}
}

// Off Linux every sandboxed command is refused, saying why in words that fit the system.
func TestMissingOffLinux(t *testing.T) {
	m, why := Available{LandlockErr: errNotLinux, SeccompErr: errNotLinux}.Missing(Policy{Mode: ModeReadOnly}.Needs())
	if m != LandlockFS || !strings.Contains(why, "run without --sandbox here, or on Linux") {
		t.Errorf("%s: %s", m, why)
	}
}
