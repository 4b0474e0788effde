package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// rssFile is this process's resident file-backed memory, bytes.
func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "RssFile:" {
			n, _ := strconv.Atoi(f[1])
			return n << 10
		}
	}
	t.Skip("no RssFile")
	return 0
}

// restore puts back the heap limit, the collector's pacing and GOMAXPROCS as they were.
func restore(t *testing.T) {
	limit, percent, procs := debug.SetMemoryLimit(-1), debug.SetGCPercent(100), runtime.GOMAXPROCS(0)
	debug.SetGCPercent(percent)
	t.Cleanup(func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
		runtime.GOMAXPROCS(procs)
	})
}

// Apply sets the heap limit, one processor and the pacing, and hands back mapped pages of the executable;
// the program runs on (the pages come back on use).
func TestApply(t *testing.T) {
	restore(t)
	before := rssFile(t)
	Apply(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("memory limit %d, want %d", got, 64<<20)
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d, want 1", got)
	}
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("GC percent %d, want %d", got, GCPercent)
	}
	after := rssFile(t)
	if after >= before {
		t.Errorf("resident file pages %d before, %d after: nothing handed back", before, after)
	}
	// Code runs on after its pages were dropped.
	if s := strconv.Itoa(12345); s != "12345" {
		t.Fatal(s)
	}
}

// Lean paces the collector and hands back pages, and leaves the heap limit and the processors alone (a
// supervisor keeps both: its output may need two processors).
func TestLean(t *testing.T) {
	restore(t)
	debug.SetMemoryLimit(1 << 40)
	procs := runtime.GOMAXPROCS(0)
	before := rssFile(t)
	Lean()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("GC percent %d, want %d", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("memory limit %d, want it left at %d", got, int64(1<<40))
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d, want it left at %d", got, procs)
	}
	if after := rssFile(t); after >= before {
		t.Errorf("resident file pages %d before, %d after: nothing handed back", before, after)
	}
}
