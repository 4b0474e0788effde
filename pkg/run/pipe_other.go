//go:build !linux

package run

import "os"

// newPipeReader reads the output pipe on the runtime's poller (the direct reads of Linux are Linux-only).
func newPipeReader(f *os.File) outputReader { return fileReader{f} }
