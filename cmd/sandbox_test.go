package cmd

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// TestSandboxFlags: the sandbox flags set their keys over the environment and the file, a list flag's paths
// (repeated, commas kept) replacing the key's list; a bad mode or network, or network proxy (not built
// yet), is a usage error naming the flag; and the service gets the policy.
func TestSandboxFlags(t *testing.T) {
	path := writeConfig(t, "sandbox:\n  mode: read-only\n  writable: [/file]\n  cacheDirs: []\n")
	cfg, _, err := loadRun(t, []string{"AGENTBASH_SANDBOX_NETWORK=on", "AGENTBASH_SANDBOX_DENYREAD=~/.ssh,~/my secrets"},
		"--config", path, "--sandbox", "workspace-write", "--sandbox-writable", "/a,b", "--sandbox-writable", "~/c d")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Sandbox{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn,
		Writable: config.CommaList{"/a,b", "~/c d"}, DenyRead: config.CommaList{"~/.ssh", "~/my secrets"},
		CacheDirs: config.CommaList{}, AllowHosts: config.CommaList{}}
	if !reflect.DeepEqual(cfg.Sandbox, want) {
		t.Errorf("sandbox\n%#v\nwant\n%#v", cfg.Sandbox, want)
	}
	if p := serviceConfig(cfg, nil, nil).Sandbox; !reflect.DeepEqual(p, cfg.Sandbox.Policy()) || !p.On() {
		t.Errorf("service policy %+v", p)
	}
	cfg, _, err = loadRun(t, nil, "--sandbox", "read-only", "--sandbox-deny-read", "~/only", "--sandbox-network", "off")
	// The flag adds to the list: naming one more secret never unhides the defaults.
	if err != nil || !reflect.DeepEqual(cfg.Sandbox.DenyRead, append(config.CommaList(sandbox.DefaultDenyRead), "~/only")) ||
		cfg.Sandbox.Mode != sandbox.ModeReadOnly {
		t.Errorf("deny-read flag: %+v, %v", cfg.Sandbox, err)
	}
	// A sandbox flag without a mode is a usage error: it would confine nothing without a word.
	if _, _, err := loadRun(t, nil, "--sandbox-network", "off"); err == nil || !strings.Contains(err.Error(), "confines nothing without a sandbox mode") {
		t.Errorf("a flag without a mode: %v", err)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--sandbox", "bogus"}},
		{[]string{"--sandbox-network", "wifi"}},
		{[]string{"--sandbox-allow-host", "github.com:443"}},
	} {
		_, _, err := loadRun(t, nil, tc.args...)
		if _, usage := errors.AsType[usageError](err); !usage || !strings.HasPrefix(err.Error(), tc.args[0]+": ") {
			t.Errorf("%q: err = %v, want a usage error naming the flag", tc.args, err)
		}
	}
	// Hosts from the file wait for a command with the proxy: a flag that sets it uses them, one that sets the
	// network off has none. From a flag, hosts without the proxy are a usage error.
	path = writeConfig(t, "sandbox:\n  allowHosts: [github.com:443]\n")
	cfg, _, err = loadRun(t, nil, "--config", path, "--sandbox", "workspace-write", "--sandbox-network", "proxy")
	if p := cfg.Sandbox.Policy(); err != nil || !slices.Equal(p.AllowHosts, []string{"github.com:443"}) {
		t.Errorf("file hosts, flag proxy: %+v, %v", p, err)
	}
	path = writeConfig(t, "sandbox:\n  network: proxy\n  allowHosts: [github.com:443]\n")
	cfg, _, err = loadRun(t, nil, "--config", path, "--sandbox", "workspace-write", "--sandbox-network", "off")
	if p := cfg.Sandbox.Policy(); err != nil || p.AllowHosts != nil || p.Network != sandbox.NetworkOff {
		t.Errorf("file proxy, flag off: %+v, %v", p, err)
	}
	_, _, err = loadRun(t, nil, "--config", path, "--sandbox", "workspace-write", "--sandbox-network", "on", "--sandbox-allow-host", "a:1")
	if _, usage := errors.AsType[usageError](err); !usage || !strings.HasPrefix(err.Error(), "--sandbox-allow-host: only network: proxy uses it") {
		t.Errorf("flag hosts, flag on: %v", err)
	}
	// From a flag, hosts replace the file's and the environment's list (a flag says this command's hosts).
	path = writeConfig(t, "sandbox:\n  allowHosts: [github.com:443]\n")
	cfg, _, err = loadRun(t, []string{"AGENTBASH_SANDBOX_ALLOWHOSTS=a:1"}, "--config", path, "--sandbox", "workspace-write",
		"--sandbox-network", "proxy", "--sandbox-allow-host", "b:2")
	if p := cfg.Sandbox.Policy(); err != nil || !slices.Equal(p.AllowHosts, []string{"b:2"}) {
		t.Errorf("flag hosts over file and environment: %+v, %v", p, err)
	}
	// The same values from the file are config errors naming the file and the key.
	path = writeConfig(t, "sandbox:\n  network: proxy\n  allowHosts: [github.com]\n")
	_, _, err = loadRun(t, nil, "--config", path)
	if _, cfgErr := errors.AsType[configError](err); !cfgErr || !strings.Contains(err.Error(), path+`: sandbox.allowHosts: "github.com": want HOST:PORT`) {
		t.Errorf("file: err = %v", err)
	}
}

