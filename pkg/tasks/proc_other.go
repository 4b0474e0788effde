//go:build !linux

package tasks

import "errors"

// Alive reports whether process pid runs ([signalAlive]: there is no /proc here). A start time cannot be
// read here ([StartTime] gives 0), so start is not compared: a pid that another process took since is
// taken for the one it named.
func Alive(pid int, start uint64) bool { return signalAlive(pid) }

// StartTime cannot be read here: it is 0 with an error, and records hold 0 ("any start").
func StartTime(pid int) (uint64, error) {
	return 0, errors.ErrUnsupported
}
