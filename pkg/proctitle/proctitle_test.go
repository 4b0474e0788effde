package proctitle

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// helperEnv makes the test binary act as a program whose command line is rewritten (see TestMain): the
// testing package's own flags point into the argument memory, so the rewrite runs in a child process.
// Its value is the title, words separated by spaces; baseEnv makes it first replace os.Args[0] by its
// base name, a part of itself, as testscript does.
const (
	helperEnv = "PROCTITLE_TEST_HELPER"
	baseEnv   = "PROCTITLE_TEST_BASE"
)

func TestMain(m *testing.M) {
	if title := os.Getenv(helperEnv); title != "" {
		if os.Getenv(baseEnv) != "" {
			os.Args[0] = filepath.Base(os.Args[0])
		}
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
	long := "prog " + strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name, title string
		args        []string
		base        bool
		want        func(area int) string // the whole of /proc/self/cmdline, given the area's length
	}{
		{"shorter", "prog run", []string{"run", "pkill -f secretword", "--cwd", "/tmp/secretword"}, false,
			func(area int) string { return "prog\x00run" + strings.Repeat("\x00", area-len("prog\x00run")) }},
		{"os.Args[0] is a part of itself", "prog run", []string{"run", "secretword"}, true,
			func(area int) string { return "prog\x00run" + strings.Repeat("\x00", area-len("prog\x00run")) }},
		{"cut to the original length", long, []string{"r"}, false,
			func(area int) string { return strings.ReplaceAll(long, " ", "\x00")[:area-1] + "\x00" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := append([]string{os.Args[0], "-test.run=^$"}, tc.args...)
			area := len(strings.Join(argv, "\x00")) + 1
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), helperEnv+"="+tc.title)
			if tc.base {
				cmd.Env = append(cmd.Env, baseEnv+"=1")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := fmt.Sprintf("err=<nil>\nargs-kept=true\ncmdline=%q\n", tc.want(area))
			if string(out) != want {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
			if bytes.Contains(out, []byte("secretword")) {
				t.Errorf("the original arguments still show")
			}
		})
	}
}
