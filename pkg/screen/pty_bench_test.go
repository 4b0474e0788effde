//go:build linux

package screen

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// BenchmarkPtyFlood is 10 MB of output on a pseudo-terminal, read as the supervisor reads it: by a plain
// reader (bare: the floor, the kernel's ONLCR work), and by a reader that also writes every read into a
// Terminal, whose feeding thread runs at nice 19 (as built) or 0 (what the lowered priority buys). The
// output is `yes` (2-byte lines: the kernel is the bottleneck) or a file of 80-column lines (`cat`: the
// command, the kernel and the reader could compete with the emulator for the CPUs). The time is the
// command's, start to EOF; the Snapshot after it (what a result costs at the end) is reported apart.
func BenchmarkPtyFlood(b *testing.B) {
	const size = 10_000_000
	lines := b.TempDir() + "/lines"
	if err := os.WriteFile(lines, bytes.Repeat(plainLines(), size/(64<<10)+1)[:size], 0o600); err != nil {
		b.Fatal(err)
	}
	for _, variant := range []struct {
		name     string
		terminal bool
		nice     int
	}{{"bare", false, 0}, {"terminal-nice19", true, 19}, {"terminal-nice0", true, 0}} {
		for _, command := range []string{"yes | head -c 10000000", "cat " + lines} {
			b.Run(variant.name+"/"+strings.Fields(command)[0], func(b *testing.B) {
				saved := feederNice
				feederNice = variant.nice
				defer func() { feederNice = saved }()
				b.SetBytes(size)
				var snapshot time.Duration
				for range b.N {
					snapshot += ptyFlood(b, command, variant.terminal)
				}
				b.ReportMetric(float64(snapshot.Microseconds())/1000/float64(b.N), "ms-last-snapshot/op")
			})
		}
	}
}

// ptyFlood runs command on a pseudo-terminal, reads it to EOF, into a Terminal when terminal, and returns
// how long the Snapshot after it took (timer stopped).
func ptyFlood(b *testing.B, command string, terminal bool) time.Duration {
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", command)
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: DefaultCols, Rows: DefaultRows})
	if err != nil {
		b.Fatal(err)
	}
	defer master.Close()
	var term *Terminal
	if terminal {
		term = New(DefaultCols, DefaultRows, func(p []byte) { _, _ = master.Write(p) })
		defer term.Close()
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := master.Read(buf)
		if term != nil && n > 0 {
			term.Write(buf[:n])
		}
		if err != nil {
			break // EIO once the command's side is closed
		}
	}
	_ = cmd.Wait()
	if term == nil {
		return 0
	}
	b.StopTimer()
	defer b.StartTimer()
	start := time.Now()
	term.Snapshot()
	return time.Since(start)
}
