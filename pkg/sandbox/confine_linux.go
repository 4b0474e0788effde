package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// confine applies the last part of c to this process, which must exec next (docs/architecture.md, "The
// sandbox"): no capabilities (the ambient and inheritable sets cleared, and root's bounding set, so even
// root execs with CapEff 0), no_new_privs, a seccomp filter (no new namespaces, no io_uring, no vsock), and
// Landlock: filesystem writes only under the writable set (read and execute everywhere), signals and
// abstract unix sockets scoped to the sandbox. It never downgrades: a right the kernel lacks is an error,
// and the caller does not exec.
func confine(c Confinement) error {
	if err := dropCapabilities(); err != nil {
		return &Unavailable{Mechanism: UserNS, Reason: "drop the capabilities: " + err.Error()}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return &Unavailable{Mechanism: Seccomp, Reason: "no_new_privs: " + err.Error()}
	}
	if err := installSeccomp(); err != nil {
		return &Unavailable{Mechanism: Seccomp, Reason: err.Error()}
	}
	dirs, files := writableRules(c)
	// What another process removes meanwhile (a carved directory's entries come and go) is not writable:
	// there is nothing to write to, and go-landlock skips it (IgnoreIfMissing). A writable root or kept
	// file that went missing is an error.
	root := func(p string) bool {
		return slices.Contains(c.Writable, p) || slices.ContainsFunc(c.Keep, func(k Bind) bool { return string(k.Path) == p })
	}
	for _, p := range append(slices.Clone(dirs), files...) {
		// go-landlock opens each path following links: none may have become one since the policy was resolved.
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, os.ErrNotExist) && !root(p) {
			continue
		}
		if err != nil || real != p {
			return &Unavailable{Mechanism: LandlockFS, Reason: fmt.Sprintf("%s changed since the policy was "+
				"resolved (it is %s now)", p, real)}
		}
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full").IgnoreIfMissing(),
		// Terminals, with their ioctls: a program may open a pseudo-terminal (script, expect, a REPL's pty).
		// In the namespaced level /dev/pts is an instance of the command's own.
		landlock.RWFiles("/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
	for _, p := range dirs {
		r := landlock.RWDirs(p)
		if !root(p) {
			r = r.IgnoreIfMissing()
		}
		rules = append(rules, r)
	}
	for _, p := range files {
		r := landlock.RWFiles(p)
		if !root(p) {
			r = r.IgnoreIfMissing()
		}
		rules = append(rules, r)
	}
	if err := cfg.Restrict(rules...); err != nil {
		return &Unavailable{Mechanism: LandlockFS, Reason: err.Error()}
	}
	return nil
}

// writableRules is the directories and files Landlock lets c's command write. The namespaced level adds
// its private /tmp and /dev/shm and the kept files that are writable; its read-only paths inside the
// writable set are read-only mounts. The writes-only level has no mounts: /tmp and /dev/shm are the
// host's (reference §13), and a writable directory holding a read-only path is replaced by what it holds
// but that path, so the read-only path and its parents stay unwritable (a file or directory made later
// directly in such a directory is refused; README "Sandbox").
func writableRules(c Confinement) (dirs, files []string) {
	if c.Namespaced() {
		dirs = append(slices.Clone(c.Writable), "/tmp")
		if _, err := os.Stat("/dev/shm"); err == nil {
			dirs = append(dirs, "/dev/shm")
		}
	} else {
		roots := slices.Clone(c.Writable)
		for _, host := range []string{"/tmp", "/dev/shm"} {
			if real, err := filepath.EvalSymlinks(host); err == nil {
				roots = append(roots, real)
			}
		}
		for _, w := range roots {
			d, f := carve(w, c.ReadOnly)
			dirs, files = append(dirs, d...), append(files, f...)
		}
	}
	for _, k := range c.Keep {
		if k.Writable {
			files = append(files, string(k.Path))
		}
	}
	return dirs, files
}

// dropCapabilities makes sure the command execs with no capabilities: the ambient and inheritable sets are
// emptied for everyone (a user's process may hold ambient capabilities; with no_new_privs its file
// capabilities are not granted), and for root, which execs with its bounding set, the bounding set too.
// A capability that cannot be dropped is an error: the stage does not exec.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear the inheritable set: %w", err)
	}
	if unix.Geteuid() != 0 {
		return nil
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	return nil
}

// The namespace flags of clone and unshare the filter refuses.
const newNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// installSeccomp loads the filter on every thread: EPERM for unshare, setns, clone with a namespace flag,
// io_uring, the keyrings (keyctl, add_key, request_key) and vsock sockets; ENOSYS for clone3 (its flags are out of a filter's reach; libc falls back to
// clone); a foreign architecture is killed.
func installSeccomp() error {
	arch, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// offsets in struct seccomp_data
		offNr, offArch, offArg0 = 0, 4, 16
	)
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	deny := func(nr uintptr, action uint32) []unix.SockFilter {
		return []unix.SockFilter{{Code: jeq, K: uint32(nr), Jt: 0, Jf: 1}, {Code: ret, K: action}}
	}
	f := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: arch, Jt: 1, Jf: 0},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: offNr},
	}
	f = append(f, deny(unix.SYS_UNSHARE, eperm)...)
	f = append(f, deny(unix.SYS_SETNS, eperm)...)
	f = append(f, deny(unix.SYS_CLONE3, enosys)...)
	f = append(f, deny(unix.SYS_IO_URING_SETUP, eperm)...)
	f = append(f, deny(unix.SYS_IO_URING_ENTER, eperm)...)
	f = append(f, deny(unix.SYS_IO_URING_REGISTER, eperm)...)
	// The kernel's keyrings: the caller's session keyring is shared with the command, which could read its
	// keys and leave keys of its own behind.
	f = append(f, deny(unix.SYS_KEYCTL, eperm)...)
	f = append(f, deny(unix.SYS_ADD_KEY, eperm)...)
	f = append(f, deny(unix.SYS_REQUEST_KEY, eperm)...)
	// clone: refuse a namespace flag in its first argument (the flags on both architectures).
	f = append(f,
		unix.SockFilter{Code: jeq, K: uint32(unix.SYS_CLONE), Jt: 0, Jf: 3},
		unix.SockFilter{Code: ld, K: offArg0},
		unix.SockFilter{Code: jset, K: newNamespaces, Jt: 0, Jf: 1},
		unix.SockFilter{Code: ret, K: eperm},
		unix.SockFilter{Code: ld, K: offNr}, // reload for the next test
	)
	// socket(AF_VSOCK, …)
	f = append(f,
		unix.SockFilter{Code: jeq, K: uint32(unix.SYS_SOCKET), Jt: 0, Jf: 3},
		unix.SockFilter{Code: ld, K: offArg0},
		unix.SockFilter{Code: jeq, K: unix.AF_VSOCK, Jt: 0, Jf: 1},
		unix.SockFilter{Code: ret, K: eperm},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	)
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	const seccompSetModeFilter, filterFlagTsync = 1, 1
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, seccompSetModeFilter, filterFlagTsync,
		uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return errno
	}
	return nil
}
