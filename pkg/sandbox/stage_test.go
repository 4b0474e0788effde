//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbash/agentbash/internal/asuser"
	"github.com/agentbash/agentbash/pkg/raw"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// stageRun runs script with bash in dir, confined by p as planned for dir (and place's other facts), started
// through Wrap as pkg/run starts a shell. It returns the output, and the stage's error when it gave up
// (nothing ran then).
func stageRun(t *testing.T, p sandbox.Policy, dir, script string, place ...sandbox.Place) (string, error) {
	t.Helper()
	pl := sandbox.Place{Home: os.Getenv("HOME"), Dir: dir}
	if len(place) > 0 {
		pl = place[0]
		pl.Dir = dir
	}
	c, err := sandbox.Plan(p, pl)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + pl.Home, "LANG=C"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	st, err := sandbox.Wrap(cmd, c)
	if err != nil {
		return "", err
	}
	if err := st.Started(cmd, cmd.Start()); err != nil {
		if cmd.Process != nil {
			cmd.Wait()
		}
		return out.String(), err
	}
	cmd.Wait()
	return out.String(), nil
}

// fixture is a directory tree for the guarantees: a workspace (a git repository with one of agentbash's own
// directories inside), a directory outside it, a home with a denied ~/.ssh, a hidden state directory with a
// session's files, all under a fresh directory of the test in /var/tmp (the sandbox's /tmp is private: a
// tree under the host's /tmp would be unreachable whatever the other rules say, and prove nothing).
type fixture struct {
	root, ws, out, home, state, keep, own string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := os.MkdirTemp("/var/tmp", "absandbox-test")
	if err != nil {
		t.Skipf("no /var/tmp to work in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	f := fixture{root: root, ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out"),
		home: filepath.Join(root, "home"), state: filepath.Join(root, "state")}
	f.keep, f.own = filepath.Join(f.state, "sessions", "s", "dump.1"), filepath.Join(f.ws, ".own")
	for _, d := range []string{f.ws, f.out, filepath.Join(f.home, ".ssh"), filepath.Dir(f.keep), f.own} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string]string{
		filepath.Join(f.out, "f"): "keep\n", filepath.Join(f.home, ".ssh", "id"): "SSHSECRET\n",
		filepath.Join(f.state, "secret"): "STATESECRET\n", f.keep: "", filepath.Join(root, "beside"): "BESIDE\n",
		filepath.Join(f.ws, "tracked"): "v1\n", filepath.Join(f.own, "snapshot"): "own\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", f.ws, "init", "-q").CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	return f
}

func (f fixture) place() sandbox.Place {
	return sandbox.Place{Home: f.home, Own: []string{f.own}, Hidden: []string{f.state},
		Keep: []sandbox.Bind{{Path: raw.String(f.keep), Writable: true}}}
}

func needNamespaces(t *testing.T) {
	t.Helper()
	if sandbox.Probe().LandlockABI < 6 {
		t.Skip("this kernel has no Landlock ABI 6")
	}
	if err := sandbox.ProbeUserNS(); err != nil {
		t.Skipf("no user namespaces here (%v): TestProbeRefusedUserNS covers the refusal", err)
	}
}

