// Package memlimit keeps a long-lived agentbash process (rpc, mcp) small (reference §12: peak RSS ≤ 16 MiB
// after 1000 commands): a soft limit on the Go heap, and the executable's pages that start-up mapped
// handed back.
package memlimit

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Apply sets the Go heap's soft limit to heapBytes, then drops from the resident set the read-only pages
// of the executable mapped so far (madvise MADV_DONTNEED on its file mappings; they stay in the page
// cache and come back on their next use). Start-up — every package's init, flags, config — touches code
// all over the binary, and the kernel maps up to 64 KiB around each page it faults in, so a server would
// otherwise keep most of a 16 MiB binary resident for code it never runs again. Errors are ignored: both
// are economies.
func Apply(heapBytes int64) {
	debug.SetMemoryLimit(heapBytes)
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-008ed000 r-xp 00000000 fd:01 1234 /path/to/agentbash
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.ContainsAny(fields[1], "ws") {
			continue // writable (the data segment) or shared: keep
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= start {
			continue
		}
		// By address: the region is only advised, never read or written.
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
	}
}
