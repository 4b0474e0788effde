//go:build !linux

package screen

var feederNice = 19

// lowerPriority does nothing off Linux, where a priority is the whole process's.
func lowerPriority() {}
