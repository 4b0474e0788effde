package target

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Install copies the agentbash binary at exe (this one: os.Executable) to the target of uri, as
// ~/.local/share/agentbash/bin/agentbash-VERSION there, through the connector's stdin: written to a
// temporary name, made executable, then renamed, so a connection that breaks leaves no half binary. It
// first checks the target's OS and architecture (uname -s, uname -m) against this binary's, and copies
// nothing when that version is already there. Progress and outcome go to out as sentences. cmd:// names a
// program, not a shell: an error.
func Install(ctx context.Context, uri, exe string, out io.Writer) error {
	t, err := Parse(uri, Version)
	if err != nil {
		return err
	}
	dest := InstallDir + "/agentbash-" + Version
	probe := `printf '%s\n' "$(uname -s)" "$(uname -m)" "$HOME"; if [ -x "$HOME"/` + quote(dest) + ` ]; then echo present; else echo absent; fi`
	got, err := t.runShell(ctx, probe, nil)
	if err != nil {
		return err
	}
	f := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(f) != 4 {
		return fmt.Errorf("target %s: uname -s, uname -m and $HOME answered %q, not 4 lines", uri, got)
	}
	goos, goarch := platform(f[0], f[1])
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return fmt.Errorf("target %s runs %s/%s (uname: %s %s); this agentbash is built for %s/%s: install a build for %s/%s there",
			uri, goos, goarch, f[0], f[1], runtime.GOOS, runtime.GOARCH, goos, goarch)
	}
	path := f[2] + "/" + dest
	if f[3] == "present" {
		fmt.Fprintf(out, "agentbash %s is already installed on %s at %s: nothing copied\n", Version, uri, path)
		return nil
	}
	bin, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("install on %s: %w", uri, err)
	}
	defer bin.Close()
	copyScript := `set -e; d="$HOME"/` + quote(InstallDir) + `; mkdir -p "$d"; tmp="$d/.agentbash-install.$$"; ` +
		`trap 'rm -f "$tmp"' EXIT; cat > "$tmp"; chmod 755 "$tmp"; mv -f "$tmp" "$HOME"/` + quote(dest) + `; trap - EXIT`
	if _, err := t.runShell(ctx, copyScript, bin); err != nil {
		return err
	}
	fmt.Fprintf(out, "installed agentbash %s (%s/%s) on %s at %s\n", Version, goos, goarch, uri, path)
	return nil
}

// runShell runs script on the target through its connector with stdin (nil: none) and returns its
// stdout. A failure names the target and the connector's last stderr line.
func (t Target) runShell(ctx context.Context, script string, stdin io.Reader) (string, error) {
	argv, err := t.ShellArgv(script)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdin = stdin
	var stdout strings.Builder
	stderr := &tail{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.WaitDelay = closeWait
	if err := cmd.Run(); err != nil {
		says := stderr.Last()
		if says == "" {
			says = err.Error()
		}
		return "", fmt.Errorf("target %s: %s", t.URI, says)
	}
	return stdout.String(), nil
}

// platform is GOOS and GOARCH for what uname -s and uname -m print; an unknown name stays as printed,
// lower case.
func platform(sys, machine string) (goos, goarch string) {
	goos = strings.ToLower(sys)
	switch m := strings.ToLower(machine); m {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64":
		goarch = "arm64"
	case "i386", "i686":
		goarch = "386"
	case "armv7l", "armv6l":
		goarch = "arm"
	default:
		goarch = m
	}
	return goos, goarch
}
