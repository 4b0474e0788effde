// Package early starts the supervisor of a `run` while the rest of the program is still initializing.
//
// A supervisor (pkg/supervisor) is this binary re-executed, and a Go binary spends about a millisecond on
// its packages' init functions (viper, cobra, net/http through afero, …) before main runs. Started from
// main, the supervisor's own start-up would follow the client's; started here, from an init function that
// runs as soon as os and syscall are ready (Go initializes the packages that are ready in the order of their
// import paths, and this one needs nothing else), the two overlap. [Take] hands the started process to
// pkg/supervisor, which treats it as the supervisor it would have spawned itself.
//
// Only a process whose first argument is `run` starts one; nothing is started when the start fails in any
// way, and the caller spawns its supervisor the usual way instead.
package early

import (
	"os"
	"sync"
)

// Command is the hidden command a supervisor runs as (`agentbash __supervise`).
const Command = "__supervise"

// Argv0 is the supervisor's argv[0]: the base name this binary was started as, so `ps` shows
// `agentbash __supervise` wherever it was installed (the binary itself is /proc/self/exe).
func Argv0() string {
	a := os.Args[0]
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] == '/' {
			return a[i+1:]
		}
	}
	return a
}

// spawned is the supervisor started at init, until Take hands it on; ok is false when none was started.
var spawned supervisor

type supervisor struct {
	pid    int
	socket *os.File
	ok     bool
}

var take sync.Mutex

func init() {
	if len(os.Args) < 2 || os.Args[1] != "run" {
		return
	}
	// Here and not on a goroutine: the run waits for its supervisor's start (its runtime's, then its
	// inits'), not for the client's, so the spawn goes first. A goroutine had to wait for a thread of its
	// own, which started the supervisor 0.5 to 1.5 ms later than the 0.3 ms the spawn itself takes.
	spawned.pid, spawned.socket, spawned.ok = spawn()
}

// Take returns the supervisor started at init, once: its pid and the client's end of its socket (descriptor
// 3 in the supervisor), or ok false when none was started or it was taken already.
func Take() (pid int, socket *os.File, ok bool) {
	take.Lock()
	defer take.Unlock()
	s := spawned
	spawned = supervisor{}
	return s.pid, s.socket, s.ok
}
