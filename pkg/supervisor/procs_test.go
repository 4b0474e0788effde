package supervisor

import (
	"runtime"
	"testing"
)

// A run whose output comes in small reads gives up all processors but one once procsChoice bytes were
// read; one whose reads come full keeps them; the next run gets the default back. Every byte is passed on.
func TestProcsChooser(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to choose")
	}
	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	saved := defaultProcs
	defaultProcs = 2
	defer func() { defaultProcs = saved }()
	for _, tc := range []struct {
		name  string
		piece int
		want  int
	}{
		{"small reads", 8 << 10, 1},
		{"full reads", 256 << 10, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defaultProcsBack()
			var n countWriter
			c := &procsChooser{w: &n}
			buf := make([]byte, tc.piece)
			for n < procsChoice/2 {
				if _, err := c.Write(buf); err != nil {
					t.Fatal(err)
				}
			}
			if got := runtime.GOMAXPROCS(0); got != 2 {
				t.Fatalf("GOMAXPROCS %d before the choice", got)
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
	defaultProcsBack()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("the next run got %d processors, want the default 2", got)
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
