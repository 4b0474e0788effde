package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// specReader is a file holding data, open for reading from its start: an in-memory file (memfd), or a
// pipe a goroutine fills where there is none.
func specReader(data []byte) (*os.File, error) {
	if fd, err := unix.MemfdCreate("agentbash-sandbox", unix.MFD_CLOEXEC); err == nil {
		f := os.NewFile(uintptr(fd), "agentbash-sandbox")
		if _, err := f.Write(data); err == nil {
			if _, err := f.Seek(0, 0); err == nil {
				return f, nil
			}
		}
		f.Close()
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
	return r, nil
}

// sysProcAttr adds to cmd's attributes (session, parent-death signal) the namespaces c needs: a new user
// namespace where the caller keeps its uid and gid (root: every id, so files keep their owners), a mount
// namespace, and a network namespace for any network but on. The stage gets the capabilities it needs for
// the mounts and the loopback in its own user namespace only (ambient, so they survive its exec), and
// drops them all before the command.
func sysProcAttr(cmd *exec.Cmd, c Confinement) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !c.Namespaced() {
		return nil
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC // the host's SysV IPC is not there
	if c.Network != NetworkOn {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappingsEnableSetgroups = true
	} else {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	return nil
}

// startUnavailable is the error of a stage that could not even start. With namespaces, a refused clone or
// id mapping looks like any other failed start, so a probe tells them apart: when a user namespace can be
// made here, the start failed for another reason, said as it is.
func startUnavailable(err error, namespaced bool) error {
	if namespaced {
		if probeErr := ProbeUserNS(); probeErr != nil {
			return &Unavailable{Mechanism: UserNS, Reason: userNSReason(err)}
		}
	}
	return &Unavailable{Mechanism: "stage", Reason: "agentbash could not start its sandbox stage: " + err.Error()}
}

// stage confines this process as spec says and execs its command; it returns only on failure.
func stage(spec StageSpec) error {
	runtime.LockOSThread() // the exec that follows comes from this thread
	unix.CloseOnExec(reportFD)
	if spec.Namespaced() {
		if err := mountView(spec); err != nil {
			return &Unavailable{Mechanism: MountNS, Reason: err.Error()}
		}
		if spec.Network != NetworkOn {
			if err := loopbackUp(); err != nil {
				return &Unavailable{Mechanism: NetNS, Reason: "bring up the loopback: " + err.Error()}
			}
		}
	}
	if err := unix.Chdir(spec.Dir); err != nil {
		return &Unavailable{Mechanism: "stage", Reason: fmt.Sprintf("enter the working directory %s: %v", spec.Dir, err)}
	}
	for i := range spec.Files {
		if err := unix.Dup3(firstFD+i, specFD+i, 0); err != nil {
			return &Unavailable{Mechanism: "stage", Reason: fmt.Sprintf("pass descriptor %d: %v", specFD+i, err)}
		}
	}
	for fd := specFD + spec.Files; fd < firstFD+spec.Files; fd++ {
		if fd != reportFD {
			unix.Close(fd)
		}
	}
	if err := confine(spec.Confinement); err != nil {
		return err
	}
	path := spec.Argv[0]
	if spec.Path != "" {
		path = spec.Path
	}
	err := syscall.Exec(path, spec.Argv, spec.Env)
	u := &Unavailable{Mechanism: "stage", Reason: fmt.Sprintf("run %s: %v", path, err)}
	errors.As(err, &u.Errno)
	return u
}

// loopbackUp brings up lo in this (new, empty) network namespace: a server the command starts on its own
// loopback works.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