// Every guarantee of the namespaced level (docs/architecture.md, "The sandbox"), as root and, through
// TestStageAsUser, as uid 65534: each line of the script prints what an attempt got, and the test checks
// both the words and the files on the host.
func TestStageNamespaced(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HOSTTCP\n"))
			c.Close()
		}
	}()
	abstract, err := net.Listen("unix", "@absbx-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	port := host.Addr().(*net.TCPAddr).Port
	sock := filepath.Join(f.out, "agent.sock")
	pathSock, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer pathSock.Close()
	py := func(code string) string { return "python3 -c '" + code + "' 2>/dev/null" }
	script := strings.Join([]string{
		`touch ws_new && echo "ws=ok"`,
		`touch ` + f.out + `/new 2>/dev/null; echo "out=$?"`,
		`rm -f ` + f.out + `/f 2>/dev/null; echo "rm=$?"`,
		`chmod 600 ` + f.out + `/f 2>/dev/null; echo "chmod=$?"`,
		`touch -d 2000-01-01 ` + f.out + `/f 2>/dev/null; echo "utime=$?"`,
		`ln -s ` + f.out + `/f link && echo x >> link 2>/dev/null; echo "symlink=$?"`,
		`ln ` + f.out + `/f hard 2>/dev/null; echo "hardlink=$?"`,
		`echo x >> /proc/self/root` + f.out + `/f 2>/dev/null; echo "procroot=$?"`,
		`echo "ssh=[$(cat ` + f.home + `/.ssh/id 2>&1 | head -c 60)]"`,
		`echo "state=[$(cat ` + f.state + `/secret 2>&1 | head -c 60)]"`,
		`echo kept >> ` + f.keep + ` && echo "keep=ok"`,
		`echo x >> ` + f.own + `/snapshot 2>/dev/null; echo "own=$?"`,
		`touch /tmp/private && echo "tmp=ok"`,
		`echo "run=[$(ls -A /run | head -c 60)]"`,
		`echo x > .git/hooks/pre-commit 2>/dev/null; echo "hook=$?"`,
		`echo "[x]" >> .git/config 2>/dev/null; echo "gitconfig=$?"`,
		`echo v2 > tracked && git add tracked && git -c user.name=t -c user.email=t@t commit -qm m && echo "commit=ok"`,
		`mv .git .git_old 2>/dev/null; echo "mvgit=$?"`,
		`mv ` + f.home + `/.ssh ` + f.home + `/ssh2 2>/dev/null; echo "mvdenied=$?"`,
		`echo "pts=[$(ls /dev/pts | tr '\n' ' ')]"`,
		`script -qc "echo in-pty" /dev/null`,
		py(`import ctypes,os,sys; nr={"x86_64":250,"aarch64":219}[os.uname().machine]; l=ctypes.CDLL(None,use_errno=True); sys.exit(0 if l.syscall(nr,0,-3,0,0,0)>=0 else 1)`) + `; echo "keyctl=$?"`,
		`grep CapEff /proc/self/status`,
		`unshare -U true 2>/dev/null; echo "unshare=$?"`,
		`nsenter -t 1 -n true 2>/dev/null; echo "nsenter=$?"`,
		`mkdir -p m && mount --bind /usr m 2>/dev/null; echo "mount=$?"`,
		`kill -0 ` + strconv.Itoa(os.Getpid()) + ` 2>/dev/null; echo "signal=$?"`,
		`cat /proc/` + strconv.Itoa(os.Getpid()) + `/environ >/dev/null 2>&1; echo "environ=$?"`,
		py(`import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); sys.exit(0 if l.ptrace(16,`+strconv.Itoa(os.Getpid())+`,0,0)==0 else 1)`) + `; echo "ptrace=$?"`,
		`(exec 3<>/dev/tcp/127.0.0.1/` + strconv.Itoa(port) + ` && head -1 <&3) 2>/dev/null; echo "tcp=$?"`,
		`(echo x > /dev/udp/8.8.8.8/53) 2>/dev/null; echo "udp=$?"`,
		`getent hosts example.com >/dev/null 2>&1; echo "dns=$?"`,
		py(`import socket; s=socket.socket(socket.AF_UNIX); s.connect("\0absbx-`+strconv.Itoa(os.Getpid())+`")`) + `; echo "abstract=$?"`,
		py(`import socket; s=socket.socket(socket.AF_UNIX); s.connect("`+sock+`")`) + `; echo "pathsock=$?"`,
		py(`import socket,threading; l=socket.socket(); l.bind(("127.0.0.1",0)); l.listen(); ` +
			`threading.Thread(target=lambda: l.accept()[0].send(b"OWN")).start(); ` +
			`c=socket.create_connection(l.getsockname()); print("own-loopback=" + c.recv(3).decode())`),
	}, "\n")
	got, err := stageRun(t, sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, DenyRead: []string{"~/.ssh"}}, f.ws,
		script, f.place())
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	for _, want := range []string{"ws=ok", "out=1", "rm=1", "chmod=1", "utime=1", "symlink=1", "hardlink=1",
		"procroot=1", "ssh=[cat: ", "state=[cat: ", "keep=ok", "own=1", "tmp=ok", "run=[]",
		"hook=1", "gitconfig=1", "commit=ok", "mvgit=1", "mvdenied=1", "pts=[ptmx ]", "in-pty", "keyctl=1", "CapEff:\t0000000000000000", "unshare=1", "nsenter=1", "mount=",
		"signal=1", "environ=1", "ptrace=1", "tcp=1", "udp=1", "dns=2", "abstract=1", "pathsock=0",
		"own-loopback=OWN"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	for _, leak := range []string{"SSHSECRET", "STATESECRET", "HOSTTCP", "mount=0"} {
		if strings.Contains(got, leak) {
			t.Errorf("%s leaked:\n%s", leak, got)
		}
	}
	for path, want := range map[string]string{filepath.Join(f.out, "f"): "keep\n", f.keep: "kept\n",
		filepath.Join(f.ws, ".git", "hooks", "pre-commit"): "", filepath.Join(f.ws, "ws_new"): ""} {
		b, err := os.ReadFile(path)
		if want == "" && strings.HasSuffix(path, "pre-commit") {
			if err == nil {
				t.Errorf("%s was written", path)
			}
			continue
		}
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", path, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(f.out, "f")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the mode outside changed: %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat("/tmp/private"); err == nil {
		t.Errorf("the private /tmp reached the host's")
	}
}

