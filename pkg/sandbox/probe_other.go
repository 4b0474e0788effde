//go:build !linux

package sandbox

func probe() Available {
	return Available{LandlockErr: errNotLinux, SeccompErr: errNotLinux}
}

// ProbeMain is the probe's process (never started off Linux).
func ProbeMain() int { return 0 }

// ProbeUserNS says there are no user namespaces off Linux.
func ProbeUserNS() error { return errNotLinux }
