package run

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ReadInherited reads the same values twice, and sees a change of a resource limit or of the nice value.
func TestReadInheritedSeesChanges(t *testing.T) {
	base := ReadInherited()
	if again := ReadInherited(); again != base {
		t.Fatalf("two reads differ: %+v, %+v", base, again)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lower := lim
	lower.Cur--
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lower); err != nil {
		t.Fatal(err)
	}
	changed := ReadInherited()
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if changed == base {
		t.Error("a lower RLIMIT_NOFILE was not seen")
	}
	if ReadInherited() != base {
		t.Error("the limit put back reads differently")
	}
}

// A change of the OOM score adjustment is seen too: the file of /proc, kept open, is read anew each time.
func TestReadInheritedSeesOOMScoreAdj(t *testing.T) {
	base := ReadInherited()
	old, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skip(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(old)))
	if err != nil || n >= 1000 {
		t.Skipf("oom_score_adj %q", old)
	}
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(n+1)), 0); err != nil {
		t.Skip(err) // raising it is allowed to anyone; a sandbox may still refuse
	}
	changed := ReadInherited()
	restored := os.WriteFile("/proc/self/oom_score_adj", old, 0) == nil // lowering it needs privilege
	if changed == base || changed.oomScoreAdj != strconv.Itoa(n+1)+"\n" {
		t.Errorf("oom_score_adj %d was read as %q", n+1, changed.oomScoreAdj)
	}
	if restored && ReadInherited() != base {
		t.Error("the value put back reads differently")
	}
}

// procFile.read returns a content longer than its first buffer whole, and the same again on the next read.
func TestProcFileReadsWhole(t *testing.T) {
	path := t.TempDir() + "/long"
	want := strings.Repeat("0123456789abcdef", 200) // 3200 bytes: three doublings of the first buffer
	if err := os.WriteFile(path, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	f := openProcFile(path)
	if f < 0 {
		t.Fatal("not opened")
	}
	defer unix.Close(int(f))
	for range 2 {
		if got := f.read(); got != want {
			t.Fatalf("read %d bytes, want %d", len(got), len(want))
		}
	}
	if got := procFile(-1).read(); got != "" {
		t.Errorf("a file not opened reads %q", got)
	}
}
