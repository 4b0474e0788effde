package target

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/internal/sshtest"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct{ sys, machine, goos, goarch string }{
		{"Linux", "x86_64", "linux", "amd64"},
		{"Linux", "aarch64", "linux", "arm64"},
		{"Darwin", "arm64", "darwin", "arm64"},
		{"FreeBSD", "riscv64", "freebsd", "riscv64"},
	} {
		if os, arch := platform(tt.sys, tt.machine); os != tt.goos || arch != tt.goarch {
			t.Errorf("platform(%s, %s) = %s/%s, want %s/%s", tt.sys, tt.machine, os, arch, tt.goos, tt.goarch)
		}
	}
}

// TestInstallRefusesCmd: cmd:// names a program, not a shell to copy through.
func TestInstallRefusesCmd(t *testing.T) {
	err := Install(ctx(t), "cmd://sh -c true", bin, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cmd://sh -c true") || !strings.Contains(err.Error(), "not a shell") {
		t.Errorf("install through cmd://: %v", err)
	}
}

// TestCksum: cksum is what the POSIX cksum utility prints.
func TestCksum(t *testing.T) {
	for _, in := range []string{"", "a", "hello\n", strings.Repeat("0123456789abcdef", 4097)} {
		cmd := exec.Command("cksum")
		cmd.Stdin = strings.NewReader(in)
		want, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := cksum(strings.NewReader(in)); err != nil || got != strings.TrimSpace(string(want)) {
			t.Errorf("cksum of %d bytes = %q %v, want %q", len(in), got, err, want)
		}
	}
}

// TestInstallRepairs: over ssh, an install copies; a second finds the same binary and copies nothing; a
// broken copy there (truncated) is replaced; --force copies anyway. A connection reaches it after.
func TestInstallRepairs(t *testing.T) {
	s := sshServer(t, sshtest.Options{}, false)
	uri := "ssh://" + sshtest.Alias
	installed := filepath.Join(s.Home, InstallDir, "agentbash-"+Version)
	install := func(force bool, want string) {
		t.Helper()
		var out strings.Builder
		if err := Install(ctx(t), uri, bin, force, &out); err != nil || !strings.Contains(out.String(), want) {
			t.Fatalf("install (force %v): %v %q, want %q", force, err, out.String(), want)
		}
		a, _ := os.ReadFile(bin)
		if b, err := os.ReadFile(installed); err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s is not the binary (%d bytes of %d): %v", installed, len(b), len(a), err)
		}
	}
	install(false, "installed agentbash")
	install(false, "already installed")
	if err := os.Truncate(installed, 1000); err != nil {
		t.Fatal(err)
	}
	install(false, "is not this one (cksum")
	install(true, "installed agentbash")
	if h, err := open(t, uri).Hello(ctx(t)); err != nil || h.Version != Version {
		t.Errorf("hello after install: %+v %v", h, err)
	}
}
