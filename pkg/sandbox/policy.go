// Package sandbox is agentbash's sandbox (docs/reference.md §13; docs/architecture.md, "The sandbox"): the
// policy a command runs under, the mechanisms each part of it needs, the plan for one command, and the stage
// that enforces it (and hands network proxy's listener to pkg/proxy in the supervisor). This file is the policy alone: what a config, a flag or a request may say, how a request can
// only tighten what its server was given, and which mechanisms a policy needs, so a place that lacks one
// refuses to start the command rather than run it less confined.
package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentbash/agentbash/pkg/proxy"
)

// Mode is how much a sandboxed command may write (reference §13).
type Mode string

// The modes, from loosest to strictest.
const (
	ModeOff            Mode = "off"             // no sandbox: behaviour unchanged
	ModeWorkspaceWrite Mode = "workspace-write" // writes only in the cwd, the writable paths, caches and a private /tmp
	ModeReadOnly       Mode = "read-only"       // writes only in a private /tmp
)

// Network is what a sandboxed command may reach.
type Network string

// The network settings, from loosest to strictest.
const (
	NetworkOn    Network = "on"    // the host's network, unconfined
	NetworkProxy Network = "proxy" // only allowHosts, through a proxy agentbash runs
	NetworkOff   Network = "off"   // nothing but the command's own loopback (the default in a sandbox)
)

// Mechanism is a kernel facility a policy needs; its name is the one `details.sandbox.enforced` lists.
type Mechanism string

// The mechanisms (reference §13: the names in enforced).
const (
	LandlockFS    Mechanism = "landlock-fs"    // writes confined to the writable set
	LandlockScope Mechanism = "landlock-scope" // no signals to processes outside, no abstract unix sockets outside
	UserNS        Mechanism = "userns"         // a user namespace: the mounts below, capabilities dropped
	MountNS       Mechanism = "mountns"        // denied paths hidden, a private /tmp, host sockets hidden, / read-only
	NetNS         Mechanism = "netns"          // network off, or only through the proxy
	Seccomp       Mechanism = "seccomp"        // no new namespaces, no io_uring or vsock
	Proxy         Mechanism = "proxy"          // the allow-list proxy of network: proxy
)

