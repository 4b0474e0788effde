package supervisor

import (
	"io"
	"runtime"
)

// A supervisor that keeps up with its command's output goes down to one Go processor, and back to the
// machine's default for its next run. Beside a command it keeps up with, a second processor only adds
// hand-overs between threads, each woken for the few kilobytes a write of the command brings, on the
// CPUs the command itself needs: 1 GB of plain text from `head` (8 KiB writes) took 0.36 s less CPU and
// 10–15 % less time on one. A run whose output comes faster than the supervisor takes it (its reads come
// full: coloured text, which the sanitizer works hardest on) keeps the default, so the artifact's writes
// overlap the scan instead of waiting for the one processor (15 % slower on one). The choice is made
// once procsChoice bytes were read, so a short run never changes anything (GOMAXPROCS stops the world).
const (
	fullRead    = 128 << 10 // a read of this size or more found the pipe full
	procsChoice = 16 << 20  // the bytes read before the choice is made
)

// defaultProcs is GOMAXPROCS as the runtime chose it at start (set by Main).
var defaultProcs = 1

// defaultProcsBack gives a run the default processors a run before it may have given up.
func defaultProcsBack() {
	if runtime.GOMAXPROCS(0) != defaultProcs {
		runtime.GOMAXPROCS(defaultProcs)
	}
}

// procsChooser passes a run's output on to w and, once procsChoice bytes were read, leaves the
// supervisor one processor unless three quarters of them came in full reads.
type procsChooser struct {
	w           io.Writer
	total, full int64
	chosen      bool
}

func (c *procsChooser) Write(p []byte) (int, error) {
	if !c.chosen {
		c.total += int64(len(p))
		if len(p) >= fullRead {
			c.full += int64(len(p))
		}
		if c.total >= procsChoice {
			c.chosen = true
			if c.full*4 < c.total*3 && defaultProcs > 1 {
				runtime.GOMAXPROCS(1)
			}
		}
	}
	return c.w.Write(p)
}
