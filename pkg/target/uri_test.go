package target

import (
	"slices"
	"strings"
	"testing"
)

// script is what the connector runs on the target for version "1.2" without and with a start directory.
var (
	script    = rpcScript("1.2", "")
	scriptDir = rpcScript("1.2", "/srv/app")
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		uri  string
		argv []string
	}{
		{"ssh://build", []string{"ssh", "-T", "-o", "BatchMode=yes", "--", "build", "sh -c " + quote(script)}},
		{"ssh://me@build:2222/srv/app", []string{"ssh", "-T", "-o", "BatchMode=yes", "-l", "me", "-p", "2222", "--", "build",
			"sh -c " + quote(scriptDir)}},
		{"ssh://build/~/src", []string{"ssh", "-T", "-o", "BatchMode=yes", "--", "build", "sh -c " + quote(rpcScript("1.2", "~/src"))}},
		{"ssh://[::1]:22", []string{"ssh", "-T", "-o", "BatchMode=yes", "-p", "22", "--", "::1", "sh -c " + quote(script)}},
		{"docker://dev", []string{"docker", "exec", "-i", "dev", "sh", "-c", script}},
		{"podman://a1b2c3", []string{"podman", "exec", "-i", "a1b2c3", "sh", "-c", script}},
		{"kubectl://web-0", []string{"kubectl", "exec", "-i", "web-0", "--", "sh", "-c", script}},
		{"kubectl://prod/web-0", []string{"kubectl", "exec", "-i", "-n", "prod", "web-0", "--", "sh", "-c", script}},
		{"kubectl://prod/web-0/app", []string{"kubectl", "exec", "-i", "-n", "prod", "web-0", "-c", "app", "--", "sh", "-c", script}},
		{"kubectl:///web-0/app", []string{"kubectl", "exec", "-i", "web-0", "-c", "app", "--", "sh", "-c", script}},
		{`cmd://env A='x y' sh -c "exec agentbash rpc"`, []string{"env", "A=x y", "sh", "-c", "exec agentbash rpc"}},
	} {
		got, err := Parse(tt.uri, "1.2")
		if err != nil || !slices.Equal(got.Argv, tt.argv) || got.URI != tt.uri {
			t.Errorf("Parse(%q) = %q, %v\nwant %q", tt.uri, got.Argv, err, tt.argv)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for uri, want := range map[string]string{
		"build":                  "want SCHEME://",
		"ftp://build":            `unknown scheme "ftp"`,
		"ssh://":                 "empty host",
		"ssh://me@":              "empty host",
		"ssh://-oProxyCommand=x": "begins with -",
		"ssh://-l@build":         `user "-l" begins with -`,
		"ssh://build:0":          `port "0": want a number from 1 to 65535`,
		"ssh://build:99999":      "port",
		"ssh://build:":           "port",
		"ssh://build:x":          "want ssh://",
		"ssh://me:pw@build":      "no password",
		"ssh://build?x=1":        "without ? or #",
		"ssh://bu ild":           "a space",
		"docker://":              "empty container",
		"docker://-it":           "begins with -",
		"docker://a/b":           "without /",
		"podman://x y":           "a space",
		"kubectl://":             "empty pod",
		"kubectl://ns/":          "empty pod",
		"kubectl://-n/pod":       "namespace",
		"kubectl://ns/pod/-c":    "container",
		"kubectl://a/b/c/d":      "want kubectl://",
		"cmd://":                 "want cmd://ARGV",
		"cmd://a; b":             "split like shell.wrapper",
		"cmd://nice $X":          "nothing is expanded",
		"ssh://h/tmp%09x":        "cannot be passed to the target's shell",
		"ssh://h/tmp%0Ax":        "cannot be passed to the target's shell",
		"ssh://h/tmp%ffx":        "cannot be passed to the target's shell",
	} {
		_, err := Parse(uri, "1.2")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+uri+`"`) {
			t.Errorf("Parse(%q) = %v; want an error naming the URI with %q", uri, err, want)
		}
	}
}

// TestRPCScript: the target's rpc runs its commands where it is (--target local, whatever its environment or
// config name); the connector's script prefers this version where target install puts it, then the PATH,
// else says so on stderr and exits 127; the start directory is one quoted word.
func TestRPCScript(t *testing.T) {
	s := rpcScript("1.2", "/a b/'c'")
	for _, want := range []string{
		`b="$HOME"/.local/share/agentbash/bin/agentbash-1.2;`, `exec "$b" rpc --target local --cwd "/a b/'c'"`,
		`command -v agentbash`, `echo "` + notInstalled, `exit 127`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script %s\nlacks %s", s, want)
		}
	}
	if tg, _ := Parse("cmd://x", "1"); tg.shell != nil {
		t.Error("cmd:// has a shell")
	}
	if _, err := (Target{URI: "cmd://x"}).ShellArgv("true"); err == nil || !strings.Contains(err.Error(), "not a shell") {
		t.Errorf("ShellArgv of cmd:// = %v", err)
	}
}
