package proctitle

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// helperEnv makes the test binary act as a program whose command line is rewritten (see TestMain): the
// testing package's own flags point into the argument memory, so the rewrite runs in a child process.
const helperEnv = "PROCTITLE_TEST_HELPER"

func TestMain(m *testing.M) {
	if title := os.Getenv(helperEnv); title != "" {
		before := strings.Join(os.Args, "\x00")
		err := Set(strings.Fields(title)...)
		cmdline, _ := os.ReadFile("/proc/self/cmdline")
		// os.Args must still hold the original arguments, in memory of their own.
		fmt.Printf("err=%v\nargs-kept=%v\ncmdline=%q\n", err, strings.Join(os.Args, "\x00") == before, cmdline)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSetRewritesProcCmdline(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	for _, tc := range []struct {
		name  string
		args  []string
		title string
		want  string
	}{
		{"shorter", []string{"run", "pkill -f secretword", "--cwd", "/tmp/secretword"}, "prog run", "prog run\x00"},
		{"cut to the original length", []string{"r"}, "prog " + strings.Repeat("x", 1000), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$"}, tc.args...)...)
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.title)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !bytes.Contains(out, []byte("err=<nil>\nargs-kept=true\n")) {
				t.Fatalf("got %s", out)
			}
			if bytes.Contains(out, []byte("secretword")) {
				t.Errorf("the original arguments still show: %s", out)
			}
			if tc.want != "" && !bytes.Contains(out, []byte(fmt.Sprintf("cmdline=%q", tc.want))) {
				t.Errorf("got %s, want cmdline=%q", out, tc.want)
			}
			if tc.want == "" {
				// Cut: the area held the binary path, -test.run=^$ and r; the title fills it, ending in a NUL.
				area := len(os.Args[0]) + len("-test.run=^$") + len("r") + 3
				if !bytes.Contains(out, []byte(fmt.Sprintf("cmdline=%q", (tc.title)[:area-1]+"\x00"))) {
					t.Errorf("got %s, want the title cut to %d bytes", out, area-1)
				}
			}
		})
	}
}
