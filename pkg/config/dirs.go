package config

import (
	"path/filepath"

	"github.com/adrg/xdg"
)

// StateDir is agentbash's state directory, $XDG_STATE_HOME/agentbash: sessions, tasks and artifacts by
// default. A sandboxed command does not see it (reference §13).
func StateDir() string { return filepath.Join(xdg.StateHome, "agentbash") }

// OwnDirs is agentbash's own directories as c has them: its config, cache and state directories, and the
// artifact and task directories wherever c puts them. None is ever writable inside a sandbox (reference §13):
// a sandboxed command must not change what a later unsandboxed one sources.
func (c Config) OwnDirs() []string {
	return []string{filepath.Join(xdg.ConfigHome, "agentbash"), filepath.Join(xdg.CacheHome, "agentbash"),
		StateDir(), c.ArtifactDir(), c.TaskDir()}
}
