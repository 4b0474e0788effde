package memlimit

import (
	"os"
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

// Apply sets the heap limit and hands back mapped pages of the executable; the program runs on (the pages
// come back on use).
func TestApply(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	before := rssFile(t)
	Apply(64 << 20)
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("memory limit %d, want %d", got, 64<<20)
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
