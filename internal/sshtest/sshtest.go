// Package sshtest starts a real OpenSSH server on 127.0.0.1 for tests of targets (pkg/target): host and
// user keys made with ssh-keygen in the test's temp dir, the target's environment set by sshd's SetEnv (a
// private HOME, a PATH the test chooses), and the client side agentbash's ssh uses: a config file with
// Host aliases and an `ssh` wrapper that runs the system client with -F that file, to put first on PATH.
// OpenSSH reads ~/.ssh/config and known_hosts from the passwd entry's home, not $HOME, hence the wrapper.
//
// The server runs as the test's user. Run as root, it can log in another user (Options.User), so a test
// exercises an unprivileged target.
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/internal/syncbuf"
)

// Sshd is where Debian's openssh-server puts the server.
const Sshd = "/usr/sbin/sshd"

// Host aliases of the client config.
const (
	Alias     = "abtarget"      // the server
	DownAlias = "abtarget-down" // a port of 127.0.0.1 nobody listens on
)

// Options shape a server.
type Options struct {
	// User is the login name the client logs in as; "" is the test's own user. Another user needs root.
	User string
	// Path is the directories put before /usr/bin:/bin on the target's PATH.
	Path []string
}

// Server is a running sshd and its client side.
type Server struct {
	Dir      string // the fixture's files
	Port     int
	DownPort int
	User     string
	Home     string // the target's HOME (SetEnv), owned by User
	BinDir   string // holds the ssh wrapper: first on the client's PATH
	Conf     string // the client config
	UserKey  string // the client's private key
	// KnownHosts is the client's known_hosts file.
	KnownHosts string

	cmd *exec.Cmd
	log *logBuffer
}

// logBuffer is sshd's log, written by the copying goroutine and read by the test.
type logBuffer = syncbuf.Buffer

// Available says why sshd cannot run here ("" when it can): t.Skip with it, or t.Fatal under CI (env CI
// set), where .ci/run installs openssh-server.
func Available() string {
	for _, p := range []string{Sshd, "/usr/bin/ssh", "/usr/bin/ssh-keygen"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("%s is missing (install openssh-server and openssh-client)", p)
		}
	}
	return ""
}

// Need skips t when sshd cannot run here, and fails it under CI.
func Need(t testing.TB) {
	t.Helper()
	if why := Available(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
}

// Start starts a server for the test; it is stopped at the test's end.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	Need(t)
	self, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: t.TempDir(), User: o.User, log: &logBuffer{}}
	if s.User == "" {
		s.User = self.Username
	}
	uid, gid := -1, -1
	if s.User != self.Username {
		u, err := user.Lookup(s.User)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		// The user's ssh and sshd's session read the fixture's files: the temp dirs must be passable.
		for d := s.Dir; d != os.TempDir() && d != "/" && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
			_ = os.Chmod(d, 0o755)
		}
	}
	hostKey := s.keygen(t, "host_ed25519")
	s.UserKey = s.keygen(t, "id_user")
	auth := filepath.Join(s.Dir, "authorized_keys")
	copyFile(t, s.UserKey+".pub", auth, 0o644)
	s.Home = filepath.Join(s.Dir, "home")
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	if err := os.Mkdir(s.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.KnownHosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		for _, p := range []string{s.Home, s.UserKey, s.KnownHosts} {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	ports := freePorts(t, 2)
	s.Port, s.DownPort = ports[0], ports[1]
	path := strings.Join(append(append([]string{}, o.Path...), "/usr/bin", "/bin"), ":")
	conf := filepath.Join(s.Dir, "sshd_config")
	writeFile(t, conf, strings.Join([]string{
		fmt.Sprintf("ListenAddress 127.0.0.1:%d", s.Port),
		"HostKey " + hostKey, "PidFile " + filepath.Join(s.Dir, "sshd.pid"), "AuthorizedKeysFile " + auth,
		"PermitRootLogin prohibit-password", "PubkeyAuthentication yes", "PasswordAuthentication no",
		"KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "PermitUserEnvironment no",
		"X11Forwarding no", "PrintMotd no", "MaxStartups 64:30:128", "MaxSessions 64", "LogLevel VERBOSE",
		fmt.Sprintf("SetEnv HOME=%s PATH=%s XDG_STATE_HOME=%s/.local/state XDG_CONFIG_HOME=%s/.config XDG_CACHE_HOME=%s/.cache",
			s.Home, path, s.Home, s.Home, s.Home),
		""}, "\n"))
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755) // the privilege separation directory, as Debian's init makes it
	}
	if out, err := exec.Command(Sshd, "-t", "-f", conf).CombinedOutput(); err != nil {
		t.Fatalf("sshd -t: %v: %s", err, out)
	}
	s.cmd = exec.Command(Sshd, "-D", "-e", "-f", conf)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.Env = withoutSSH(os.Environ())
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd does not listen on 127.0.0.1:%d: %s", s.Port, s.log)
		}
	}
	s.client(t)
	return s
}

// client writes the client config (both aliases) and the ssh wrapper.
func (s *Server) client(t testing.TB) {
	s.Conf = filepath.Join(s.Dir, "ssh_config")
	var b strings.Builder
	for _, h := range []struct {
		alias string
		port  int
	}{{Alias, s.Port}, {DownAlias, s.DownPort}} {
		fmt.Fprintf(&b, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking accept-new\n"+
			"  GSSAPIAuthentication no\n  ConnectTimeout 10\n  LogLevel ERROR\n\n",
			h.alias, h.port, s.User, s.UserKey, s.KnownHosts)
	}
	writeFile(t, s.Conf, b.String())
	s.BinDir = filepath.Join(s.Dir, "clientbin")
	if err := os.Mkdir(s.BinDir, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/ssh -F '%s' \"$@\"\n", s.Conf)
	if err := os.WriteFile(filepath.Join(s.BinDir, "ssh"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Env is base for a process whose ssh is the fixture's client: the wrapper first on PATH, and no ssh
// agent or session of the caller's.
func (s *Server) Env(base []string) []string {
	env := withoutSSH(base)
	path := "/usr/bin:/bin"
	for i, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	return append(env, "PATH="+s.BinDir+":"+path)
}

// UsePATH puts the wrapper first on the test process's own PATH (t.Setenv), for connectors it starts.
func (s *Server) UsePATH(t *testing.T) {
	t.Setenv("PATH", s.BinDir+":"+os.Getenv("PATH"))
	for _, k := range []string{"SSH_AUTH_SOCK", "SSH_AGENT_PID"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// ChangeHostKey makes the client's known_hosts hold another key for the server, as after a reinstall.
func (s *Server) ChangeHostKey(t testing.TB) {
	t.Helper()
	other := s.keygen(t, "other_host_ed25519")
	pub, err := os.ReadFile(other + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	line := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.Port, f[0], f[1])
	if err := os.WriteFile(s.KnownHosts, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Log is what sshd logged so far.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
}

func (s *Server) keygen(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(s.Dir, name)
	out, err := exec.Command("/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest-"+name, "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	return path
}

func freePorts(t testing.TB, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func withoutSSH(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SSH_") {
			out = append(out, kv)
		}
	}
	return out
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}
