package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mount is one line of /proc/self/mountinfo: where it is and its per-mount flags.
type mount struct {
	point string
	flags uintptr // MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC and the atime flags, as mounted
}

// mountView makes the stage's view of the filesystem in its own mount namespace (docs/architecture.md, "The
// sandbox"), before Landlock: every mount read-only (so metadata writes outside the writable set fail too,
// for root as well: Landlock has no right for chmod or utimes), a private /tmp and /dev/shm, empty
// read-only directories over the host's socket directories and the denied ones, /dev/null over denied
// files, then the writable set bound writable again, the kept files bound back, and agentbash's own
// directories and the repositories' .git/hooks and .git/config bound read-only. Nothing of it reaches the
// host: the namespace's mounts are private, and every mount point made is inside a tmpfs of this namespace.
func mountView(s StageSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	// Hold what comes back before anything hides it: an O_PATH descriptor keeps the directory or file itself,
	// wherever it is hidden later.
	type back struct {
		path     string
		writable bool
		fd       int
	}
	var backs []back
	hold := func(path string, writable bool) error {
		fd, err := openExact(path)
		if err != nil {
			return err
		}
		backs = append(backs, back{path, writable, fd})
		return nil
	}
	for _, w := range s.Writable {
		if err := hold(w, true); err != nil {
			return err
		}
	}
	roots := len(backs)
	for _, k := range s.Keep {
		if err := hold(string(k.Path), k.Writable); err != nil {
			return err
		}
	}
	hidden := append(append([]string{"/tmp", "/dev/shm"}, s.HideSockets...), s.Hide...)
	dir := string(s.Dir)
	if !slices.ContainsFunc(s.Writable, func(w string) bool { return under(dir, w) }) &&
		slices.ContainsFunc(hidden, func(h string) bool { return under(dir, h) }) {
		if err := hold(dir, false); err != nil { // a working directory in a hidden place, read-only
			return err
		}
	}
	if s.Network == NetworkOn { // the resolver's configuration often lives under /run (systemd-resolved)
		if real, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && real != "/etc/resolv.conf" {
			_ = hold(real, false)
		}
	}
	var readOnly []back
	for _, r := range s.ReadOnly {
		fd, err := openExact(r)
		if err != nil {
			return err
		}
		readOnly = append(readOnly, back{r, false, fd})
	}

	for _, m := range mounts {
		if err := remount(m.point, m.flags|unix.MS_RDONLY); err != nil && !unreachable(err) {
			return fmt.Errorf("make %s read-only: %w", m.point, err)
		}
	}
	var lockLater []string
	hide := func(h string) error {
		fi, err := os.Lstat(h)
		switch {
		case err != nil:
			return nil // nothing there to hide
		case fi.IsDir():
			mode := "0755"
			if h == "/tmp" || h == "/dev/shm" {
				mode = "1777"
			} else {
				lockLater = append(lockLater, h)
			}
			if err := unix.Mount("tmpfs", h, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+mode); err != nil {
				return fmt.Errorf("hide %s: %w", h, err)
			}
		default:
			if err := bindOver("/dev/null", h, false, mountFlags(mounts, "/dev/null")|unix.MS_RDONLY); err != nil {
				return fmt.Errorf("hide %s: %w", h, err)
			}
		}
		return nil
	}
	// What lies inside a writable root is hidden once the root is bound back: a root under a hidden
	// directory (a workspace in the host's /tmp) comes back from its descriptor as it was, and would
	// bring back what a hiding mount made before covered (or never found, the /tmp above it hidden).
	// (A writable root is never /tmp or /dev/shm itself: Plan refuses it.)
	var inside []string
	for _, h := range hidden {
		if slices.ContainsFunc(s.Writable, func(w string) bool { return h != w && under(h, w) }) {
			inside = append(inside, h)
			continue
		}
		if err := hide(h); err != nil {
			return err
		}
	}
	// The writable roots, then what is hidden inside them, then the pins inside them (bound from the view as
	// it is now, so the hiding mounts inside them come along), then what is kept and the read-only paths, on
	// top.
	bindAll := func(bs []back) error {
		for _, b := range bs {
			err := bindBack(b.fd, b.path, b.writable, mountFlags(mounts, b.path))
			unix.Close(b.fd)
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := bindAll(backs[:roots]); err != nil {
		return err
	}
	for _, h := range inside {
		if err := hide(h); err != nil {
			return err
		}
	}
	if err := pin(s.Pins, mounts); err != nil {
		return err
	}
	if err := bindAll(append(backs[roots:], readOnly...)); err != nil {
		return err
	}
	if err := privatePTYs(); err != nil {
		return err
	}
	for _, h := range lockLater {
		if err := remount(h, unix.MS_NOSUID|unix.MS_NODEV|unix.MS_RDONLY); err != nil {
			return fmt.Errorf("make %s read-only: %w", h, err)
		}
	}
	return nil
}

// pin makes each of dirs a mount point of itself, writable as its host mount is: a mount point cannot be
// renamed or removed, so what is protected below it stays where it is.
func pin(dirs []string, mounts []mount) error {
	for _, d := range dirs {
		fd, err := openExact(d)
		if err != nil {
			return err
		}
		err = bindBack(fd, d, true, mountFlags(mounts, d))
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// privatePTYs gives the command a pseudo-terminal instance of its own: the host's terminals in /dev/pts
// (another session's shell) are not there to write to, and programs that open a pseudo-terminal (script,
// expect) still can.
func privatePTYs() error {
	if _, err := os.Stat("/dev/pts"); err != nil {
		return nil
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC,
		"newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("a private /dev/pts: %w", err)
	}
	if _, err := os.Stat("/dev/ptmx"); err == nil {
		if err := unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("a private /dev/ptmx: %w", err)
		}
	}
	return nil
}

// openExact opens path (O_PATH) and checks that what it opened is path itself: no component of it became a
// symbolic link since the policy was resolved (a running sandboxed command can make one in its workspace).
func openExact(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	if got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil || got != path {
		unix.Close(fd)
		return -1, fmt.Errorf("%s changed since the policy was resolved (it is %s now)", path, got)
	}
	return fd, nil
}

// bindBack binds what fd holds at path, making the mount point first when path lies in a tmpfs of this
// namespace, then makes the new mount read-only or, when writable and the host's mount was writable,
// writable again (flags: the host mount's).
func bindBack(fd int, path string, writable bool, flags uintptr) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("bind %s: %w", path, err)
		}
		if isDir {
			err = os.Mkdir(path, 0o755)
		} else {
			err = os.WriteFile(path, nil, 0o600)
		}
		if err != nil {
			return fmt.Errorf("bind %s: %w", path, err)
		}
	}
	if !writable || flags&unix.MS_RDONLY != 0 {
		flags |= unix.MS_RDONLY
	}
	return bindOver("/proc/self/fd/"+strconv.Itoa(fd), path, isDir, flags)
}

