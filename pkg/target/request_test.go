package target

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbash/agentbash/internal/sshtest"
)

// rpcProc is an `agentbash rpc` under test: send writes request lines, next reads the lines it wrote.
type rpcProc struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]json.RawMessage
}

func (p *rpcProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next line the server wrote, decoded as an object.
func (p *rpcProc) next() map[string]json.RawMessage {
	p.t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server's output ended")
		}
		return m
	case <-time.After(guard):
		p.t.Fatal("no line from the server")
	}
	return nil
}

// field is m's key as a Go string (a JSON string) or its JSON text.
func field(m map[string]json.RawMessage, key string) string {
	var s string
	if json.Unmarshal(m[key], &s) == nil {
		return s
	}
	return string(m[key])
}

// details is the details of the result a response or task_done carries, and its text.
func details(t *testing.T, m map[string]json.RawMessage) (d struct {
	Status, Target, TaskID, Cwd string
	ExitCode                    *int
}, text string) {
	var r struct {
		Content []struct{ Text string }
		Details *struct {
			Status, Target, TaskID, Cwd string
			ExitCode                    *int
		}
	}
	if err := json.Unmarshal(m["data"], &r); err != nil || r.Details == nil || len(r.Content) == 0 {
		t.Fatalf("no result in %s: %v", m["data"], err)
	}
	return *r.Details, r.Content[0].Text
}

// TestRequestTargets runs `agentbash rpc` whose own target is a cmd:// one (given on its command line: an
// agentbash rpc with its state in a directory of its own) and whose config file allows ssh://abtarget, a
// real sshd on 127.0.0.1: a request naming ssh://abtarget/DIR runs there (the host pattern allows any
// directory), its task is watched and read there; cmd:// is refused from a request though the list names
// it, and local on a server whose target is not local.
func TestRequestTargets(t *testing.T) {
	sshServer(t, sshtest.Options{}, true)
	conf := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(conf, []byte("targets:\n  allowed: [ssh://abtarget]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := rpcURI(t)
	cmd := exec.Command(bin, "rpc", "--config", conf, "--target", own)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home+"/state")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &rpcProc{t: t, in: in, lines: make(chan map[string]json.RawMessage, 100)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not a JSON object: %q", sc.Text())
			}
			p.lines <- m
		}
		close(p.lines)
	}()
	defer func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("rpc: %v\n%s", err, stderr.String())
		}
	}()

	p.send(`{"id":1,"type":"bash","command":"echo \"${SSH_CONNECTION:-none}\""}`)
	if d, text := details(t, p.next()); d.Target != own || text != "none" {
		t.Errorf("no target: the server's own: %+v %q", d, text)
	}
	p.send(`{"id":2,"type":"bash","command":"echo \"$SSH_CONNECTION\"; pwd","target":"ssh://abtarget/tmp"}`)
	d, text := details(t, p.next())
	if d.Target != "ssh://abtarget/tmp" || !strings.HasPrefix(text, "127.0.0.1 ") || !strings.HasSuffix(text, "\n/tmp") {
		t.Errorf("on ssh://abtarget/tmp: %+v %q", d, text)
	}
	for _, tc := range []struct{ target, want string }{
		{"cmd://sh -c id", `a request never names a cmd:// target`},
		{"local", `this server runs its commands on ` + own},
		{"ssh://abtarget-down", `not allowed`},
	} {
		p.send(fmt.Sprintf(`{"id":3,"type":"bash","command":"echo hi","target":%q}`, tc.target))
		m := p.next()
		if field(m, "success") != "false" || !strings.Contains(field(m, "error"), tc.want) ||
			!strings.Contains(field(m, "error"), fmt.Sprintf("%q", tc.target)) {
			t.Errorf("%s: %s", tc.target, m["error"])
		}
	}

	// A task on the target: its end is pushed, and the same target reads it; the server's own does not.
	p.send(`{"id":4,"type":"start","command":"echo task on $(hostname); exit 3","target":"ssh://abtarget"}`)
	d, _ = details(t, p.next())
	id := d.TaskID
	if id == "" || d.Target != "ssh://abtarget" {
		t.Fatalf("start: %+v", d)
	}
	done := p.next()
	if dd, _ := details(t, done); field(done, "type") != "task_done" || field(done, "taskId") != id ||
		dd.ExitCode == nil || *dd.ExitCode != 3 || dd.Target != "ssh://abtarget" {
		t.Errorf("task_done: %s", done["data"])
	}
	p.send(fmt.Sprintf(`{"id":5,"type":"output","taskId":%q,"target":"ssh://abtarget"}`, id))
	if _, text := details(t, p.next()); !strings.HasPrefix(text, "task on ") {
		t.Errorf("output on the target: %q", text)
	}
	p.send(fmt.Sprintf(`{"id":6,"type":"wait","taskId":%q}`, id))
	if m := p.next(); field(m, "success") != "false" || !strings.Contains(field(m, "error"), "no such task") {
		t.Errorf("wait on the server's own target: %s %s", m["error"], m["data"])
	}
}
