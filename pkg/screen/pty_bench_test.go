//go:build linux

package screen

import (
	"io"
	"os/exec"
	"testing"

	"github.com/creack/pty"
)

// BenchmarkPtyFlood is `yes | head -c 10000000` on a pseudo-terminal, read as the supervisor reads it: by
// a plain reader (bare: the floor, the kernel's ONLCR work on short lines), and by a reader that also
// writes every read into a Terminal, whose feeding thread runs at nice 19 (as built) or 0 (what the
// lowered priority buys). The time is the command's, start to EOF.
func BenchmarkPtyFlood(b *testing.B) {
	const size = 10_000_000
	for _, variant := range []struct {
		name     string
		terminal bool
		nice     int
	}{{"bare", false, 0}, {"terminal-nice19", true, 19}, {"terminal-nice0", true, 0}} {
		b.Run(variant.name, func(b *testing.B) {
			saved := feederNice
			feederNice = variant.nice
			defer func() { feederNice = saved }()
			b.SetBytes(size)
			buf := make([]byte, 256<<10)
			approximate := 0
			for range b.N {
				cmd := exec.Command("bash", "--norc", "--noprofile", "-c", "yes | head -c 10000000")
				master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: DefaultCols, Rows: DefaultRows})
				if err != nil {
					b.Fatal(err)
				}
				var term *Terminal
				if variant.terminal {
					term = New(DefaultCols, DefaultRows, func(p []byte) { _, _ = master.Write(p) })
				}
				total := 0
				for {
					n, err := master.Read(buf)
					total += n
					if term != nil && n > 0 {
						term.Write(buf[:n])
					}
					if err == io.EOF || err != nil {
						break
					}
				}
				_ = cmd.Wait()
				master.Close()
				if term != nil {
					if term.Snapshot().Approximate {
						approximate++
					}
					term.Close()
				}
				if total < size {
					b.Fatalf("read %d bytes", total)
				}
			}
			b.ReportMetric(float64(approximate)/float64(b.N), "approximate/op")
		})
	}
}
