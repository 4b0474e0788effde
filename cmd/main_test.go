package cmd

import (
	"os"
	"testing"

	"github.com/agentbash/agentbash/pkg/supervisor"
)

// TestMain lets the test binary be the supervisor of the runs it starts: they re-execute it as
// `<test binary> __supervise`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervisor.Command {
		os.Exit(supervisor.Main())
	}
	os.Exit(m.Run())
}
