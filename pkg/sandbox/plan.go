package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/raw"
)

// Place is what the place that runs a command knows and a policy's paths are resolved against.
type Place struct {
	Home string // the home directory `~` expands to
	Dir  string // the command's working directory (absolute, existing)
	// Workspace is the directory writable in workspace-write (absolute, existing); "" is Dir. Within, when
	// set, bounds it: a workspace outside Within is not writable (a server's request naming a cwd elsewhere).
	Workspace, Within string
	// Own are agentbash's own config, cache and state directories: never writable inside, whatever the
	// policy says (a sandboxed command must not change what a later unsandboxed one sources).
	Own []string
	// Hidden are more paths to hide like denied ones (agentbash's state directory).
	Hidden []string
	// Keep are files inside hidden paths the command's shell needs (a session's prelude and dump), bound
	// back in; agentbash reaches the session's state, the command sees only these files.
	Keep []Bind
	// RuntimeDir is $XDG_RUNTIME_DIR ("" for none): hidden with the host's sockets.
	RuntimeDir string
}

// Bind is one file bound into the sandbox at its own path.
type Bind struct {
	Path     raw.String `json:"path"`
	Writable bool       `json:"writable,omitempty"`
}

// Confinement is a resolved policy as the stage enforces it (docs/architecture.md, "The sandbox"): every
// path absolute, existing and free of symlinks. It travels in run.Spec to the supervisor.
type Confinement struct {
	Mode    Mode    `json:"mode"`
	Network Network `json:"network"`
	// Enforced is the mechanisms the stage applies (details.sandbox.enforced). With userns the stage runs in
	// new user and mount namespaces (and netns: a network namespace with only loopback).
	Enforced []Mechanism `json:"enforced"`
	// Writable is the directories writes may go to (besides the private /tmp and /dev/shm of the namespaced
	// level, and Keep's writable files).
	Writable raw.List `json:"writable,omitempty"`
	// ReadOnly is paths inside Writable that stay read-only: agentbash's own directories, a repository's
	// .git/hooks and .git/config (namespaced level: read-only binds; writes-only: left out of the rules).
	ReadOnly raw.List `json:"readOnly,omitempty"`
	// Hide is what reads as empty: directories get an empty read-only tmpfs, files /dev/null.
	Hide raw.List `json:"hide,omitempty"`
	// HideSockets is where the host's unix sockets live (/run, /var/run, $XDG_RUNTIME_DIR): empty tmpfs.
	HideSockets raw.List `json:"hideSockets,omitempty"`
	Keep        []Bind   `json:"keep,omitempty"`
	// Pins are the directories between a writable root and a hidden or read-only path inside it: each is made
	// a mount point, which cannot be renamed or removed, so the protected path cannot be moved away (and a
	// new one put in its place, or its hidden contents read under a new name by a later command).
	Pins raw.List `json:"pins,omitempty"`
	// Dir is the working directory, entered again once the mounts are made.
	Dir raw.String `json:"dir"`
	// Workspace is the directory writable as the workspace in workspace-write (in Writable then).
	Workspace raw.String `json:"workspace,omitempty"`
	// AllowHosts is what the proxy of network proxy lets through: canonical `host:port` patterns (pkg/proxy).
	// Empty with network proxy reaches nothing. Narrowed are those of them that keep a wildcard's limits
	// (Policy.Narrowed).
	AllowHosts []string `json:"allowHosts,omitempty"`
	Narrowed   []string `json:"narrowed,omitempty"`
}

// Namespaced says whether c runs in its own user and mount namespaces.
func (c Confinement) Namespaced() bool { return slices.Contains(c.Enforced, UserNS) }

