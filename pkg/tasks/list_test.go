package tasks

import (
	"strings"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rows := []Row{
		{TaskID: "7", Status: "running", Pid: 4242, Command: "npm run dev", StartedAt: now.Add(-90 * time.Second).Format(time.RFC3339Nano)},
		{TaskID: "12", Status: "exited", Pid: 99, Command: "printf 'a\\n'\nmake \x1b[1m" + strings.Repeat("x", 100),
			StartedAt: now.Add(-72 * time.Hour).Format(time.RFC3339Nano)},
		{TaskID: "13", Status: "signaled", Pid: 100, Command: "(sleep 60) & wait", LeftoverCount: 1,
			StartedAt: now.Add(-5 * time.Second).Format(time.RFC3339Nano)},
	}
	var b strings.Builder
	if err := Table(&b, rows, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"ID  STATUS                        PID   AGE  COMMAND",
		"7   running                       4242  1m   npm run dev",
		"12  exited                        99    3d   printf 'a\\n' make [1m" + strings.Repeat("x", 58) + "…",
		"13  signaled (1 process running)  100   5s   (sleep 60) & wait",
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], want[i])
		}
	}
}
