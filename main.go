// Command agentbash runs shell commands the way a coding agent's bash tool should. See README.md.
package main

import (
	"os"

	"github.com/agentbash/agentbash/cmd"
)

// Set by the release build (goreleaser ldflags).
var (
	version = ""
	commit  = ""
	date    = ""
)

func main() {
	cmd.Execute(cmd.BuildInfo{Version: version, Commit: commit, Date: date}, os.Exit, os.Args[1:])
}
