package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/raw"
)

// StageCommand is the hidden command a sandboxed run's shell is started through (pkg/reexec): it reads a
// StageSpec on descriptor 3, confines itself and execs the command. Nothing of the policy is on its argv.
const StageCommand = "__sandbox"

// StageSpec is what the stage is given: the confinement, and the argv and environment to exec once
// confined. Files is how many descriptors the command gets from 3 up (they reach the stage from 5 up).
type StageSpec struct {
	Confinement
	Path  raw.String `json:"path"` // the program to exec (Argv[0] as the parent looked it up)
	Argv  raw.List   `json:"argv"`
	Env   raw.List   `json:"env"`
	Files int        `json:"files,omitempty"`
}

// The stage's descriptors: the spec to read, the report to write (a SOCK_SEQPACKET socket, closed on exec:
// EOF is success), and the first of the command's own.
const (
	specFD   = 3
	reportFD = 4
	firstFD  = 5
)

// ErrUnavailable is wrapped by the error of a stage that could not confine: nothing ran. Its text starts
// `Sandbox unavailable: <mechanism>: <reason>` (reference §13).
var ErrUnavailable = errors.New("sandbox unavailable")

// Unavailable is a failure to confine: the mechanism and why, with what would fix it. Errno is the system
// error behind it when there is one (E2BIG: the command's arguments and environment are too large to exec).
type Unavailable struct {
	Mechanism Mechanism     `json:"mechanism"`
	Reason    string        `json:"reason"`
	Errno     syscall.Errno `json:"errno,omitempty"`
}

func (u *Unavailable) Error() string {
	return fmt.Sprintf("Sandbox unavailable: %s: %s", u.Mechanism, u.Reason)
}

func (u *Unavailable) Is(target error) bool {
	return target == ErrUnavailable || u.Errno != 0 && target == u.Errno
}

// Stage is a command about to start through the stage: Wrap made it, Started waits for the stage's word,
// End ends what the run had of it (the proxy of network proxy).
type Stage struct {
	report     *os.File
	namespaced bool
	allow      proxy.AllowList // network proxy: what its proxy lets through
	wantsProxy bool
	proxy      proxy.Server
	notify     atomic.Pointer[func([]proxy.Denial)]
}