// Policy is what a sandboxed command may write, read and reach. Paths are as given until Resolve makes them
// absolute; an empty Mode is ModeOff.
type Policy struct {
	Mode       Mode     `json:"mode"`
	Network    Network  `json:"network,omitempty"`
	Writable   []string `json:"writable,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
	CacheDirs  []string `json:"cacheDirs,omitempty"`
	AllowHosts []string `json:"allowHosts,omitempty"`
	// Narrowed is the AllowHosts entries (canonical) a request narrowed a wildcard of its server's to
	// (Tighten): they keep the wildcard's limits (no loopback, link-local or metadata address; pkg/proxy's
	// Pattern.Restricted), or a model could lift them by naming one name under the wildcard. Not a key a
	// config or a request gives.
	Narrowed []string `json:"narrowed,omitempty"`
}

// DefaultDenyRead and DefaultCacheDirs are the defaults of sandbox.denyRead and sandbox.cacheDirs (reference
// §13); agentbash's own state directory is denied too, by the place.
var (
	DefaultDenyRead = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.docker", "~/.kube", "~/.netrc",
		"~/.git-credentials", "~/.npmrc", "~/.pypirc"}
	DefaultCacheDirs = []string{"~/.cache", "~/.npm", "~/.cargo/registry", "~/go/pkg/mod"}
)

// On says whether p confines anything.
func (p Policy) On() bool { return p.Mode != "" && p.Mode != ModeOff }

// Check says what is wrong with p as written (an unknown mode or network, an allowHosts entry that is not
// a `host:port` pattern, allowHosts without network proxy), one error per setting or entry, each naming its
// key.
func (p Policy) Check() error {
	var errs []error
	switch p.Mode {
	case "", ModeOff, ModeWorkspaceWrite, ModeReadOnly:
	default:
		errs = append(errs, fmt.Errorf("sandbox.mode: want off, workspace-write or read-only, got %q", p.Mode))
	}
	switch p.Network {
	case "", NetworkOff, NetworkOn, NetworkProxy:
	default:
		errs = append(errs, fmt.Errorf("sandbox.network: want off, proxy or on, got %q", p.Network))
	}
	if _, err := proxy.ParseAllowList(p.AllowHosts); err != nil {
		// One error for the key, every bad entry in it: a config reports a key's first error.
		errs = append(errs, errors.New("sandbox.allowHosts: "+strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
	if len(p.AllowHosts) > 0 && p.Network != NetworkProxy {
		errs = append(errs, errors.New("sandbox.allowHosts: only network: proxy uses it (set sandbox.network: proxy)"))
	}
	return errors.Join(errs...)
}

// rank orders modes and networks from loosest (0) to strictest.
func modeRank(m Mode) int {
	return slices.Index([]Mode{ModeOff, ModeWorkspaceWrite, ModeReadOnly}, orMode(m))
}

func netRank(n Network) int {
	return slices.Index([]Network{NetworkOn, NetworkProxy, NetworkOff}, orNet(n))
}

func orMode(m Mode) Mode {
	if m == "" {
		return ModeOff
	}
	return m
}

func orNet(n Network) Network {
	if n == "" {
		return NetworkOff
	}
	return n
}

// Tighten is the policy of a request under a server's policy floor: the request may only add restrictions
// (a stricter mode, a stricter network, writable paths and cache dirs that are within the floor's, more
// denied paths, allowed hosts that the floor allows); anything looser is an error naming the field (reference
// §13: "a request can only tighten"). Fields the request leaves out (empty) take the floor's. Paths are
// compared as written: both policies should be resolved first.
func Tighten(floor, req Policy) (Policy, error) {
	out := floor
	var errs []error
	if req.Mode != "" {
		if modeRank(req.Mode) < modeRank(floor.Mode) {
			errs = append(errs, fmt.Errorf("sandbox.mode %s would loosen this server's %s", req.Mode, orMode(floor.Mode)))
		}
		out.Mode = req.Mode
	}
	if !out.On() {
		return out, errors.Join(errs...)
	}
	if req.Network != "" {
		base := floor.Network
		if !floor.On() {
			base = NetworkOn // an unsandboxed floor reaches everything: any network setting tightens it
		}
		if netRank(req.Network) < netRank(base) {
			errs = append(errs, fmt.Errorf("sandbox.network %s would loosen this server's %s", req.Network, orNet(base)))
		}
		out.Network = req.Network
	}
	within := func(key string, paths, floorPaths []string) []string {
		if paths == nil {
			return floorPaths
		}
		for _, p := range paths {
			if floor.On() && !slices.ContainsFunc(floorPaths, func(f string) bool { return under(p, f) }) {
				errs = append(errs, fmt.Errorf("sandbox.%s: %s is not within this server's %s", key, p, key))
			}
		}
		return paths
	}
	out.Writable = within("writable", req.Writable, floor.Writable)
	out.CacheDirs = within("cacheDirs", req.CacheDirs, floor.CacheDirs)
	out.DenyRead = append(slices.Clone(floor.DenyRead), req.DenyRead...)
	if req.AllowHosts != nil {
		floorHosts, _ := proxy.ParseAllowList(floor.AllowHosts)
		floorHosts.Restrict(floor.Narrowed)
		proxyFloor := floor.On() && orNet(floor.Network) == NetworkProxy
		out.Narrowed = nil
		for _, h := range req.AllowHosts {
			q, err := proxy.ParsePattern(strings.TrimSpace(h))
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("sandbox.allowHosts: %w", err))
			case proxyFloor && !floorHosts.Covers(q):
				errs = append(errs, fmt.Errorf("sandbox.allowHosts: %s is not allowed by this server (it allows %s)",
					h, strings.Join(floor.AllowHosts, ", ")))
			case q.Wildcard:
			case slices.Contains(req.Narrowed, q.String()) ||
				proxyFloor && !slices.ContainsFunc(floorHosts, func(p proxy.Pattern) bool { return p == q }):
				// Only a wildcard of the server's (or a restricted entry) covers it: it keeps the limits.
				out.Narrowed = append(out.Narrowed, q.String())
			}
		}
		out.AllowHosts = req.AllowHosts
	} else if orNet(out.Network) != NetworkProxy {
		// The floor's hosts are its proxy's: a request that turns the proxy off (network off) has none, and
		// would otherwise be refused for an allowHosts it never gave.
		out.AllowHosts, out.Narrowed = nil, nil
	}
	return out, errors.Join(errs...)
}

// under says whether path p is f or inside it (both absolute and clean, or both as written).
func under(p, f string) bool {
	p, f = filepath.Clean(p), filepath.Clean(f)
	return p == f || f == "/" || strings.HasPrefix(p, f+"/")
}

// Needs is the mechanisms p needs, in the order enforced lists them; nil when p is off. Writes-only (network
// on, nothing denied) needs Landlock and seccomp alone; everything else needs the namespaces too (reference
// §13: "every other policy needs the namespaces").
func (p Policy) Needs() []Mechanism {
	if !p.On() {
		return nil
	}
	needs := []Mechanism{LandlockFS, LandlockScope}
	if orNet(p.Network) != NetworkOn || len(p.DenyRead) > 0 {
		needs = append(needs, UserNS, MountNS)
		if orNet(p.Network) != NetworkOn {
			needs = append(needs, NetNS)
		}
	}
	needs = append(needs, Seccomp)
	if orNet(p.Network) == NetworkProxy {
		needs = append(needs, Proxy)
	}
	return needs
}

// Resolve makes p's paths absolute as the place sees them (home is the place's home directory): `~` and
// `~/…` expand, a denied path's symlinks resolve to what they name (that is what is hidden), and what would
// widen silently is refused: a relative path, `writable: [/]`, a writable path that does not exist, and a
// writable or cache path reached through a symbolic link (a request may only name paths within its server's,
// and a link inside one can point anywhere: the directory must be named itself). A denied or cache path that does not exist is dropped (there is nothing to hide; a cache that is not
// there is not made). A writable path inside a denied one is dropped: deny wins. The error names the key
// and the path.
func (p Policy) Resolve(home string) (Policy, error) {
	var errs []error
	if real, err := filepath.EvalSymlinks(home); err == nil && home != "" {
		home = real // a home reached through a link (/home → /usr/home) is no link of the policy's
	}
	abs := func(key, path string) (string, bool) {
		switch {
		case path == "~" || strings.HasPrefix(path, "~/"):
			if home == "" {
				errs = append(errs, fmt.Errorf("sandbox.%s: %s: the home directory is unknown", key, path))
				return "", false
			}
			path = filepath.Join(home, strings.TrimPrefix(path, "~"))
		case !filepath.IsAbs(path):
			errs = append(errs, fmt.Errorf("sandbox.%s: %q is not an absolute path (or ~/…)", key, path))
			return "", false
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return filepath.Clean(path), false
		}
		if key != "denyRead" && real != filepath.Clean(path) {
			errs = append(errs, fmt.Errorf("sandbox.%s: %s is reached through a symbolic link (it is %s): name "+
				"the directory itself", key, filepath.Clean(path), real))
			return "", false
		}
		return real, true
	}
	out := p
	out.DenyRead, out.Writable, out.CacheDirs = nil, nil, nil
	for _, d := range p.DenyRead {
		if a, ok := abs("denyRead", d); ok {
			out.DenyRead = append(out.DenyRead, a)
		}
	}
	denied := func(a string) bool {
		return slices.ContainsFunc(out.DenyRead, func(d string) bool { return under(a, d) })
	}
	for _, w := range p.Writable {
		a, ok := abs("writable", w)
		switch {
		case a == "":
		case !ok:
			errs = append(errs, fmt.Errorf("sandbox.writable: %s does not exist", a))
		case a == "/":
			errs = append(errs, errors.New("sandbox.writable: / would make everything writable: name the directories"))
		case !denied(a):
			out.Writable = append(out.Writable, a)
		}
	}
	for _, c := range p.CacheDirs {
		if a, ok := abs("cacheDirs", c); ok && a != "/" && !denied(a) {
			out.CacheDirs = append(out.CacheDirs, a)
		}
	}
	return out, errors.Join(errs...)
}

// UnmarshalJSON reads a policy as the rpc/MCP `sandbox` field gives it (reference §13): a mode string
// (`"workspace-write"`) or an object with the config keys (mode, network, writable, denyRead, cacheDirs,
// allowHosts). An unknown key is an error, not ignored: a misspelt `denyread` must not silently deny less.
func (p *Policy) UnmarshalJSON(data []byte) error {
	if s := strings.TrimSpace(string(data)); strings.HasPrefix(s, `"`) {
		var mode string
		if err := json.Unmarshal(data, &mode); err != nil {
			return err
		}
		*p = Policy{Mode: Mode(mode)}
		return nil
	}
	type plain Policy // no UnmarshalJSON: no recursion
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var v plain
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("sandbox: a mode string (off, workspace-write, read-only) or an object with mode, "+
			"network, writable, denyRead, cacheDirs, allowHosts: %w", err)
	}
	*p = Policy(v)
	return nil
}

