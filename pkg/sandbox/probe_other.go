//go:build !linux

package sandbox

import "errors"

var errNotLinux = errors.New("the sandbox is built on Linux's Landlock and namespaces; this system has neither")

func probe() Available {
	return Available{LandlockErr: errNotLinux, SeccompErr: errNotLinux}
}

// ProbeMain is the probe's process (never started off Linux).
func ProbeMain() int { return 0 }

// ProbeUserNS says there are no user namespaces off Linux.
func ProbeUserNS() error { return errNotLinux }
