//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The test binary is also the program under test: started again with CHAIN_TEST_ROLE set (the server) or
// with "supervisor" as its first argument (as the server starts its supervisor), it runs main.
func TestMain(m *testing.M) {
	if os.Getenv("CHAIN_TEST_ROLE") != "" || len(os.Args) > 1 && os.Args[1] == "supervisor" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Each way of running the chain answers each request with its id and its command's exit code, whatever the
// command writes, and ends when its input does.
func TestChain(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	requests := []struct {
		command string
		code    int
	}{
		{"true", 0},
		{"exit 3", 3},
		{"echo out; echo err >&2; exit 5", 5},
		{"seq 1 100000", 0}, // more than a pipe holds: the supervisor drains it
	}
	for _, args := range [][]string{nil, {"-spawn", "start"}, {"supervisor", "-direct"}, {"supervisor", "-direct", "-spawn", "start"}} {
		t.Run(strings.Join(append([]string{"chain"}, args...), " "), func(t *testing.T) {
			var in bytes.Buffer
			for i, r := range requests {
				fmt.Fprintf(&in, `{"id":%d,"type":"bash","command":%q}`+"\n", i+1, r.command)
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "CHAIN_TEST_ROLE=server")
			cmd.Stdin, cmd.Stderr = &in, os.Stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v (output %q)", err, out)
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != len(requests) {
				t.Fatalf("%d response lines, want %d: %q", len(lines), len(requests), out)
			}
			for i, line := range lines {
				var resp response
				if err := json.Unmarshal([]byte(line), &resp); err != nil {
					t.Fatalf("response %q: %v", line, err)
				}
				if resp.ID != int64(i+1) || resp.Data.Details.ExitCode != requests[i].code {
					t.Errorf("response %q, want id %d and exit code %d", line, i+1, requests[i].code)
				}
			}
		})
	}
}

// With -layers the shell sees agentbash's environment layers (one of them, PAGER=cat, is checked), without
// it the inherited environment; through the server and through the supervisor alone.
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-layers"}, 0},
		{[]string{"supervisor", "-direct", "-layers"}, 0},
		{nil, 1},
	} {
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Env = append(os.Environ(), "CHAIN_TEST_ROLE=server", "PAGER=less")
		cmd.Stdin, cmd.Stderr = strings.NewReader(`{"id":1,"command":"test \"$PAGER\" = cat"}`+"\n"), os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v (output %q)", tc.args, err, out)
		}
		var resp response
		if err := json.Unmarshal(out, &resp); err != nil || resp.Data.Details.ExitCode != tc.code {
			t.Errorf("%v: response %q (%v), want exit code %d", tc.args, out, err, tc.code)
		}
	}
}
