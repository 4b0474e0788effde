//go:build !linux

package proctitle

func set(string) error { return ErrUnsupported }
