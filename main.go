// Command agentbash runs shell commands the way a coding agent's bash tool should. See README.md.
package main

import (
	"os"

	"github.com/agentbash/agentbash/cmd"
	"github.com/agentbash/agentbash/pkg/target"
)

// Set by the release build (goreleaser ldflags).
var (
	version = ""
	commit  = ""
	date    = ""
)

func main() {
	info := cmd.BuildInfo{Version: version, Commit: commit, Date: date}
	target.Version = info.Resolved().Version // the agentbash a target runs is this version
	cmd.Execute(info, os.Exit, os.Args[1:])
}