// bindOver binds src at dst (recursively for a directory) and remounts the new mount with flags.
func bindOver(src, dst string, rec bool, flags uintptr) error {
	bind := uintptr(unix.MS_BIND)
	if rec {
		bind |= unix.MS_REC
	}
	if err := unix.Mount(src, dst, "", bind, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	if err := remount(dst, flags); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return nil
}

// remount sets the per-mount flags of the mount at point (a bind remount: the filesystem is untouched).
func remount(point string, flags uintptr) error {
	return unix.Mount("", point, "", unix.MS_BIND|unix.MS_REMOUNT|flags, "")
}

// unreachable says whether a remount failed because its mount point cannot be reached from here: gone,
// under a directory this user cannot enter, or over something that is not a directory any more. Such a
// mount cannot be written through from here either.
func unreachable(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ESTALE) || errors.Is(err, unix.ELOOP)
}

// mountFlags is the flags of the mount path lies on (the one with the longest mount point above it).
func mountFlags(mounts []mount, path string) uintptr {
	best, flags := -1, uintptr(0)
	for _, m := range mounts {
		if under(path, m.point) && len(m.point) > best {
			best, flags = len(m.point), m.flags
		}
	}
	return flags
}

// perMount are the mount options of mountinfo's sixth field that are per-mount flags; a remount in a user
// namespace must keep the ones locked by the outer namespace, so all of them are kept.
var perMount = map[string]uintptr{
	"ro": unix.MS_RDONLY, "nosuid": unix.MS_NOSUID, "nodev": unix.MS_NODEV, "noexec": unix.MS_NOEXEC,
	"noatime": unix.MS_NOATIME, "nodiratime": unix.MS_NODIRATIME, "relatime": unix.MS_RELATIME,
	"strictatime": unix.MS_STRICTATIME, "nosymfollow": unix.MS_NOSYMFOLLOW,
}

// readMounts is this mount namespace's mounts, as /proc/self/mountinfo lists them (parents first).
func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read the mounts: %w", err)
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		m := mount{point: unescapeMount(fields[4])}
		for _, o := range strings.Split(fields[5], ",") {
			m.flags |= perMount[o]
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the mounts: %w", err)
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011, \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
