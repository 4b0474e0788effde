package cmd

import (
	"os"
	"testing"

	"github.com/agentbash/agentbash/pkg/reexec"
)

// TestMain lets the test binary be what agentbash re-executes itself as (a run's supervisor, the
// snapshot helper): the runs a test starts re-execute this binary.
func TestMain(m *testing.M) {
	if code, ok := reexec.Dispatch(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
