package cmd

import (
	"os"
	"testing"

	"github.com/agentbash/agentbash/pkg/snapshot"
	"github.com/agentbash/agentbash/pkg/supervisor"
)

// TestMain lets the test binary be the supervisor of the runs it starts (they re-execute it as
// `<test binary> __supervise`) and the helper that makes the shell snapshot (`__snapshot`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervisor.Command {
		os.Exit(supervisor.Main())
	}
	if len(os.Args) > 1 && os.Args[1] == snapshot.Command {
		os.Exit(snapshot.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}
