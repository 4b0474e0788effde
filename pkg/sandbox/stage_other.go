//go:build !linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
)

// stage refuses off Linux: there is nothing to confine with.
func stage(StageSpec) error { return &Unavailable{Mechanism: LandlockFS, Reason: errNotLinux.Error()} }

func specReader([]byte) (*os.File, error) {
	return nil, &Unavailable{Mechanism: LandlockFS, Reason: errNotLinux.Error()}
}

func sysProcAttr(*exec.Cmd, Confinement) error {
	return &Unavailable{Mechanism: LandlockFS, Reason: errNotLinux.Error()}
}

func startUnavailable(err error, _ bool) error {
	return &Unavailable{Mechanism: "stage", Reason: err.Error()}
}

func reportPair() (r, w *os.File, err error) {
	return nil, nil, &Unavailable{Mechanism: LandlockFS, Reason: errNotLinux.Error()}
}

func readReport(*os.File) ([]byte, net.Listener, error) {
	return nil, nil, &Unavailable{Mechanism: LandlockFS, Reason: errNotLinux.Error()}
}