// Wrap turns cmd (the shell's argv, environment, working directory, standard streams and extra files,
// not started) into the stage that confines itself as c says and then execs that shell: cmd runs this
// binary as StageCommand, in new user and mount namespaces when c is namespaced (and a network namespace
// for network off). After cmd.Start, Started says whether the shell runs or why the stage gave up.
func Wrap(cmd *exec.Cmd, c Confinement) (*Stage, error) {
	// The running binary itself, not its path: no directory on the way needs to be searchable by this user,
	// and a binary replaced on disk meanwhile is not the one that starts.
	const self = "/proc/self/exe"
	spec := StageSpec{Confinement: c, Path: raw.String(cmd.Path), Argv: cmd.Args, Env: cmd.Env, Files: len(cmd.ExtraFiles)}
	if spec.Env == nil {
		spec.Env = os.Environ()
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	specFile, err := specReader(data)
	if err != nil {
		return nil, err
	}
	allow, err := proxy.ParseAllowList(c.AllowHosts)
	if err != nil {
		specFile.Close()
		return nil, &Unavailable{Mechanism: Proxy, Reason: "sandbox.allowHosts: " + err.Error()}
	}
	if c.Network == NetworkProxy && !proxy.Available() {
		// Fail closed before anything starts: the command would otherwise get a listener nobody serves.
		specFile.Close()
		return nil, &Unavailable{Mechanism: Proxy, Reason: proxy.ErrNoServer.Error()}
	}
	allow.Restrict(c.Narrowed)
	rr, rw, err := reportPair()
	if err != nil {
		specFile.Close()
		return nil, err
	}
	cmd.Path, cmd.Args = self, []string{self, StageCommand}
	cmd.ExtraFiles = append([]*os.File{specFile, rw}, cmd.ExtraFiles...)
	cmd.Env = []string{} // the command's environment is in the spec; the stage needs none
	if err := sysProcAttr(cmd, c); err != nil {
		specFile.Close()
		rr.Close()
		rw.Close()
		return nil, err
	}
	return &Stage{report: rr, namespaced: c.Namespaced(), allow: allow, wantsProxy: c.Network == NetworkProxy}, nil
}

// Started is called after cmd.Start (startErr its error) and closes what Wrap opened in this process. It
// returns nil once the stage exec'd the shell, or an *Unavailable: the namespaces could not be made (the
// start failed), or the stage could not confine. On an error the caller waits for cmd and reports it;
// nothing of the command ran. With network proxy, the stage's listener is served from here on (pkg/proxy)
// until End.
func (s *Stage) Started(cmd *exec.Cmd, startErr error) error {
	for _, f := range cmd.ExtraFiles[:2] {
		f.Close()
	}
	defer s.report.Close()
	if startErr != nil {
		return startUnavailable(startErr, s.namespaced)
	}
	msg, listener, err := readReport(s.report)
	if err != nil {
		// Without the stage's word nothing says it confined itself: not a start.
		return &Unavailable{Mechanism: "stage", Reason: "read the stage's report: " + err.Error()}
	}
	if len(msg) > 0 {
		if listener != nil {
			listener.Close()
		}
		u := &Unavailable{}
		if err := json.Unmarshal(msg, u); err != nil || u.Mechanism == "" {
			return &Unavailable{Mechanism: "stage", Reason: fmt.Sprintf("the stage ended with %q", msg)}
		}
		return u
	}
	switch {
	case s.wantsProxy && listener == nil:
		return &Unavailable{Mechanism: Proxy, Reason: "the stage exec'd the command without handing over the proxy's listener"}
	case listener != nil && !s.wantsProxy:
		listener.Close()
	case listener != nil:
		p, err := proxy.Serve(listener, s.allow, func(denied []proxy.Denial) {
			if f := s.notify.Load(); f != nil {
				(*f)(denied)
			}
		})
		if err != nil { // not after Wrap's check; were it, the command is ended before it does anything
			listener.Close()
			_ = cmd.Process.Kill()
			return &Unavailable{Mechanism: Proxy, Reason: err.Error()}
		}
		s.proxy = p
	}
	return nil
}

// Notify has f called with everything the run's proxy refused so far after each refusal, from the
// proxy's goroutines (f must not block); nothing without a proxy.
func (s *Stage) Notify(f func([]proxy.Denial)) {
	if s != nil && f != nil {
		s.notify.Store(&f)
	}
}

// End ends the run's proxy, if it has one (the listener and every connection close), and returns what the
// proxy refused (details.sandbox.denied). It is called once the run ended; a second call returns nil.
func (s *Stage) End() []proxy.Denial {
	if s == nil || s.proxy == nil {
		return nil
	}
	p := s.proxy
	s.proxy = nil
	return p.Close()
}

// proxyEnv is env with the proxy of network proxy, at 127.0.0.1:port, as every proxy-aware tool looks for
// it: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY in both cases (curl and git read only the lower-case
// http_proxy), and NO_PROXY and no_proxy unset (a host they named would go direct, and fail).
func proxyEnv(env []string, port int) []string {
	names := []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, strings.ToUpper(name))
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, name := range names[:3] {
		out = append(out, name+"="+url, strings.ToLower(name)+"="+url)
	}
	return out
}

// StageMain runs the stage: on any failure it says why on the report descriptor (and stderr when there is
// none), prefixed `Sandbox unavailable:` as the result says it, and exits 125 without running anything
// (fail closed).
func StageMain() int {
	f := os.NewFile(specFD, "sandbox-spec")
	var spec StageSpec
	err := json.NewDecoder(f).Decode(&spec)
	if f != nil {
		f.Close()
	}
	report := os.NewFile(reportFD, "sandbox-report")
	if err == nil && len(spec.Argv) == 0 {
		err = errors.New("no command")
	}
	if err == nil {
		err = stage(spec) // returns only on failure
	}
	var u *Unavailable
	if !errors.As(err, &u) {
		u = &Unavailable{Mechanism: "stage", Reason: err.Error()}
	}
	msg, _ := json.Marshal(u)
	if report == nil || func() error { _, err := report.Write(msg); return err }() != nil {
		fmt.Fprintln(os.Stderr, u.Error())
	}
	return 125
}
