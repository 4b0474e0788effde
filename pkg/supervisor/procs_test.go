package supervisor

import (
	"runtime"
	"testing"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// withProcs runs f with the default processors set to 2 and puts back what was there.
func withProcs(t *testing.T, f func()) {
	t.Helper()
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to choose")
	}
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	saved := defaultProcs
	defaultProcs = 2
	defer func() { defaultProcs = saved }()
	f()
}

// A run of a client that offered reuse starts on one processor when it is plain; any other run, and one
// with a terminal, an input end or a sandbox's proxy, starts on the default.
func TestStartProcs(t *testing.T) {
	withProcs(t, func() {
		plain := &run.Spec{}
		for _, tc := range []struct {
			name string
			req  Request
			want int
		}{
			{"reuse offered", Request{Reuse: true, Spec: plain}, 1},
			{"no reuse (run)", Request{Spec: plain}, 2},
			{"terminal", Request{Reuse: true, Spec: &run.Spec{Interactive: &console.Options{TTY: true}}}, 2},
			{"input end", Request{Reuse: true, Spec: &run.Spec{Interactive: &console.Options{}}}, 2},
			{"proxy", Request{Reuse: true, Spec: &run.Spec{Sandbox: &sandbox.Confinement{Network: sandbox.NetworkProxy}}}, 2},
			{"sandbox without proxy", Request{Reuse: true, Spec: &run.Spec{Sandbox: &sandbox.Confinement{Network: sandbox.NetworkOff}}}, 1},
			{"task", Request{Reuse: true, Spec: &run.Spec{Task: &run.Task{}}}, 2},
		} {
			startProcs(tc.req)
			if got := runtime.GOMAXPROCS(0); got != tc.want {
				t.Errorf("%s: GOMAXPROCS %d, want %d", tc.name, got, tc.want)
			}
		}
	})
}

// Once procsChoice bytes were read, a run whose output comes in small reads goes to one processor and
// one whose reads come full to the default, from either start; not before. Every byte is passed on.
func TestProcsChooser(t *testing.T) {
	withProcs(t, func() {
		for _, tc := range []struct {
			name         string
			start, piece int
			want         int
		}{
			{"small reads from the default", 2, 8 << 10, 1},
			{"full reads from the default", 2, 256 << 10, 2},
			{"small reads from one", 1, 8 << 10, 1},
			{"full reads from one", 1, 256 << 10, 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				setProcs(tc.start)
				var n countWriter
				c := &procsChooser{w: &n}
				buf := make([]byte, tc.piece)
				for n < procsChoice/2 {
					if _, err := c.Write(buf); err != nil {
						t.Fatal(err)
					}
				}
				if got := runtime.GOMAXPROCS(0); got != tc.start {
					t.Fatalf("GOMAXPROCS %d before the choice, want %d", got, tc.start)
				}
				for n < 2*procsChoice {
					if _, err := c.Write(buf); err != nil {
						t.Fatal(err)
					}
				}
				if got := runtime.GOMAXPROCS(0); got != tc.want {
					t.Fatalf("GOMAXPROCS %d after %d bytes, want %d", got, n, tc.want)
				}
			})
		}
	})
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
