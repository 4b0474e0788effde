package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if c := Default(); c.MCP.MaxBytes != 20480 {
		t.Errorf("mcp.maxBytes defaults to %d, want 20480", c.MCP.MaxBytes)
	}
	for name, mutate := range map[string]func(*Config){
		"format":             func(c *Config) { c.Format = "xml" },
		"maxBytes":           func(c *Config) { c.MaxBytes = 0 },
		"killGrace":          func(c *Config) { c.KillGrace = -1 },
		"artifacts.maxBytes": func(c *Config) { c.Artifacts.MaxBytes = 0 },
		"result.nonZeroExit": func(c *Config) { c.Result.NonZeroExit = "maybe" },
		"shell.env":          func(c *Config) { c.Shell.Env = map[string]string{"A=B": "x"} },
		"shell.wrapper":      func(c *Config) { c.Shell.Wrapper = Argv{"", "x"} },
		"tasks.maxLifetime":  func(c *Config) { c.Tasks.MaxLifetime = -1 },
		"session":            func(c *Config) { c.Session = "../x" },
		"mcp.maxBytes":       func(c *Config) { c.MCP.MaxBytes = 0 },
		"sandbox.mode":       func(c *Config) { c.Sandbox.Mode = "strict" },
		"sandbox.network":    func(c *Config) { c.Sandbox.Network = "wifi" },
		"sandbox.allowHosts": func(c *Config) { c.Sandbox.AllowHosts = CommaList{"github.com"} }, // whatever the network
	} {
		c := Default()
		mutate(&c)
		err := c.Validate()
		if err == nil || len(err.Error()) < len(name) || err.Error()[:len(name)] != name {
			t.Errorf("%s: err = %v, want one naming the key", name, err)
		}
	}
}

func TestDefaultsCoverEveryKey(t *testing.T) {
	keys := Defaults()
	for _, k := range []string{"timeout", "maxBytes", "format", "killGrace", "shell.path", "shell.prefix",
		"shell.wrapper", "shell.snapshot", "shell.env", "artifacts.dir", "artifacts.maxBytes", "interceptor.enabled",
		"interceptor.tools", "interceptor.defaultRules", "interceptor.rules", "result.nonZeroExit",
		"tasks.dir", "tasks.maxLifetime", "session", "mcp.maxBytes", "sandbox.mode", "sandbox.network",
		"sandbox.writable", "sandbox.denyRead", "sandbox.cacheDirs", "sandbox.allowHosts"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no default for %s", k)
		}
	}
	if len(keys) != 28 {
		t.Errorf("%d keys, want 28", len(keys))
	}
}

func TestPaths(t *testing.T) {
	home, _ := os.UserHomeDir()
	if got := ExpandHome("~/x"); got != filepath.Join(home, "x") {
		t.Errorf("ExpandHome = %q", got)
	}
	if got := ExpandHome("/a/~"); got != "/a/~" {
		t.Errorf("ExpandHome = %q", got)
	}
	c := Default()
	c.Artifacts.Dir = "~/art"
	if got := c.ArtifactDir(); got != filepath.Join(home, "art") {
		t.Errorf("ArtifactDir = %q", got)
	}
}

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"nice -n 10", []string{"nice", "-n", "10"}},
		{"  ionice   -c3  ", []string{"ionice", "-c3"}},
		{"", nil},
		{"   ", nil},
		{`env 'A=b c' "d e" f\ g`, []string{"env", "A=b c", "d e", "f g"}},
		{`printf $'\t' ''`, []string{"printf", "\t", ""}},
		{`taskset -c 0-3 ~/bin/x *`, []string{"taskset", "-c", "0-3", "~/bin/x", "*"}}, // nothing expanded
		{`echo "a\$b"`, []string{"echo", "a$b"}},
	} {
		got, err := SplitWords(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"nice $X", "nice ${X}", "nice $(id)", "nice `id`", "nice $((1+2))", "nice <(x)",
		"nice; rm x", "nice | cat", "nice && x", "nice > f", "A=1 nice", "nice &", "! nice",
		"nice {a,b}", "nice 'unterminated", "nice @(a|b)",
	} {
		if got, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q) = %q, want an error", in, got)
		}
	}
}

