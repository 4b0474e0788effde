package screen

import "golang.org/x/sys/unix"

// feederNice is the nice value of the thread that feeds the emulator (19, the lowest priority; the
// benchmarks set 0 to measure what it buys).
var feederNice = 19

// lowerPriority gives the calling thread (locked to its goroutine) the nice value feederNice: on Linux a
// thread id names one thread for setpriority. A failure leaves the priority as it was.
func lowerPriority() {
	if feederNice != 0 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), feederNice)
	}
}
