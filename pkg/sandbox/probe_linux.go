package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Values of the Landlock and seccomp interfaces that x/sys does not name.
const (
	landlockCreateRulesetVersion = 1 << 0 // LANDLOCK_CREATE_RULESET_VERSION
	seccompGetActionAvail        = 2      // SECCOMP_GET_ACTION_AVAIL
	seccompRetErrno              = 0x00050000
)

func probe() Available {
	var a Available
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		a.LandlockErr = errno
	} else {
		a.LandlockABI = int(abi)
	}
	action := uint32(seccompRetErrno)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, seccompGetActionAvail, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		a.SeccompErr = errno
	}
	return a
}

// ProbeUserNS makes a real user namespace: this binary re-executed as ProbeCommand in a new one, mapping the
// caller's uid to 0 as the sandbox's first stage does. AppArmor and outer sandboxes refuse only at clone
// time (or at the mapping), so nothing short of a real one answers.
func ProbeUserNS() error {
	cmd := exec.Command("/proc/self/exe", ProbeCommand)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return errors.New("the probe in a new user namespace failed: " + exit.Error())
	}
	return err
}

// ProbeMain is the probe's process: it started, in its namespace; nothing else to do.
func ProbeMain() int { return 0 }
