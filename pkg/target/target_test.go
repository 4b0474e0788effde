package target

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/rpc"
	"github.com/agentbash/agentbash/pkg/run"
)

// TestRunDecodes: Run sends the command with its resolved half and stream, passes the update events of
// its id to the observer, and returns the far side's result with details.target set. The far side is a
// script that checks the request's fields and answers as rpc does.
func TestRunDecodes(t *testing.T) {
	uri := fake(t, `read l; echo '{"id":0,"type":"response","command":"hello","success":true,"data":{"protocol":1,"version":"dev","os":"linux","arch":"amd64"}}'
read l
case $l in *'"resolved":{"protocol":1,"command":"echo hi"'*'"stream":true'*) ;; *) echo "bad request: $l" >&2; exit 1;; esac
cat <<'END'
{"id":1,"type":"update","text":"hi\n","totalBytes":3,"totalLines":1}
{"id":7,"type":"update","text":"other","totalBytes":5,"totalLines":1}
{"type":"task_done","taskId":"3","data":{}}
{"id":1,"type":"response","command":"bash","success":true,"data":{"content":[{"type":"text","text":"hi"}],"isError":false,"details":{"status":"exited","command":"echo hi","cwd":"/srv","shell":"/bin/bash","exitCode":0,"timedOut":false,"cancelled":false,"timeoutSeconds":30,"durationMs":4}},"parts":{"output":"hi","footer":[]}}
END
cat >/dev/null`)
	var seen []run.LiveText
	r := open(t, uri).Run(ctx(t), command("echo hi"), func(l run.LiveText) { seen = append(seen, l) })
	d := r.Details
	if d.Status != result.StatusExited || d.Target != uri || d.Cwd != "/srv" || r.Text() != "hi" || r.IsError {
		t.Errorf("result %+v, text %q", d, r.Text())
	}
	if !slices.Equal(seen, []run.LiveText{{Text: "hi\n", TotalBytes: 3, TotalLines: 1}}) {
		t.Errorf("updates %+v", seen)
	}
}

// TestTaskRequests: the task capability's requests against a real rpc, for a task started there.
func TestTaskRequests(t *testing.T) {
	e := open(t, rpcURI(t))
	c, err := e.connect(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.call(ctx(t), rpc.TypeBash, map[string]any{"command": "echo tick; sleep 60", "background": true}, nil)
	if err != nil || !resp.Success {
		t.Fatalf("start: %+v %v", resp, err)
	}
	r, err := e.decode(ctx(t), resp)
	id := r.Details.TaskID
	if err != nil || id == "" || r.Details.Target == "" {
		t.Fatalf("start: %+v %v", r.Details, err)
	}
	tk := e.Tasks()
	if r, err := tk.Output(ctx(t), id, "", 10*time.Second, 0, nil); err != nil || !strings.Contains(r.Text(), "tick") {
		t.Errorf("output: %q %v", r.Text(), err)
	}
	if rows, err := tk.List(ctx(t), false); err != nil || len(rows) != 1 || rows[0].TaskID != id {
		t.Errorf("list: %+v %v", rows, err)
	}
	if r, err := tk.Wait(ctx(t), id, 100*time.Millisecond); err != nil || r.Details.Status != result.StatusRunning {
		t.Errorf("wait: %+v %v", r.Details, err)
	}
	r, err = tk.Kill(ctx(t), id, syscall.SIGKILL)
	if err != nil || r.Details.Status != result.StatusKilled || r.KillSignal != syscall.SIGKILL {
		t.Errorf("kill: %+v signal %v, %v", r.Details, r.KillSignal, err)
	}
	r, err = tk.Output(ctx(t), "999", "", 0, 0, nil)
	if err == nil || r.Details.Status != result.StatusError || r.Details.Target == "" {
		t.Errorf("unknown task: %+v %v", r.Details, err)
	}
}

// TestTaskInput: input to an interactive task on the far side travels as rpc's input request, and its answer
// (the default reader's read, the terminal's screen) comes back; a task without input is an error there.
func TestTaskInput(t *testing.T) {
	e := open(t, rpcURI(t))
	c, err := e.connect(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	start := func(args map[string]any) string {
		t.Helper()
		resp, err := c.call(ctx(t), rpc.TypeBash, args, nil)
		if err != nil || !resp.Success {
			t.Fatalf("start: %+v %v", resp, err)
		}
		r, err := e.decode(ctx(t), resp)
		if err != nil || r.Details.TaskID == "" {
			t.Fatalf("start: %+v %v", r.Details, err)
		}
		return r.Details.TaskID
	}
	tk := e.Tasks()
	id := start(map[string]any{"command": "python3 -q", "tty": true, "yield": 2})
	r, err := tk.Input(ctx(t), id, console.Request{Text: []byte("6*7\r")}, 2*time.Second, 0)
	if err != nil || r.Details.Screen == nil || !strings.Contains(r.Details.Screen.Text, "42") || r.Details.Target == "" {
		t.Errorf("input: %q %+v %v", r.Text(), r.Details.Screen, err)
	}
	if r, err := tk.Input(ctx(t), id, console.Request{Keys: []string{"C-d"}}, time.Second, 0); err != nil {
		t.Errorf("C-d: %q %v", r.Text(), err)
	}
	if r, err := tk.Wait(ctx(t), id, 10*time.Second); err != nil || r.Details.Status != result.StatusExited {
		t.Errorf("wait: %+v %v", r.Details, err)
	}
	id = start(map[string]any{"command": "sleep 60", "background": true})
	defer tk.Kill(ctx(t), id, syscall.SIGKILL)
	if r, err := tk.Input(ctx(t), id, console.Request{Text: []byte("x\n")}, 0, 0); err == nil || !strings.Contains(r.Text(), "started without an input") {
		t.Errorf("input to a task without input: %q %v", r.Text(), err)
	}
}
