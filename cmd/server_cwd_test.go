package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A server's --cwd is where its requests and new sessions start, not an explicit cwd of every request:
// a session's cd carries over to its next request (README "Sessions").
func TestServerCwdIsTheStartingDirectory(t *testing.T) {
	dir := isolate(t)
	start := filepath.Join(dir, "start")
	if err := os.MkdirAll(filepath.Join(start, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), BuildInfo{}, IO{In: inR, Out: outW, Err: io.Discard}, []string{"rpc", "--cwd", start})
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	ask := func(req map[string]any) string {
		t.Helper()
		req["type"] = "bash"
		b, _ := json.Marshal(req)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no response to %s", b)
		}
		var m struct {
			Data struct {
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || len(m.Data.Content) == 0 {
			t.Fatalf("response %s: %v", lines.Bytes(), err)
		}
		return m.Data.Content[0].Text
	}
	for _, c := range []struct {
		req  map[string]any
		want string
	}{
		{map[string]any{"id": 1, "command": "pwd"}, start},
		{map[string]any{"id": 2, "command": "cd sub; pwd", "session": "s1"}, filepath.Join(start, "sub")},
		{map[string]any{"id": 3, "command": "pwd", "session": "s1"}, filepath.Join(start, "sub")},
		{map[string]any{"id": 4, "command": "pwd", "session": "s2"}, start},
		{map[string]any{"id": 5, "command": "pwd", "cwd": filepath.Join(start, "sub")}, filepath.Join(start, "sub")},
		{map[string]any{"id": 6, "command": "pwd"}, start},
	} {
		if got := ask(c.req); got != c.want {
			t.Errorf("request %v: got %q, want %q", c.req, got, c.want)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("rpc exited %d", code)
	}
}
