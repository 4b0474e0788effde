package target

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/internal/sshtest"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
)

// sshServer starts the fixture with the agentbash under test on the target's PATH (onPath), or none.
func sshServer(t *testing.T, o sshtest.Options, onPath bool) *sshtest.Server {
	t.Helper()
	if onPath {
		o.Path = append(o.Path, filepath.Dir(bin))
	}
	s := sshtest.Start(t, o)
	s.UsePATH(t)
	return s
}

func TestSSHHello(t *testing.T) {
	sshServer(t, sshtest.Options{}, true)
	h, err := open(t, "ssh://"+sshtest.Alias).Hello(ctx(t))
	if err != nil || h.Protocol != request.Protocol || h.Version != Version {
		t.Errorf("hello over ssh: %+v, %v", h, err)
	}
}

// TestSSHRefused: a closed port, a changed host key and a target without agentbash are errors naming the
// target and ssh's own message, or the install hint.
func TestSSHRefused(t *testing.T) {
	s := sshServer(t, sshtest.Options{}, false)
	for _, tt := range []struct {
		name, uri string
		before    func()
		want      []string
	}{
		{"closed port", "ssh://" + sshtest.DownAlias, nil, []string{"target ssh://abtarget-down: cannot connect", "Connection refused"}},
		{"not installed", "ssh://" + sshtest.Alias, nil,
			[]string{"agentbash is not installed on ssh://abtarget: run `agentbash target install ssh://abtarget`"}},
		{"host key changed", "ssh://" + sshtest.Alias, func() { s.ChangeHostKey(t) },
			[]string{"target ssh://abtarget: cannot connect", "Host key verification failed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			_, err := open(t, tt.uri).Hello(ctx(t))
			t.Log(err)
			for _, w := range append(tt.want, tt.uri) {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("hello: %v\nwant %q in it", err, w)
				}
			}
		})
	}
}

// TestRunOverSSH runs a command on the target through the executor: the result is the target's (its
// cwd, SSH_CONNECTION set there), with details.target; a session's state carries over there.
func TestRunOverSSH(t *testing.T) {
	s := sshServer(t, sshtest.Options{}, true)
	uri := "ssh://" + sshtest.Alias + "/~"
	e := open(t, uri)
	r := e.Run(ctx(t), command(`echo "$SSH_CONNECTION"; pwd`), nil)
	d := r.Details
	lines := strings.Split(r.Text(), "\n")
	if d.Status != result.StatusExited || d.Target != uri || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "127.0.0.1 ") || lines[1] != s.Home || d.Cwd != s.Home {
		t.Errorf("result %+v\ntext %q", d, r.Text())
	}
}

// command is c with its resolved half filled as the service would for defaults.
func command(c string) request.Command {
	return request.Command{Command: c, Resolved: &request.Resolved{Protocol: request.Protocol, Command: rawOf(c), Run: rawOf(c),
		NormalizedCommand: rawOf(c), Timeout: 30, KillGrace: 1, Head: -1, Tail: -1, MaxBytes: 50 << 10,
		NonZeroExit: result.NonZeroError}}
}

// TestUnprivilegedUser: an unprivileged user installs agentbash on a target where they log in as
// themselves (the local agentbash runs as that user), then a connection reaches it. Needs root to make
// the user.
func TestUnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create an unprivileged user (useradd); run as root, as CI does")
	}
	name := newUser(t)
	s := sshServer(t, sshtest.Options{User: name}, false)
	out := runAs(t, name, s, bin, "target", "install", "ssh://"+sshtest.Alias)
	installed := filepath.Join(s.Home, InstallDir, "agentbash-"+Version)
	if fi, err := os.Stat(installed); err != nil || fi.Mode().Perm() != 0o755 || !strings.Contains(out, "installed") {
		t.Fatalf("install: %s; %s: %v", out, installed, err)
	}
	h, err := open(t, "ssh://"+sshtest.Alias).Hello(ctx(t))
	if err != nil || h.Version != Version {
		t.Fatalf("hello after install: %+v, %v", h, err)
	}
	if out := runAs(t, name, s, bin, "target", "install", "ssh://"+sshtest.Alias); !strings.Contains(out, "already") {
		t.Errorf("second install: %s", out)
	}
	e := open(t, "ssh://"+sshtest.Alias)
	r := e.Run(ctx(t), command("id -un; echo $HOME"), nil)
	if r.Details.Status != result.StatusExited || r.Text() != name+"\n"+s.Home {
		t.Errorf("run as %s: %+v %q", name, r.Details, r.Text())
	}
}

func rawOf(s string) run.Raw { return run.Raw(s) }

// newUser makes a user for the test (removed at its end) and returns its name. Its password is "*", no
// password rather than a locked account, which sshd refuses without PAM.
func newUser(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("abtg%d", os.Getpid()%100000)
	if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", "-p", "*", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", "-r", name).Run() })
	return name
}

// runAs runs argv as user name (setpriv), with the fixture's ssh client, and returns its output; a failure
// fails the test.
func runAs(t *testing.T, name string, s *sshtest.Server, argv ...string) string {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", append([]string{"--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups", "--"}, argv...)...)
	cmd.Env = append(s.Env(os.Environ()), "HOME="+u.HomeDir, "XDG_CONFIG_HOME="+u.HomeDir+"/.config")
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as %s: %v: %s\nsshd: %s", argv, name, err, out, s.Log())
	}
	return string(out)
}
