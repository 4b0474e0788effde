package sink

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves the file's blocks from off for n bytes without changing its size
// (fallocate(2) with FALLOC_FL_KEEP_SIZE). ok is false when the file system cannot (no support, no
// space): the caller stops asking, and plain writes go on as before.
func preallocate(f *os.File, off, n int64) (ok bool) {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
