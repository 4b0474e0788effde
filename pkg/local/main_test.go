package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	// The test binary is what agentbash re-executes itself as (a run's supervisor, the snapshot
	// helper): the runs a test starts re-execute it, and pkg/reexec's init runs them.
	_ "github.com/agentbash/agentbash/pkg/reexec"
)

// killMarked SIGKILLs the live processes whose command line starts with marker and returns their pids.
func killMarked(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		stat, _ := os.ReadFile(d + "/stat")
		if err != nil || !strings.HasPrefix(string(b), marker) {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		_ = syscall.Kill(pid, syscall.SIGKILL)
		pids = append(pids, pid)
	}
	return pids
}
