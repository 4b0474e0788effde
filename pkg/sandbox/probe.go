package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ProbeCommand is the hidden command the user-namespace probe re-executes agentbash as (pkg/reexec): it
// exits 0 at once; that it started at all in a new user namespace is the answer.
const ProbeCommand = "__sandbox-probe"

// Available is what this process may use, as probed: the Landlock ABI (0: none) and seccomp filters. Whether
// a user namespace can be made is answered by making one: the stage's start (Wrap), or ProbeUserNS.
type Available struct {
	LandlockABI int
	LandlockErr error // why there is no Landlock, when LandlockABI is 0
	SeccompErr  error // nil when seccomp filters are available
}

// errNotLinux is why there is no sandbox off Linux.
var errNotLinux = errors.New("the sandbox is built on Linux's Landlock and namespaces, which this system has not: " +
	"run without --sandbox here, or on Linux")

// landlockScopeABI is the first Landlock ABI with scopes (signals, abstract unix sockets).
const landlockScopeABI = 6

var probed = sync.OnceValue(probe)

// Probe is what this machine offers this process, probed once with two system calls (reference §13: each
// guarantee maps to the mechanisms it needs).
func Probe() Available { return probed() }

// Missing is the first mechanism of needs that a is without, with the reason and what would fix it, or ""
// when all are there. The namespaces are not probed here: a stage that cannot make them fails at its start
// the same way (userNSReason). A command whose policy misses one does not start (fail closed): its result says
// `Sandbox unavailable: <mechanism>: <reason>`.
func (a Available) Missing(needs []Mechanism) (m Mechanism, reason string) {
	for _, n := range needs {
		switch n {
		case LandlockFS:
			if errors.Is(a.LandlockErr, errNotLinux) {
				return n, errNotLinux.Error()
			}
			if a.LandlockABI < 1 {
				return n, fmt.Sprintf("Landlock is not available (%v); it needs Linux 5.13 or later with landlock in "+
					"the kernel's lsm= list", a.LandlockErr)
			}
		case LandlockScope:
			if a.LandlockABI < landlockScopeABI {
				return n, fmt.Sprintf("Landlock ABI %d has no scopes (signals, abstract sockets); they need ABI %d "+
					"(Linux 6.12 or later)", a.LandlockABI, landlockScopeABI)
			}
		case Seccomp:
			if a.SeccompErr != nil {
				return n, fmt.Sprintf("seccomp filters are not available (%v)", a.SeccompErr)
			}
		}
	}
	return "", ""
}

// userNSReason is why a stage needing namespaces could not start (err: the failed clone or id mapping), with
// what would fix it.
func userNSReason(err error) string {
	return fmt.Sprintf("a user namespace cannot be made here (%v); on Ubuntu, AppArmor's "+
		"kernel.apparmor_restrict_unprivileged_userns=1 refuses them (set it to 0, or give agentbash an "+
		"AppArmor profile that allows userns); inside another sandbox or container, allow nested user "+
		"namespaces (or raise user.max_user_namespaces), or use a policy that needs none "+
		"(sandbox.network: on and sandbox.denyRead: [])", strings.TrimSpace(err.Error()))
}
