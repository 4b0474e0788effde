//go:build !linux

package sink

import "os"

// preallocate is Linux-only (fallocate(2)); elsewhere writes go on without it.
func preallocate(f *os.File, off, n int64) bool { return false }

// availableBytes is the space the file system of f has available; it cannot be told here.
var availableBytes = func(f *os.File) (n int64, ok bool) { return 0, false }
