package run

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// watchExit reports the status of a process that ended before the watch began, of one that ends
// during it, and of one killed by a signal, and reaps each.
func TestWatchExit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		sig  syscall.Signal
	}{
		{[]string{"sh", "-c", "exit 3"}, 3, 0},
		{[]string{"sh", "-c", "sleep 0.2; exit 4"}, 4, 0},
		{[]string{"sh", "-c", "kill -TERM $$"}, -1, syscall.SIGTERM},
	} {
		cmd := exec.Command(tc.args[0], tc.args[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if tc.code == 3 {
			time.Sleep(100 * time.Millisecond) // a zombie before the watch
		}
		select {
		case st := <-watchExit(cmd):
			ws := st.Sys().(syscall.WaitStatus)
			if st.ExitCode() != tc.code || (tc.sig != 0 && ws.Signal() != tc.sig) {
				t.Errorf("%v: %v", tc.args, st)
			}
		case <-time.After(30 * time.Second): // a bound against a hang, not a timing assertion
			t.Fatalf("%v: no status", tc.args)
		}
		if err := syscall.Kill(cmd.Process.Pid, 0); err == nil {
			t.Errorf("%v: pid %d not reaped", tc.args, cmd.Process.Pid)
		}
	}
}
