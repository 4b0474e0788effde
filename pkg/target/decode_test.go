package target

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/local"
	// This test binary is also the supervisor of the local runs a test starts (and the snapshot's
	// helper): they re-execute it, and pkg/reexec's init runs them.
	_ "github.com/agentbash/agentbash/pkg/reexec"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/service"
)

// services are a service on this machine and one on a target (the real rpc through cmd://), with the same
// settings: a 200-byte window.
func services(t *testing.T) (here, there *service.Service, uri string) {
	dir := t.TempDir()
	c := service.Config{Timeout: 30, KillGrace: 1, MaxBytes: 200, NonZeroExit: result.NonZeroError}
	l := local.New(local.Config{ArtifactDir: filepath.Join(dir, "art"), SessionDir: filepath.Join(dir, "sessions"),
		TaskDir: filepath.Join(dir, "tasks"), KillLimit: 10 * time.Second})
	t.Cleanup(func() { l.Close() })
	uri = rpcURI(t)
	return service.New(c, l), service.New(c, open(t, uri)), uri
}

// TestDecodeFooter: a result from a target has the output and footer lines a local one has (a terminal
// colours the footer, MCP's structuredContent.truncation reads the notice there), and the same text.
func TestDecodeFooter(t *testing.T) {
	here, there, _ := services(t)
	for _, cmd := range []string{"seq 1 100; exit 3", "seq 1 3", "exit 4", "kill -9 $$", "printf 'a\\0b'",
		"printf 'x\\n\\nCommand exited with code 5'; exit 5"} {
		l := here.Run(ctx(t), request.Command{Command: cmd}, nil)
		r := there.Run(ctx(t), request.Command{Command: cmd}, nil)
		if r.Output != l.Output || !slices.Equal(r.Footer, l.Footer) || r.Text() != l.Text() || r.Content[0].Text != l.Text() {
			t.Errorf("%s: target output %q footer %q\nlocal output %q footer %q", cmd, r.Output, r.Footer, l.Output, l.Footer)
		}
	}
	r := there.Run(ctx(t), request.Command{Command: "seq 1 100"}, nil)
	if n := len(r.Footer); n != 1 || !strings.HasPrefix(r.Footer[0], "[Showing lines") || r.Details.Meta == nil {
		t.Errorf("truncated: footer %q", r.Footer)
	}
}

// TestDecodeHints: the hint of a task yielded on a target names the target, so following it reaches the
// task.
func TestDecodeHints(t *testing.T) {
	_, there, uri := services(t)
	r := there.Yield(ctx(t), request.Command{Command: "echo started; sleep 60"}, 0.5)
	d := r.Details
	want := fmt.Sprintf("[Still running as task %s (pid %d): agentbash output %s --target %s to read more]",
		d.TaskID, d.Pid, d.TaskID, quote(uri))
	if d.Status != result.StatusRunning || len(r.Footer) == 0 || r.Footer[len(r.Footer)-1] != want ||
		!strings.HasSuffix(r.Content[0].Text, "\n\n"+want) {
		t.Errorf("yielded: %+v footer %q\nwant %q", d, r.Footer, want)
	}
	if d.TaskID != "" {
		_, _ = there.Kill(ctx(t), d.TaskID, 9)
	}
	e := &Executor{t: Target{URI: "ssh://h/a b"}}
	if w := e.withTarget("they stay the task's until they end, and `agentbash kill 7` ends them"); w !=
		"they stay the task's until they end, and `agentbash kill 7 --target 'ssh://h/a b'` ends them" {
		t.Errorf("warning: %q", w)
	}
}

// answering is a far side that answers the handshake, then every request with the response line resp
// (its id set to the request's).
func answering(t *testing.T, resp string) string {
	return fake(t, `read l; echo '{"id":0,"type":"response","success":true,"data":{"protocol":1,"version":"dev"}}'
n=1; while read l; do printf '%s\n' '{"id":'$n',"type":"response",`+resp[1:]+`'; n=$((n+1)); done`)
}

// TestDecodeUntrusted: what a far side sends is not trusted: escapes do not reach the caller, ids that are
// none are dropped, a status or exit code no agentbash gives is an error result.
func TestDecodeUntrusted(t *testing.T) {
	uri := answering(t, `{"success":true,"data":{"content":[{"type":"text","text":"\u001b]0;pwned\u0007hi\u001b[2J\n\nCommand exited with code 1"}],`+
		`"isError":true,"details":{"status":"exited","exitCode":1,"artifactId":"../../etc","artifactPath":"/etc/passwd",`+
		`"warnings":["\u001b[31mred"],"taskId":"x;rm"}},`+
		`"parts":{"output":"\u001b]0;pwned\u0007hi\u001b[2J","footer":["Command exited with code 1"]}}`)
	r := open(t, uri).Run(ctx(t), command("true"), nil)
	d := r.Details
	if r.Text() != "hi\n\nCommand exited with code 1" || r.Output != "hi" || d.ArtifactID != "" || d.ArtifactPath != "" ||
		d.TaskID != "" || !slices.Equal(d.Warnings, []string{"red"}) || r.Content[0].Text != r.Text() {
		t.Errorf("%+v %q", d, r.Text())
	}
	for _, details := range []string{`{"status":"exited","exitCode":300}`, `{"status":"exited","exitCode":-2}`, `{"status":"fine"}`} {
		uri := answering(t, `{"success":true,"data":{"content":[{"type":"text","text":"x"}],"details":`+details+`},`+
			`"parts":{"output":"x","footer":[]}}`)
		r := open(t, uri).Run(ctx(t), command("true"), nil)
		if r.Details.Status != result.StatusError || !strings.Contains(r.Text(), "cannot read") {
			t.Errorf("%s: %+v %q", details, r.Details, r.Text())
		}
	}
}

// TestUntrustedStore: an artifact's text is sanitized here too unless raw is asked; an answer at another
// offset, or empty before the end, is an error (not a loop); task rows and artifact lists are sanitized.
func TestUntrustedStore(t *testing.T) {
	for _, tt := range []struct {
		resp string
		raw  bool
		want string // the text printed, or the error
	}{
		{`{"success":true,"data":{"offset":0,"data":"\u001b[31mred\u001b]0;t\u0007\n","eof":true}}`, false, "red\n"},
		{`{"success":true,"data":{"offset":0,"data":"\u001b[31mred","eof":true}}`, true, "\x1b[31mred"},
		{`{"success":true,"data":{"offset":7,"data":"x","eof":false}}`, false, "at offset 7 for offset 0"},
		{`{"success":true,"data":{"offset":0,"data":"","eof":false}}`, false, "with nothing at offset 0, before its end"},
	} {
		var b strings.Builder
		err := open(t, answering(t, tt.resp)).Artifacts().Print(ctx(t), &b, "1", tt.raw)
		if got := b.String(); (err == nil && got != tt.want) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s raw %v: %q %v, want %q", tt.resp, tt.raw, got, err, tt.want)
		}
	}
	e := open(t, answering(t, `{"success":true,"data":[{"taskId":"1","status":"running","pid":3,`+
		`"command":"echo \u001b]52;c;aGk=\u0007x","cwd":"/a\nb","startedAt":"t\u001b[2J"}]}`))
	rows, err := e.Tasks().List(ctx(t), false)
	if err != nil || len(rows) != 1 || rows[0].Command != "echo x" || rows[0].Cwd != "/a b" || rows[0].StartedAt != "t" {
		t.Errorf("rows %+v %v", rows, err)
	}
}