// Plan resolves p for a command at place (reference §13): paths are made absolute and free of symlinks
// (Resolve), the working directory joins the writable set in workspace-write, agentbash's own directories
// stay read-only, and what cannot be confined as asked is an error naming why: a working directory inside
// a denied path, or `/` made writable through the working directory. Missing mechanisms are not checked
// here (Available.Missing, and the stage itself).
func Plan(p Policy, place Place) (Confinement, error) {
	if err := p.Check(); err != nil {
		return Confinement{}, err
	}
	r, err := p.Resolve(place.Home)
	if err != nil {
		return Confinement{}, err
	}
	c := Confinement{Mode: orMode(r.Mode), Network: orNet(r.Network), Enforced: r.Needs(), Dir: raw.String(place.Dir)}
	if c.Network == NetworkProxy {
		allow, _ := proxy.ParseAllowList(r.AllowHosts) // Check read them
		c.AllowHosts, c.Narrowed = allow.Strings(), slices.Clone(r.Narrowed)
	}
	unmade := map[string]error{} // hidden directories that could not be made: a refusal if the command could
	for _, d := range place.Hidden {
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) && filepath.IsAbs(d) {
			// Made now, so it is hidden from the start rather than made visible later.
			if err := os.MkdirAll(d, 0o700); err != nil {
				unmade[d] = fmt.Errorf("sandbox: agentbash's %s cannot be made to be hidden: %w", d, err)
				continue
			}
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(r.DenyRead, real) {
			r.DenyRead = append(r.DenyRead, real)
		}
	}
	denied := func(path string) string {
		i := slices.IndexFunc(r.DenyRead, func(d string) bool { return under(path, d) })
		if i < 0 {
			return ""
		}
		return r.DenyRead[i]
	}
	dir, err := filepath.EvalSymlinks(place.Dir)
	if err != nil {
		return Confinement{}, fmt.Errorf("sandbox: the working directory: %w", err)
	}
	if c.Mode == ModeWorkspaceWrite && place.Workspace == "" && throughLink(place.Dir, dir, place.Home) {
		// A link (one a sandboxed command planted, say) would make its target the writable workspace.
		return Confinement{}, fmt.Errorf("sandbox: the working directory %s is reached through a symbolic link "+
			"(it is %s): name the directory itself", filepath.Clean(place.Dir), dir)
	}
	c.Dir = raw.String(dir)
	if d := denied(dir); d != "" && c.Namespaced() {
		return Confinement{}, fmt.Errorf("sandbox: the working directory %s is inside the denied path %s: "+
			"run it elsewhere, or take the path out of sandbox.denyRead", dir, d)
	}
	if c.Mode == ModeWorkspaceWrite {
		ws := dir
		if place.Workspace != "" {
			if ws, err = filepath.EvalSymlinks(place.Workspace); err != nil {
				return Confinement{}, fmt.Errorf("sandbox: the workspace: %w", err)
			}
		}
		if place.Within != "" {
			within, err := filepath.EvalSymlinks(place.Within)
			if err != nil || !under(ws, within) {
				ws = "" // its cwd is outside where the server works: read-only there
			}
		}
		if ws == "/" {
			return Confinement{}, errors.New("sandbox: the working directory is /, which would make everything " +
				"writable in workspace-write: run the command in its project directory (--cwd)")
		}
		if d := denied(ws); d != "" && ws != "" {
			return Confinement{}, fmt.Errorf("sandbox: the workspace %s is inside the denied path %s", ws, d)
		}
		if ws != "" {
			c.Workspace = raw.String(ws)
			c.Writable = append(c.Writable, ws)
		}
		c.Writable = append(c.Writable, r.Writable...)
		c.Writable = append(c.Writable, r.CacheDirs...)
	}
	c.Writable = outermost(c.Writable)
	if c.Namespaced() {
		// The host's /tmp and /dev/shm are other programs' too: their sockets (tmux, an ssh agent, X11) and
		// shared memory, which a command can use to act outside even on a read-only mount. A namespaced
		// sandbox gives a private one of each instead, and refuses the host's as its working directory or a
		// writable path.
		for _, shared := range []struct{ dir, holds string }{
			{"/tmp", "other programs' sockets (tmux, an ssh agent)"}, {"/dev/shm", "other programs' shared memory"}} {
			switch {
			case string(c.Dir) == shared.dir:
				return Confinement{}, fmt.Errorf("sandbox: the working directory is %s, the host's, which holds %s: "+
					"the sandbox has a private %s instead; run the command in a directory of its own (mkdir %s/work; "+
					"--cwd %s/work)", shared.dir, shared.holds, shared.dir, shared.dir, shared.dir)
			case slices.Contains(c.Writable, shared.dir):
				return Confinement{}, fmt.Errorf("sandbox: sandbox.writable holds %s, the host's, which holds %s: the "+
					"sandbox has a private %s instead; name a directory of its own there (%s/cache, say)",
					shared.dir, shared.holds, shared.dir, shared.dir)
			}
		}
	}
	for d, err := range unmade {
		if slices.ContainsFunc(c.Writable, func(w string) bool { return under(filepath.Clean(d), w) }) {
			return Confinement{}, err
		}
	}
	for _, o := range place.Own {
		if _, err := os.Lstat(o); errors.Is(err, os.ErrNotExist) && filepath.IsAbs(o) &&
			slices.ContainsFunc(c.Writable, func(w string) bool { return under(filepath.Clean(o), w) }) {
			// One of agentbash's own directories that is not there yet, inside the writable set: made now (empty,
			// as agentbash would make it), so it is kept read-only like the others instead of being the command's
			// to create (a config or session state planted there would run outside the sandbox later).
			if err := os.MkdirAll(o, 0o700); err != nil {
				return Confinement{}, fmt.Errorf("sandbox: agentbash's %s cannot be made to be kept read-only: %w", o, err)
			}
		}
		real, err := filepath.EvalSymlinks(o)
		if err != nil {
			continue // not there: Landlock keeps it from being made outside the writable set
		}
		// A writable path inside agentbash's own directories is not writable (own wins, as deny does).
		c.Writable = slices.DeleteFunc(c.Writable, func(w string) bool { return under(w, real) })
		if slices.ContainsFunc(c.Writable, func(w string) bool { return under(real, w) }) {
			c.ReadOnly = append(c.ReadOnly, real)
		}
	}
	if c.Namespaced() {
		c.Hide = r.DenyRead
		// What is hidden stays hidden: a read-only bind of it (agentbash's state directory is one of its own
		// and hidden) would show it again.
		c.ReadOnly = slices.DeleteFunc(c.ReadOnly, func(ro string) bool { return denied(ro) != "" })
		git, err := gitControl(c.Writable)
		if err != nil {
			return Confinement{}, err
		}
		c.ReadOnly = append(c.ReadOnly, git...)
		c.HideSockets = socketDirs(place.RuntimeDir)
		c.Pins = pins(c.Writable, append(slices.Clone(c.Hide), c.ReadOnly...))
	}
	c.Keep = place.Keep
	return c, nil
}