// Clone is a deep copy of p; nil for nil.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Writable, c.DenyRead = slices.Clone(p.Writable), slices.Clone(p.DenyRead)
	c.CacheDirs, c.AllowHosts, c.Narrowed = slices.Clone(p.CacheDirs), slices.Clone(p.AllowHosts), slices.Clone(p.Narrowed)
	return &c
}

// Within says whether p confines at least as much as q: a mode and a network at least as strict, writable
// paths and cache dirs within q's, every path q denies denied too, allowed hosts among q's. The error names
// the first setting of p that is looser. Paths are compared as written. A session uses it (reference §13): a
// command of a session that ran sandboxed must be confined at least as its strictest command was.
func (p Policy) Within(q Policy) error {
	if !q.On() {
		return nil
	}
	if !p.On() || modeRank(p.Mode) < modeRank(q.Mode) {
		return fmt.Errorf("sandbox.mode %s is looser than %s", orMode(p.Mode), q.Mode)
	}
	if netRank(p.Network) < netRank(q.Network) {
		return fmt.Errorf("sandbox.network %s is looser than %s", orNet(p.Network), orNet(q.Network))
	}
	for _, set := range []struct {
		key       string
		p, within []string
	}{{"writable", p.Writable, q.Writable}, {"cacheDirs", p.CacheDirs, q.CacheDirs}} {
		for _, x := range set.p {
			if !slices.ContainsFunc(set.within, func(w string) bool { return under(x, w) }) {
				return fmt.Errorf("sandbox.%s: %s is not within %v", set.key, x, set.within)
			}
		}
	}
	if orNet(q.Network) == NetworkProxy && orNet(p.Network) == NetworkProxy {
		within, _ := proxy.ParseAllowList(q.AllowHosts)
		for _, h := range p.AllowHosts {
			if x, err := proxy.ParsePattern(h); err != nil || !within.Covers(x) {
				return fmt.Errorf("sandbox.allowHosts: %s is not within %v", h, q.AllowHosts)
			}
		}
	}
	for _, d := range q.DenyRead {
		if !slices.ContainsFunc(p.DenyRead, func(x string) bool { return under(d, x) }) {
			return fmt.Errorf("sandbox.denyRead: %s is not denied", d)
		}
	}
	return nil
}
