package target

import (
	"io"
	"strings"
	"testing"
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
	err := Install(ctx(t), "cmd://sh -c true", bin, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cmd://sh -c true") || !strings.Contains(err.Error(), "not a shell") {
		t.Errorf("install through cmd://: %v", err)
	}
}