// throughLink says whether path (as given) reaches real through a symbolic link other than the home
// directory's own (a home at /home/u that is /usr/home/u is no link of the command's).
func throughLink(path, real, home string) bool {
	path = filepath.Clean(path)
	if home != "" {
		if rh, err := filepath.EvalSymlinks(home); err == nil && under(path, filepath.Clean(home)) {
			path = filepath.Join(rh, strings.TrimPrefix(path, filepath.Clean(home)))
		}
	}
	return path != real
}

// pins is the directories strictly between a root of roots and a path of protected inside it, parents first.
func pins(roots, protected []string) []string {
	var out []string
	for _, p := range protected {
		for _, root := range roots {
			if p == root || !under(p, root) {
				continue
			}
			for d := filepath.Dir(p); d != root && under(d, root); d = filepath.Dir(d) {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(a) - len(b) })
	return slices.Compact(out)
}

// outermost is paths without those inside another of them, sorted.
func outermost(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	return slices.DeleteFunc(paths, func(p string) bool {
		return slices.ContainsFunc(paths, func(q string) bool { return q != p && under(p, q) })
	})
}

// gitControl is the .git/hooks and .git/config of the repositories at the writable roots and one level
// below them (reference §13: read-only inside the workspace). A repository without a hooks directory gets
// one (git makes it on init anyway), so that a command cannot create it and put a hook in.
func gitControl(roots []string) ([]string, error) {
	var out []string
	protect := func(hooks string, more ...string) error {
		// A missing hooks directory is made: else the command could make it and put a hook in.
		if err := os.Mkdir(hooks, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("sandbox: %s cannot be made to be kept read-only: %w", hooks, err)
		}
		out = append(out, hooks)
		for _, p := range more {
			if _, err := os.Lstat(p); err == nil {
				out = append(out, p)
			}
		}
		return nil
	}
	for _, root := range roots {
		dirs := []string{filepath.Join(root, ".git")}
		if entries, err := os.ReadDir(root); err == nil {
			for _, e := range entries {
				if e.IsDir() && e.Name() != ".git" {
					dirs = append(dirs, filepath.Join(root, e.Name(), ".git"))
				}
			}
		}
		for _, g := range dirs {
			fi, err := os.Lstat(g)
			if err == nil && fi.Mode().IsRegular() {
				out = append(out, g) // a worktree's or submodule's "gitdir:" file: repointing it is a config
				continue
			}
			if err != nil || !fi.IsDir() {
				continue
			}
			// Submodules keep their repositories (config, hooks) under .git/modules.
			subs, _ := filepath.Glob(filepath.Join(g, "modules", "*", "config"))
			for _, sc := range subs {
				if err := protect(filepath.Join(filepath.Dir(sc), "hooks"), sc); err != nil {
					return nil, err
				}
			}
			if err := protect(filepath.Join(g, "hooks"), filepath.Join(g, "config")); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// socketDirs is where the host's unix sockets live (reference §13): /run and /var/run (when it is not a
// link to /run), and $XDG_RUNTIME_DIR when it is elsewhere; existing directories only.
func socketDirs(runtimeDir string) []string {
	var out []string
	for _, d := range []string{"/run", "/var/run", runtimeDir} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil || real == "/" {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		if !slices.ContainsFunc(out, func(o string) bool { return under(real, o) }) {
			out = append(out, real)
		}
	}
	return out
}

// Hint is details.sandbox.hint for a command that failed (reference §13), or "": what the sandbox refused,
// read from the command's own error messages, and what would allow it. A write refused outside the
// writable set (a path named in a "Permission denied", "Read-only file system", "Operation not permitted"
// or "Device or resource busy" line, relative ones taken from the working directory), into a path kept
// read-only (.git/hooks, .git/config, agentbash's own directories), any write in read-only mode, or, with the
// network off, a name that did not resolve or a host that was not reached (with the proxy, one not reached
// around it).
func (c Confinement) Hint(output string) string {
	lower := strings.ToLower(output)
	for orig := range strings.Lines(output) {
		line := strings.ToLower(orig)
		if !strings.Contains(line, "permission denied") && !strings.Contains(line, "read-only file system") &&
			!strings.Contains(line, "operation not permitted") && !strings.Contains(line, "device or resource busy") {
			continue
		}
		if c.Mode == ModeReadOnly {
			return "the sandbox is read-only: only the private /tmp is writable (it is gone after the command); " +
				"changing files needs --sandbox workspace-write, which the user who starts agentbash sets"
		}
		for _, path := range pathsIn(orig, string(c.Dir)) {
			if i := slices.IndexFunc(c.ReadOnly, func(ro string) bool { return under(path, ro) }); i >= 0 {
				return fmt.Sprintf("%s is read-only in the sandbox: a repository's .git/hooks and .git/config and "+
					"agentbash's own directories are never writable from inside; change it outside the sandbox",
					c.ReadOnly[i])
			}
			if !slices.ContainsFunc(c.Writable, func(w string) bool { return under(path, w) }) && !under(path, "/tmp") &&
				!under(path, "/dev") && !under(path, "/proc") {
				return c.writableHint()
			}
		}
	}
	if h := c.missingHint(output); h != "" {
		return h
	}
	// With the proxy, a connection or a name that failed on its own (not a proxy's answer, which says what
	// it refused) is a program that went around it.
	if c.Network == NetworkOff || c.Network == NetworkProxy && !strings.Contains(lower, "agentbash sandbox proxy:") {
		// The words of libc (curl, wget, git, Python, ssh, psql), Go ("no such host"), Rust ("failed to lookup
		// address"), Java and Node's error codes (npm, yarn).
		for _, sign := range []string{"could not resolve", "couldn't resolve", "unable to resolve",
			"temporary failure in name resolution", "name or service not known", "no address associated", "no such host",
			"failed to lookup address", "unknownhostexception", "getaddrinfo", "enotfound", "eai_again",
			"network is unreachable", "no route to host", "enetunreach", "ehostunreach",
			"failed to establish a new connection", "couldn't connect to server", "connection refused", "econnrefused"} {
			if !strings.Contains(lower, sign) {
				continue
			}
			if c.Network == NetworkProxy {
				return "the sandbox reaches the hosts of sandbox.allowHosts only through agentbash's proxy " +
					"(HTTP_PROXY, HTTPS_PROXY): a direct connection reaches nothing but the command's own loopback, " +
					"and no name resolves; a program that ignores the proxy, or bypasses it for loopback (Go's HTTP " +
					"client, database clients, ssh), must run with --sandbox-network on, which the user who starts " +
					"agentbash sets"
			}
			return "the sandbox's network is off: nothing but the command's own loopback is reachable, and no " +
				"name resolves; a command that needs the network must run with --sandbox-network on (or proxy with " +
				"--sandbox-allow-host HOST:PORT), which the user who starts agentbash sets"
		}
	}
	return ""
}

// missingHint is the hint for a path the command did not find because the sandbox hides it (a line with
// "No such file or directory" that names it): a hidden path (sandbox.denyRead, agentbash's own state), or,
// in a namespaced sandbox, a path in its private /tmp or /dev/shm that nothing of the host's is bound at
// (the working directory, the writable and kept paths are). It says what the sandbox is, never what the
// host has: a command could print such lines to learn which of the host's paths exist.
func (c Confinement) missingHint(output string) string {
	mounted := slices.Concat([]string{string(c.Dir)}, c.Writable, c.ReadOnly)
	for _, k := range c.Keep {
		mounted = append(mounted, string(k.Path))
	}
	for orig := range strings.Lines(output) {
		if !strings.Contains(strings.ToLower(orig), "no such file or directory") {
			continue
		}
		for _, path := range pathsIn(orig, string(c.Dir)) {
			if i := slices.IndexFunc(c.Hide, func(h string) bool { return under(path, h) }); i >= 0 {
				return fmt.Sprintf("%s is hidden in the sandbox (sandbox.denyRead, or agentbash's own state): it "+
					"reads as empty from inside; a command that needs it runs without that entry, which the user who "+
					"starts agentbash sets", c.Hide[i])
			}
			if !c.Namespaced() || slices.ContainsFunc(mounted, func(m string) bool { return m != "" && under(path, m) }) {
				continue
			}
			for _, private := range []string{"/tmp", "/dev/shm"} {
				if under(path, private) {
					return fmt.Sprintf("%s is in the sandbox's private %s, which starts empty at each command: the "+
						"host's %s is not seen from inside; keep what the command needs in the workspace or another "+
						"directory", path, private, private)
				}
			}
		}
	}
	return ""
}

// pathsIn is the paths an error line names: its quoted parts and its words with a slash, made absolute
// against dir.
func pathsIn(line, dir string) []string {
	var out []string
	add := func(p string) {
		p = strings.TrimRight(strings.TrimLeft(p, " \t\n,;(["), " \t\n.,;)]") // not a leading dot: ./tmp is relative
		if p == "" || strings.ContainsAny(p, " \t") {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, filepath.Clean(p))
	}
	for _, q := range []string{"'", "\"", "‘", "’", "`"} {
		parts := strings.Split(line, q)
		for i := 1; i < len(parts); i += 2 {
			add(parts[i])
		}
	}
	for _, w := range strings.FieldsFunc(line, func(r rune) bool {
		return r == ' ' || r == ':' || r == '\'' || r == '"' || r == '‘' || r == '’' || r == '`'
	}) {
		if strings.Contains(w, "/") {
			add(w)
		}
	}
	return out
}

func (c Confinement) writableHint() string {
	tmp := "the private /tmp"
	if !c.Namespaced() {
		tmp = "/tmp"
	}
	where := tmp
	if len(c.Writable) > 0 {
		dirs := slices.Clone([]string(c.Writable))
		if i := slices.Index(dirs, string(c.Workspace)); i > 0 { // the workspace first
			dirs = append(append([]string{string(c.Workspace)}, dirs[:i]...), dirs[i+1:]...)
		}
		where = strings.Join(dirs, ", ") + " and " + tmp
	}
	return fmt.Sprintf("the sandbox (%s) lets this command write only to %s; writing elsewhere needs the path in "+
		"sandbox.writable (--sandbox-writable PATH), which the user who starts agentbash sets", c.Mode, where)
}

// carve is root as Landlock rules without the paths of readOnly inside it: root itself when none is
// inside, else its entries but the ones that hold a read-only path, and those carved in turn.
func carve(root string, readOnly []string) (dirs, files []string) {
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, nil
	}
	inside := slices.ContainsFunc(readOnly, func(r string) bool { return under(r, root) })
	switch {
	case !fi.IsDir():
		if !inside && fi.Mode().IsRegular() {
			files = append(files, root)
		}
		return dirs, files
	case !inside:
		return []string{root}, nil
	case slices.Contains(readOnly, root):
		return nil, nil
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		d, f := carve(filepath.Join(root, e.Name()), readOnly)
		dirs, files = append(dirs, d...), append(files, f...)
	}
	return dirs, files
}
