package pipeline

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

// TestMain lets the test binary be the supervisor of the runs it starts (they re-execute it as
// `<test binary> __supervise`) and the helper that makes the shell snapshot (`__snapshot`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervisor.Command {
		os.Exit(supervisor.Main())
	}
	if len(os.Args) > 1 && os.Args[1] == snapshot.Command {
		os.Exit(snapshot.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

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
