package tasks

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// Alive reports whether process pid runs and started at start (clock ticks since boot, as [StartTime]
// gives it; 0: any start), so a pid reused by another process is not taken for it. A zombie is not
// alive.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, err := procStat(pid)
	if err != nil || state == "Z" || state == "X" {
		return false
	}
	return start == 0 || st == start
}

// StartTime is process pid's start time in clock ticks since boot (/proc/PID/stat field 22).
func StartTime(pid int) (uint64, error) {
	_, st, err := procStat(pid)
	return st, err
}

func procStat(pid int) (state string, start uint64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", 0, errors.New("bad /proc stat")
	}
	start, err = strconv.ParseUint(f[19], 10, 64) // field 22 overall; f[0] is field 3
	return f[0], start, err
}
