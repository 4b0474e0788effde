package early

import "testing"

// A process that is not a `run` (this test binary) starts no supervisor, and Take says so, every time.
func TestTakeWithoutRun(t *testing.T) {
	for range 2 {
		if pid, socket, ok := Take(); ok || pid != 0 || socket != nil {
			t.Fatalf("Take() = %d, %v, %v", pid, socket, ok)
		}
	}
}
