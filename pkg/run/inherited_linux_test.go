package run

import (
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
