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
// nothing when that file is already there with this binary's content (POSIX cksum: CRC and size), unless
// force; a file that differs (a broken copy, another build of the version) is replaced. Progress and
// outcome go to out as sentences. cmd:// names a program, not a shell: an error.
func Install(ctx context.Context, uri, exe string, force bool, out io.Writer) error {
	t, err := Parse(uri, Version)
	if err != nil {
		return err
	}
	dest := InstallDir + "/agentbash-" + Version
	probe := `printf '%s\n' "$(uname -s)" "$(uname -m)" "$HOME"; f="$HOME"/` + quote(dest) +
		`; if [ -f "$f" ] && [ -x "$f" ]; then cksum < "$f" 2>/dev/null || echo unreadable; else echo absent; fi`
	got, err := t.runShell(ctx, probe, nil)
	if err != nil {
		return err
	}
	f := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(f) != 4 {
		return fmt.Errorf("target %s: uname -s, uname -m, $HOME and cksum answered %q, not 4 lines", uri, got)
	}
	goos, goarch := platform(f[0], f[1])
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return fmt.Errorf("target %s runs %s/%s (uname: %s %s); this agentbash is built for %s/%s: install a build for %s/%s there",
			uri, goos, goarch, f[0], f[1], runtime.GOOS, runtime.GOARCH, goos, goarch)
	}
	path := f[2] + "/" + dest
	bin, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("install on %s: %w", uri, err)
	}
	defer bin.Close()
	sum, err := cksum(bin)
	if err != nil {
		return fmt.Errorf("install on %s: %s: %w", uri, exe, err)
	}
	there := strings.Join(strings.Fields(f[3]), " ")
	switch {
	case there == sum && !force:
		fmt.Fprintf(out, "agentbash %s is already installed on %s at %s: nothing copied\n", Version, uri, path)
		return nil
	case there != "absent" && there != sum:
		fmt.Fprintf(out, "the agentbash %s at %s on %s is not this one (cksum %s, this one %s): replacing it\n",
			Version, path, uri, there, sum)
	}
	if _, err := bin.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("install on %s: %w", uri, err)
	}
	copyScript := `set -e; d="$HOME"/` + quote(InstallDir) + `; mkdir -p "$d"; tmp="$d/.agentbash-install.$$"; ` +
		`trap 'rm -f "$tmp"' EXIT; cat > "$tmp"; chmod 755 "$tmp"; mv -f "$tmp" "$HOME"/` + quote(dest) + `; trap - EXIT`
	if _, err := t.runShell(ctx, copyScript, bin); err != nil {
		return err
	}
	fmt.Fprintf(out, "installed agentbash %s (%s/%s) on %s at %s\n", Version, goos, goarch, uri, path)
	return nil
}

// cksumTable is the CRC table of POSIX cksum: the polynomial 0x04C11DB7, most significant bit first.
var cksumTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&(1<<31) != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// cksum is what POSIX `cksum < file` prints for r's bytes: the CRC (the length's bytes, least significant
// first, follow the data; the result is complemented) and the size, in decimal, one space between.
func cksum(r io.Reader) (string, error) {
	var crc uint32
	var size int64
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			crc = crc<<8 ^ cksumTable[byte(crc>>24)^b]
		}
		size += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	for n := size; n > 0; n >>= 8 {
		crc = crc<<8 ^ cksumTable[byte(crc>>24)^byte(n)]
	}
	return fmt.Sprintf("%d %d", ^crc, size), nil
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
