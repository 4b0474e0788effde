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

// availableBytes is the space the file system of f has available to an unprivileged user, in bytes
// (statfs(2): f_bavail blocks of f_bsize); ok is false when it cannot be told. A variable for the tests.
var availableBytes = func(f *os.File) (n int64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, false
	}
	return int64(min(st.Bavail, 1<<62/uint64(max(st.Bsize, 1)))) * int64(st.Bsize), true
}