// A workspace under the host's /tmp is bound into the private /tmp: writable, while what lies beside it in
// the host's /tmp is not there.
func TestStageWorkspaceInTmp(t *testing.T) {
	needNamespaces(t)
	root := t.TempDir()
	os.Chmod(root, 0o755)
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(root, "beside"), []byte("BESIDE\n"), 0o644)
	// Denied paths inside it stay hidden: the workspace comes back from its descriptor, over the private /tmp.
	os.WriteFile(filepath.Join(ws, ".env"), []byte("ENVSECRET\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "keys"), 0o755)
	os.WriteFile(filepath.Join(ws, "keys", "id"), []byte("KEYSECRET\n"), 0o644)
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, DenyRead: []string{filepath.Join(ws, ".env"), filepath.Join(ws, "keys")}}
	got, err := stageRun(t, p, ws,
		`touch here && echo "here=ok"; cat ../beside 2>/dev/null; echo "beside=$?"; cat .env keys/id 2>&1; ls -A keys`)
	_, errHere := os.Stat(filepath.Join(ws, "here"))
	if err != nil || !strings.Contains(got, "here=ok") || !strings.Contains(got, "beside=1") || errHere != nil ||
		strings.Contains(got, "SECRET") {
		t.Errorf("%v (here %v):\n%s", err, errHere, got)
	}
}

// read-only: nothing but the private /tmp is writable, the working directory included.
func TestStageReadOnly(t *testing.T) {
	needNamespaces(t)
	f := newFixture(t)
	got, err := stageRun(t, sandbox.Policy{Mode: sandbox.ModeReadOnly}, f.ws,
		`touch here 2>/dev/null; echo "here=$?"; cat tracked; touch /tmp/t && echo "tmp=ok"`, f.place())
	if err != nil || !strings.Contains(got, "here=1") || !strings.Contains(got, "v1") || !strings.Contains(got, "tmp=ok") {
		t.Errorf("%v:\n%s", err, got)
	}
}

// The writes-only level (network on, nothing denied): Landlock and seccomp alone. Writes only under the
// writable set, rm included; no capabilities, also for root; no new namespaces; no signal to a process
// outside; no abstract socket outside. As root and, through TestStageAsUser, as uid 65534.
func TestStageConfinesWrites(t *testing.T) {
	if sandbox.Probe().LandlockABI < 6 {
		t.Skip("this kernel has no Landlock ABI 6: the stage refuses (TestStageFailsClosed)")
	}
	f := newFixture(t)
	abstract, err := net.Listen("unix", "@absbx-w-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer abstract.Close()
	cache := filepath.Join(f.home, ".cache")
	for _, d := range []string{filepath.Join(cache, "agentbash"), filepath.Join(cache, "pip")} {
		os.MkdirAll(d, 0o755)
	}
	script := `touch a; touch ` + f.out + `/b; rm -f ` + f.out + `/f; echo "rm=$?"; grep CapEff /proc/self/status; ` +
		`touch ` + cache + `/pip/wheel && echo "cache=ok"; touch ` + cache + `/agentbash/x 2>/dev/null; echo "own=$?"; ` +
		`unshare -U true 2>/dev/null; echo "userns=$?"; kill -0 ` + strconv.Itoa(os.Getpid()) + ` 2>/dev/null; echo "kill=$?"; ` +
		`python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("\0absbx-w-` + strconv.Itoa(os.Getpid()) +
		`")' 2>/dev/null; echo "abstract=$?"`
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, CacheDirs: []string{"~/.cache"}}
	pl := sandbox.Place{Home: f.home, Dir: f.ws, Own: []string{filepath.Join(cache, "agentbash")}}
	c, err := sandbox.Plan(p, pl)
	if err != nil || c.Namespaced() {
		t.Fatalf("plan %+v, %v: want the writes-only level", c, err)
	}
	got, err := stageRun(t, p, f.ws, script, pl)
	if err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	_, errA := os.Stat(filepath.Join(f.ws, "a"))
	_, errB := os.Stat(filepath.Join(f.out, "b"))
	_, errKeep := os.Stat(filepath.Join(f.out, "f"))
	for _, want := range []string{"rm=1", "CapEff:\t0000000000000000", "cache=ok", "own=1", "userns=1", "kill=1", "abstract=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	if errA != nil || errB == nil || errKeep != nil {
		t.Errorf("a %v, b %v, keep %v, output:\n%s", errA, errB, errKeep, got)
	}
}

