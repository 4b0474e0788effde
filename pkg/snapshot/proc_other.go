//go:build !linux

package snapshot

import (
	"os"
	"syscall"
)

// helperAttr starts the helper in a session of its own; there is no parent-death signal off Linux.
func helperAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// shellAttr starts the generating shell in a session of its own.
func shellAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func selfExecutable() (string, error) { return os.Executable() }