func TestEnvironWrapperSplitsWords(t *testing.T) {
	got, _, err := Environ([]string{"AGENTBASH_SHELL_WRAPPER=nice -n 'ten x'", "AGENTBASH_INTERCEPTOR_TOOLS=read,grep find"})
	if err != nil {
		t.Fatal(err)
	}
	shell, _ := got["shell"].(map[string]any)
	if w, _ := shell["wrapper"].(Argv); !slices.Equal(w, Argv{"nice", "-n", "ten x"}) {
		t.Errorf("wrapper %#v", shell["wrapper"])
	}
	// Other lists still split on commas and blanks.
	ic, _ := got["interceptor"].(map[string]any)
	if tools, _ := ic["tools"].([]string); !slices.Equal(tools, []string{"read", "grep", "find"}) {
		t.Errorf("tools %#v", ic["tools"])
	}
	if _, _, err := Environ([]string{"AGENTBASH_SHELL_WRAPPER=nice $X"}); err == nil || !strings.Contains(err.Error(), "AGENTBASH_SHELL_WRAPPER") {
		t.Errorf("a wrapper with an expansion: err %v, want one naming the variable", err)
	}
}

// Without a home directory a config path keeps its `~` as written (the working directory's `~` is an
// error instead: run.ResolveDir).
func TestExpandHomeWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	if got := ExpandHome("~/x"); got != "~/x" {
		t.Errorf("ExpandHome = %q, want ~/x", got)
	}
}

// TestSandboxKeys: the sandbox's keys default to an unconfined policy with the reference's denied paths and
// caches; the environment's lists split at commas alone (a path may hold a blank); a bad mode or network,
// from the file or a variable, is an error naming the key or the variable; the section becomes the policy.
func TestSandboxKeys(t *testing.T) {
	p := Default().Sandbox.Policy()
	if p.On() || p.Network != "off" || len(p.Writable) != 0 || len(p.AllowHosts) != 0 ||
		!slices.Contains(p.DenyRead, "~/.ssh") || !slices.Contains(p.CacheDirs, "~/.cache") {
		t.Errorf("default policy %+v", p)
	}
	got, warnings, err := Environ([]string{"AGENTBASH_SANDBOX_MODE=read-only", "AGENTBASH_SANDBOX_NETWORK=on",
		"AGENTBASH_SANDBOX_WRITABLE=~/my work, /srv/a,,", "AGENTBASH_SANDBOX_DENYREAD=~/.ssh"})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Environ: %v %q", err, warnings)
	}
	want := map[string]any{"sandbox": map[string]any{"mode": sandbox.ModeReadOnly, "network": sandbox.NetworkOn,
		"writable": CommaList{"~/my work", "/srv/a"}, "denyRead": CommaList{"~/.ssh"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environment settings\n%#v\nwant\n%#v", got, want)
	}
	for env, msg := range map[string]string{
		"AGENTBASH_SANDBOX_MODE=strict":   `AGENTBASH_SANDBOX_MODE: want off, workspace-write or read-only, got "strict"`,
		"AGENTBASH_SANDBOX_NETWORK=maybe": `AGENTBASH_SANDBOX_NETWORK: want off, proxy or on, got "maybe"`,
		"AGENTBASH_SANDBOX_ALLOWHOSTS=a":  `AGENTBASH_SANDBOX_ALLOWHOSTS: "a": want HOST:PORT`,
	} {
		if _, _, err := Environ([]string{env}); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%s: err = %v, want %q…", env, err, msg)
		}
	}
	// A list without network proxy waits for a command that sets it (a flag, a later source): the policy
	// has the hosts only with the proxy.
	if _, _, err := Environ([]string{"AGENTBASH_SANDBOX_ALLOWHOSTS=a:1"}); err != nil {
		t.Errorf("allowHosts alone: %v", err)
	}
	hosts := Sandbox{Mode: sandbox.ModeWorkspaceWrite, AllowHosts: CommaList{"a:1"}}
	if p := hosts.Policy(); p.AllowHosts != nil || p.Check() != nil {
		t.Errorf("network off: %+v", p)
	}
	hosts.Network = sandbox.NetworkProxy
	if p := hosts.Policy(); !slices.Equal(p.AllowHosts, []string{"a:1"}) || p.Check() != nil {
		t.Errorf("network proxy: %+v", p)
	}
	f := writeFile(t, "sandbox:\n  mode: workspace-write\n  network: on\n  denyRead: []\n  writable: [~/a b]\n")
	got, err = f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"sandbox": map[string]any{"mode": sandbox.ModeWorkspaceWrite, "network": sandbox.NetworkOn,
		"denyRead": CommaList{}, "writable": CommaList{"~/a b"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("file settings\n%#v\nwant\n%#v", got, want)
	}
	f = writeFile(t, "sandbox:\n  mode: sandboxed\n")
	if _, err := f.Settings(); err == nil || err.Error() != f.Path+`: sandbox.mode: want off, workspace-write or read-only, got "sandboxed"` {
		t.Errorf("file: err = %v", err)
	}
}
