package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr starts the shell in a new session (which is also a new process group whose id is the
// shell's pid, with no controlling terminal) and asks the kernel to SIGKILL it if agentbash dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// becomeSubreaper makes orphaned descendants (setsid, nohup, double forks) reparent to this process
// instead of init, so they can be found and killed (SPEC §3.7). Failure only weakens that guarantee.
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// descendants returns the live descendants of this process and, separately, those that are zombies.
// It walks /proc/PID/task/*/children from this process down.
func descendants() (live, zombies []int) {
	seen := map[int]bool{}
	queue := children("self")
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		switch procState(pid) {
		case 0: // gone
			continue
		case 'Z', 'X':
			zombies = append(zombies, pid)
		default:
			live = append(live, pid)
		}
		queue = append(queue, children(strconv.Itoa(pid))...)
	}
	return live, zombies
}

// children lists the child pids of every thread of proc ("self" or a pid).
func children(proc string) []int {
	files, _ := filepath.Glob("/proc/" + proc + "/task/*/children")
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range bytes.Fields(b) {
			if p, err := strconv.Atoi(string(field)); err == nil {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// procState returns the state letter of pid from /proc/PID/stat, or 0 when it does not exist.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// reap collects the status of the given zombies that are our children (orphans reparented to us). Only
// pids we found are waited for, never -1, so os/exec's own wait for the shell is not disturbed.
func reap(pids []int) {
	for _, p := range pids {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(p, &ws, unix.WNOHANG, nil)
	}
}
