package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
)

// StageCommand is the hidden command a sandboxed run's shell is started through (pkg/reexec): it reads a
// StageSpec on descriptor 3, confines itself and execs the command. Nothing of the policy is on its argv.
const StageCommand = "__sandbox"

// StageSpec is what the stage is given: the writable paths (absolute, resolved), and the argv and
// environment to exec once confined.
type StageSpec struct {
	Writable []string `json:"writable"`
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
}

// StageMain runs the stage: on any failure it says why on stderr, prefixed `Sandbox unavailable:` as the
// result says it, and exits 125 without running anything (fail closed).
func StageMain() int {
	f := os.NewFile(3, "sandbox-spec")
	var spec StageSpec
	err := json.NewDecoder(f).Decode(&spec)
	if f != nil {
		f.Close()
	}
	if err == nil && len(spec.Argv) == 0 {
		err = fmt.Errorf("no command")
	}
	if err == nil {
		err = stage(spec)
	}
	fmt.Fprintf(os.Stderr, "Sandbox unavailable: %v\n", err)
	return 125
}