// A sandbox flag the rest of the settings would not use is a usage error whose fix is whole: following it
// meets no second refusal (the fix is tried too).
func TestSandboxFlagsWholeFix(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string // the error's text; "" for none
		fix  []string
	}{
		{nil, []string{"--sandbox-allow-host", "a:1"}, "--sandbox-allow-host: only network: proxy uses it, and only with a " +
			"sandbox mode (add --sandbox workspace-write --sandbox-network proxy, or set sandbox.mode and sandbox.network: proxy)",
			[]string{"--sandbox", "workspace-write", "--sandbox-network", "proxy"}},
		{nil, []string{"--sandbox-network", "on", "--sandbox-allow-host", "a:1"}, "--sandbox-allow-host: only network: proxy " +
			"uses it, and only with a sandbox mode", []string{"--sandbox", "workspace-write", "--sandbox-network", "proxy"}},
		{nil, []string{"--sandbox", "read-only", "--sandbox-allow-host", "a:1"}, "--sandbox-allow-host: only network: proxy " +
			"uses it (add --sandbox-network proxy, or set sandbox.network: proxy)", []string{"--sandbox-network", "proxy"}},
		{[]string{"AGENTBASH_SANDBOX_NETWORK=proxy"}, []string{"--sandbox-allow-host", "a:1"},
			"--sandbox-allow-host confines nothing without a sandbox mode: add --sandbox workspace-write (or read-only), or set sandbox.mode",
			[]string{"--sandbox", "read-only"}},
		{nil, []string{"--sandbox-network", "proxy", "--sandbox-allow-host", "a:1"},
			"--sandbox-network confines nothing without a sandbox mode: add --sandbox workspace-write (or read-only), or set sandbox.mode",
			[]string{"--sandbox", "workspace-write"}},
		{nil, []string{"--sandbox-writable", "/tmp"},
			"--sandbox-writable confines nothing without a sandbox mode: add --sandbox workspace-write, or set sandbox.mode",
			[]string{"--sandbox", "workspace-write"}},
		{nil, []string{"--sandbox-network", "on", "--sandbox-writable", "/tmp"}, "--sandbox-network confines nothing without " +
			"a sandbox mode: add --sandbox workspace-write, or set sandbox.mode", []string{"--sandbox", "workspace-write"}},
		{nil, []string{"--sandbox", "read-only", "--sandbox-writable", "/tmp"},
			"--sandbox-writable: read-only mode writes only in a private /tmp (use --sandbox workspace-write)",
			[]string{"--sandbox", "workspace-write"}},
		{nil, []string{"--sandbox-deny-read", "/x"}, "--sandbox-deny-read confines nothing without a sandbox mode: add " +
			"--sandbox workspace-write (or read-only), or set sandbox.mode", []string{"--sandbox", "read-only"}},
		// Writable paths from the file wait for a workspace-write command.
		{[]string{"AGENTBASH_SANDBOX_WRITABLE=/tmp"}, []string{"--sandbox", "read-only"}, "", nil},
	} {
		_, _, err := loadRun(t, tc.env, tc.args...)
		if _, usage := errors.AsType[usageError](err); tc.want != "" && (!usage || !strings.HasPrefix(err.Error(), tc.want)) ||
			tc.want == "" && err != nil {
			t.Errorf("%q: err = %v, want %q", tc.args, err, tc.want)
		}
		if tc.fix == nil {
			continue
		}
		if _, _, err := loadRun(t, tc.env, append(slices.Clone(tc.args), tc.fix...)...); err != nil {
			t.Errorf("%q with the fix %q: %v", tc.args, tc.fix, err)
		}
	}
}
