//go:build !linux

package sandbox

// stage refuses off Linux: there is nothing to confine with.
func stage(StageSpec) error { return errNotLinux }
