//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/proxy"
	_ "github.com/agentbash/agentbash/pkg/proxy/server" // the supervisor's side of the proxy, served here
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// origin is an HTTP server on the host's loopback that answers body and counts its requests.
func origin(t *testing.T, body string) (port int, hits func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := make(chan struct{}, 100)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n <- struct{}{}
		fmt.Fprint(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port, func() int { return len(n) }
}

// network proxy: the stage hands its listener to the supervisor's side (here, this test), the command's
// proxy variables point at it (whatever the caller's environment said), an allowed host is reached through
// it, a refused one is counted, a direct connection reaches only the command's own loopback, and once End
// ran, a process the command left behind can no longer use it.
func TestStageProxy(t *testing.T) {
	needNamespaces(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	allowed, allowedHits := origin(t, "ALLOWED-BODY")
	denied, deniedHits := origin(t, "DENIED-BODY")
	dir := t.TempDir()
	p := sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkProxy,
		AllowHosts: []string{fmt.Sprintf("127.0.0.1:%d", allowed)}}
	c, err := sandbox.Plan(p, sandbox.Place{Home: os.Getenv("HOME"), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "late")
	script := fmt.Sprintf(`printenv HTTP_PROXY https_proxy ALL_PROXY; echo "no_proxy=${NO_PROXY-unset}/${no_proxy-unset}"
curl -sS -m 5 http://127.0.0.1:%[1]d/; echo
curl -sS -m 5 http://127.0.0.1:%[2]d/; echo "denied_rc=$?"
curl -sS -m 5 -p http://127.0.0.1:%[2]d/; echo "tunnel_rc=$?"
curl -sS -m 2 --noproxy '*' http://127.0.0.1:%[1]d/; echo "direct_rc=$?"
(until [ -e %[3]s.go ]; do sleep 0.05; done; curl -sS -m 2 http://127.0.0.1:%[1]d/ > %[3]s 2>&1; echo "late_rc=$?" >> %[3]s) >/dev/null 2>&1 &
`, allowed, denied, late)
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "NO_PROXY=*", "HTTP_PROXY=http://elsewhere:1"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	st, err := sandbox.Wrap(cmd, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Started(cmd, cmd.Start()); err != nil {
		cmd.Wait()
		t.Fatalf("%v: %s", err, out.String())
	}
	cmd.Wait()
	got := st.End()
	if st.End() != nil {
		t.Error("a second End returned something")
	}
	text := out.String()
	lines := strings.Split(text, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "http://127.0.0.1:") || lines[1] != lines[0] || lines[2] != lines[0] {
		t.Errorf("the proxy variables: %q", text)
	}
	for _, want := range []string{"no_proxy=unset/unset", "ALLOWED-BODY", "blocked: it is not in sandbox.allowHosts",
		"denied_rc=0", "tunnel_rc=56", "direct_rc=7"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if allowedHits() != 1 || deniedHits() != 0 {
		t.Errorf("the origins saw %d and %d requests, want 1 and 0", allowedHits(), deniedHits())
	}
	if len(got) != 1 || got[0] != (proxy.Denial{Host: "127.0.0.1", Port: denied, Count: 2}) {
		t.Errorf("denied %+v", got)
	}
	// What the command left running tries the proxy after the run ended.
	if err := os.WriteFile(late+".go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var lateOut []byte
	for range 200 {
		if lateOut, _ = os.ReadFile(late); strings.Contains(string(lateOut), "late_rc=") {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.Contains(string(lateOut), "late_rc=7") || allowedHits() != 1 {
		t.Errorf("after End: %q, %d requests", lateOut, allowedHits())
	}
}
