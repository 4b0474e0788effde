package run

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// threads is how many threads this process has (/proc/self/status).
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// spareThreads leaves the runtime holding at least n threads, kept once it returned: each goroutine held a
// thread of its own, and gave it back to the runtime rather than ending it.
func TestSpareThreads(t *testing.T) {
	const n = 48
	if before := threads(t); before >= n {
		t.Skipf("the test process has %d threads already", before)
	}
	spareThreads(n)
	if got := threads(t); got < n {
		t.Fatalf("%d threads after spareThreads(%d)", got, n)
	}
	spareThreads(n) // the threads are reused: none more needed
	if got := threads(t); got > n+8 {
		t.Errorf("%d threads after a second spareThreads(%d): the first one's were not kept", got, n)
	}
}