// A stage that cannot confine runs nothing: the start fails with Sandbox unavailable and the reason.
func TestStageFailsClosed(t *testing.T) {
	dir := t.TempDir()
	c := sandbox.Confinement{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Dir: "/nonexistent/dir",
		Enforced: []sandbox.Mechanism{sandbox.LandlockFS}, Writable: []string{dir}}
	out, err := confinedRun(t, c, dir, "touch ran; echo RAN")
	_, ranErr := os.Stat(filepath.Join(dir, "ran"))
	if err == nil || !strings.HasPrefix(err.Error(), "Sandbox unavailable: stage: enter the working directory /nonexistent/dir") || ranErr == nil ||
		strings.Contains(out, "RAN") {
		t.Errorf("%v: %q", err, out)
	}
}

// The stage tests again as an ordinary user (CI runs as root).
func TestStageAsUser(t *testing.T) {
	if os.Getuid() != 0 || asuser.Again() {
		t.Skip("runs the stage tests as uid 65534 when root")
	}
	out, err := asUser(t, "^TestStage(Namespaced|WorkspaceInTmp|ReadOnly|ConfinesWrites|FailsClosed|Proxy)$")
	if err != nil || strings.Count(out, "--- PASS") != 6 {
		t.Errorf("as uid 65534: %v\n%s", err, out)
	}
}

// A user's process that holds a capability (ambient, as setpriv --ambient-caps gives it) execs the command
// with none all the same.
func TestStageDropsAmbientCapabilities(t *testing.T) {
	if os.Getuid() != 0 || asuser.Again() {
		t.Skip("needs root to give uid 65534 an ambient capability")
	}
	out, err := asUser(t, "^TestStage(ConfinesWrites|Namespaced)$", "--inh-caps=+net_raw", "--ambient-caps=+net_raw")
	if err != nil || strings.Count(out, "--- PASS") != 2 {
		t.Errorf("as uid 65534 with CAP_NET_RAW ambient: %v\n%s", err, out)
	}
}

var _ = fmt.Sprint

// Writes-only: a writable directory holding a read-only path is replaced by its entries (carve); entries
// that another process removes meanwhile are not the stage's failure (they were refused as "changed since
// the policy was resolved" before). This can only pass wrongly, never fail wrongly.
func TestStageCarvedEntriesVanish(t *testing.T) {
	if sandbox.Probe().LandlockABI < 6 {
		t.Skip("this kernel has no Landlock ABI 6")
	}
	w := t.TempDir()
	own, sub := filepath.Join(w, "own"), filepath.Join(w, "sub")
	if os.Mkdir(own, 0o755) != nil || os.Mkdir(sub, 0o755) != nil {
		t.Fatal("mkdir")
	}
	c := sandbox.Confinement{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkOn, Dir: raw.String(w),
		Enforced: []sandbox.Mechanism{sandbox.LandlockFS, sandbox.LandlockScope, sandbox.Seccomp},
		Writable: []string{w}, ReadOnly: []string{own}}
	stop := make(chan struct{})
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := range 100 {
				p := filepath.Join(w, "churn."+strconv.Itoa(i))
				os.WriteFile(p, nil, 0o644)
				os.Remove(p)
			}
		}
	}()
	defer func() { close(stop); <-churned }()
	for range 10 {
		out, err := confinedRun(t, c, w, "touch "+sub+"/made; touch "+own+"/not 2>/dev/null; echo ok")
		if err != nil || out != "ok\n" {
			t.Fatalf("%v: %q", err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(own, "not")); err == nil {
		t.Error("the read-only path was written")
	}
}

// confinedRun runs script with sh in dir, confined as c says (planned already), started through Wrap as
// pkg/run starts a shell: its output, and the stage's error when it gave up.
func confinedRun(t *testing.T, c sandbox.Confinement, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	st, err := sandbox.Wrap(cmd, c)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Started(cmd, cmd.Start())
	cmd.Wait()
	return out.String(), err
}
