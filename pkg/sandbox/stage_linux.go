package sandbox

import (
	"errors"
	"fmt"
	"net"
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
		if spec.Network == NetworkProxy {
			port, err := handOverListener()
			if err != nil {
				return &Unavailable{Mechanism: Proxy, Reason: "hand the proxy's listener to the supervisor: " + err.Error()}
			}
			spec.Env = proxyEnv(spec.Env, port)
		}
	}
	if err := unix.Chdir(string(spec.Dir)); err != nil {
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
		path = string(spec.Path)
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

// reportPair is the stage's report channel: a SOCK_SEQPACKET socket pair, so a failure is one message and
// the proxy's listener can be handed over as a descriptor (SCM_RIGHTS).
func reportPair() (r, w *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("the stage's report channel: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "sandbox-report"), os.NewFile(uintptr(fds[1]), "sandbox-report"), nil
}

// listenerMessage is the data of the report message that carries the proxy's listener.
const listenerMessage = "listener"

// handOverListener opens the proxy's listener on 127.0.0.1 in this (the command's) network namespace, on a
// port the kernel picks, sends it to the supervisor on the report channel and closes it here: the command
// never holds it. It returns the port.
func handOverListener() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return 0, fmt.Errorf("bind 127.0.0.1: %w", err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return 0, fmt.Errorf("listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	in4, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return 0, fmt.Errorf("the listener's address is a %T", sa)
	}
	if err := unix.Sendmsg(reportFD, []byte(listenerMessage), unix.UnixRights(fd), nil, 0); err != nil {
		return 0, fmt.Errorf("send it: %w", err)
	}
	return in4.Port, nil
}

// readReport reads the stage's report until the exec closes it (EOF): the failure message, if any, and
// the proxy's listener, if one came.
func readReport(f *os.File) (msg []byte, ln net.Listener, err error) {
	fd := int(f.Fd())
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if ln != nil {
				ln.Close()
			}
			return nil, nil, err
		}
		if n == 0 && oobn == 0 {
			return msg, ln, nil
		}
		var fds []int
		if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, c := range cmsgs {
				if rights, err := unix.ParseUnixRights(&c); err == nil {
					fds = append(fds, rights...)
				}
			}
		}
		if len(fds) == 0 {
			msg = append(msg, buf[:n]...)
			continue
		}
		for _, extra := range fds[1:] {
			unix.Close(extra)
		}
		lf := os.NewFile(uintptr(fds[0]), "proxy-listener")
		l, err := net.FileListener(lf) // a copy of its own
		lf.Close()
		if err != nil || ln != nil || string(buf[:n]) != listenerMessage {
			if l != nil {
				l.Close()
			}
			if ln != nil {
				ln.Close()
			}
			return nil, nil, fmt.Errorf("the stage handed over something else than one listener (%v)", err)
		}
		ln = l
	}
}
