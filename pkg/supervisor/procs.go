package supervisor

import (
	"io"
	"runtime"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

// How many Go processors a run has. A run of a long-lived client (rpc, mcp: it offered reuse) starts on
// one: its commands are mostly short, and for a short command a second processor is only cost — the
// runtime wakes a thread to look for work at each hand-over between goroutines, and those threads run on
// the CPUs the command needs (rpc `true`: 15 % less CPU in the supervisor on one). Any other run (`run`,
// a task, a terminal, a sandbox's proxy, which serve more than one stream at once) starts on the
// machine's default, as the runtime chose it.
//
// After procsChoice bytes of output the choice is made again from how the output came: a run whose
// output comes faster than the supervisor takes it (three quarters of it in full reads: coloured text,
// which the sanitizer works hardest on) gets the default, so the artifact's writes overlap the scan
// instead of waiting for the one processor (15 % slower on one); one the supervisor keeps up with gets
// one, since beside it a second processor only adds hand-overs, each woken for the few kilobytes a write
// of the command brings (1 GB of plain text from `head`, 8 KiB writes: 0.36 s less CPU and 10–15 % less
// time on one). A change stops the world, so it is made only at a run's start when the last run left
// another number, and once in a long run.
const (
	fullRead    = 128 << 10 // a read of this size or more found the pipe full
	procsChoice = 16 << 20  // the bytes read before the choice is made
)

// defaultProcs is GOMAXPROCS as the runtime chose it at start (set by Main).
var defaultProcs = 1

// startProcs gives a run the processors it starts with (see above): one when the client offered reuse and
// the run is plain (no terminal or input end, no proxy), else the default.
func startProcs(req Request) {
	n := defaultProcs
	if s := req.Spec; req.Reuse && s != nil && s.Interactive == nil && s.Task == nil &&
		(s.Sandbox == nil || s.Sandbox.Network != sandbox.NetworkProxy) {
		n = 1
	}
	setProcs(n)
}

// setProcs sets GOMAXPROCS to n unless it is n already.
func setProcs(n int) {
	if runtime.GOMAXPROCS(0) != n {
		runtime.GOMAXPROCS(n)
	}
}

// procsChooser passes a run's output on to w and, once procsChoice bytes were read, gives the supervisor
// the default processors when three quarters of them came in full reads, else one.
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
			if c.full*4 < c.total*3 {
				setProcs(1)
			} else {
				setProcs(defaultProcs)
			}
		}
	}
	return c.w.Write(p)
}
