// Package memlimit keeps a long-lived agentbash process small (reference §12: peak RSS ≤ 16 MiB, for an rpc or
// mcp server after 1000 commands, and with 3 GB of output): a collector paced for a small heap, a soft limit on
// the Go heap, and the executable's pages that start-up mapped handed back. The long-lived ones are the
// servers (rpc, mcp), a supervisor kept for more runs or a task's, and a `wait` that lasts.
//
// What such a process holds live is small and does not grow with the commands it ran (some 0.6 MiB in rpc,
// 1 MiB in mcp, 0.5 MiB in a supervisor): what grows, at the default pacing, is the garbage between two
// collections, up to the runtime's 4 MiB floor, and the pages of the binary that the commands' code paths
// touched (docs/benchmarks.md, "issue 23: memory of long-lived servers").
package memlimit

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// GCPercent is the collector's pacing in a long-lived process: a collection once the heap grew by a quarter
// of what it holds live. At the default (100) the runtime lets a heap grow to 4 MiB before it collects
// (its floor scales with this percentage: 1 MiB here), so a server whose live heap is under 1 MiB carries
// 3 MiB of garbage; a collection of such a heap costs about a millisecond of CPU, beside the command.
const GCPercent = 25

// Apply makes a server (rpc, mcp) lean once it is ready to serve: the Go heap's soft limit at heapBytes (the
// collector runs harder near it, it is not a cap), one Go processor, and Lean. A server's own work per
// command is a few hundred microseconds of decoding, formatting and waiting (the command runs in its
// supervisor), so a second processor buys it nothing, and each processor keeps a span of every size class
// it allocated from: one instead of two is 0.5 MiB less.
func Apply(heapBytes int64) {
	debug.SetMemoryLimit(heapBytes)
	runtime.GOMAXPROCS(1)
	Lean()
}

// Lean paces the collector for a small heap (GCPercent) and hands back the executable's pages mapped so
// far (Trim).
func Lean() {
	debug.SetGCPercent(GCPercent)
	Trim()
}

// Trim drops from the resident set the code pages of the executable mapped so far (madvise MADV_DONTNEED
// on its executable, read-only file mappings; they stay in the page cache and come back on their next use).
// Start-up — every package's init, flags, config — touches code all over the binary, and the kernel maps
// up to 64 KiB around each page it faults in, so a server would otherwise keep most of a 12 MiB binary
// resident for code it never runs again. Errors are ignored: this is an economy. It costs what the
// pages' next use costs: a millisecond or so of page faults, so it is done once, never per command.
func Trim() {
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
		if len(fields) < 6 || fields[5] != exe || !strings.Contains(fields[1], "x") || strings.ContainsAny(fields[1], "ws") {
			// Only the code. A read-only mapping that is not code can hold what the dynamic loader
			// relocated before it was made read-only (RELRO, in a cgo or PIE build): dropped, it would
			// come back from the file unrelocated (supervisors of cgo test builds crashed so).
			continue
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
