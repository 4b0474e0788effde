package local

import (
	"fmt"
	"os"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// confinement is how policy confines a command that starts in dir on this machine (reference §13), its
// workspace (writable in workspace-write) being dir, or a session's recorded workspace, and only inside
// within when that is set (request.Resolved.Workspace, a server's): the
// policy's paths resolved here, agentbash's own directories never writable and its state directory hidden,
// the mechanisms it needs probed. details is details.sandbox for the result. err is a policy that cannot be
// applied as asked, or a mechanism this machine lacks (`Sandbox unavailable: <mechanism>: <reason>`):
// nothing runs then.
func (e *Executor) confinement(policy sandbox.Policy, dir string, within run.Raw, workspace string) (*sandbox.Confinement, *result.Sandbox, error) {
	place := sandbox.Place{Home: homeDir(), Dir: dir, Workspace: workspace, Own: e.c.OwnDirs,
		RuntimeDir: os.Getenv("XDG_RUNTIME_DIR")}
	if within != "" {
		// A server's requests: the cwd is a workspace only inside where the server starts them ("." is here).
		w, err := run.ResolveDir(string(within), place.Home)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: the server's workspace: %w", err)
		}
		place.Within = w
	}
	// agentbash's state is hidden: its directory, and the artifact and task directories wherever the config
	// puts them (earlier commands' outputs, records).
	for _, d := range []string{e.c.StateDir, e.c.ArtifactDir, e.c.TaskDir} {
		if d != "" {
			place.Hidden = append(place.Hidden, d)
		}
	}
	c, err := sandbox.Plan(policy, place)
	if err != nil {
		return nil, nil, err
	}
	if m, why := sandbox.Probe().Missing(c.Enforced); m != "" {
		return nil, nil, &sandbox.Unavailable{Mechanism: m, Reason: why}
	}
	details := &result.Sandbox{Mode: string(c.Mode), Network: string(c.Network)}
	for _, m := range c.Enforced {
		details.Enforced = append(details.Enforced, string(m))
	}
	return &c, details, nil
}
