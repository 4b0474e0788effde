package tasks

import (
	"os"
	"os/exec"
	"testing"
)

// The portable liveness check (Alive where there is no /proc), exercised here on Linux: a running process
// is alive, one that ended and was collected is not, and a process of another user (init) is.
func TestSignalAlive(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	running := cmd.Process.Pid
	if !signalAlive(running) || !signalAlive(os.Getpid()) || !signalAlive(1) {
		t.Errorf("a running process reads gone: child %v, self %v, init %v",
			signalAlive(running), signalAlive(os.Getpid()), signalAlive(1))
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, pid := range []int{running, 0, -1, 1 << 22} {
		if signalAlive(pid) {
			t.Errorf("signalAlive(%d) = true for no process", pid)
		}
	}
}
