package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/executor"
	lcl "github.com/agentbash/agentbash/pkg/local"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/service"
	// The test binary is what agentbash re-executes itself as (a run's supervisor, the snapshot
	// helper): the runs a test starts re-execute it, and pkg/reexec's init runs them.
	_ "github.com/agentbash/agentbash/pkg/reexec"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/supervisor"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// msg is one line the server wrote, decoded loosely.
type msg struct {
	ID      json.RawMessage `json:"id"`
	Type    string          `json:"type"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Error   string          `json:"error"`
	Data    json.RawMessage `json:"data"`
	TaskID  string          `json:"taskId"`
	Text    string          `json:"text"`
	Total   int64           `json:"totalBytes"`
	Lines   int64           `json:"totalLines"`
	Parts   *Parts          `json:"parts"`
}

// result is the part of a result the tests look at.
type resultData struct {
	Content []struct{ Text string } `json:"content"`
	IsError bool                    `json:"isError"`
	Details struct {
		Status   string `json:"status"`
		ExitCode *int   `json:"exitCode"`
		TaskID   string `json:"taskId"`
	} `json:"details"`
}

func (m msg) result(t *testing.T) resultData {
	t.Helper()
	var r resultData
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatalf("data of %s: %v", m.ID, err)
	}
	return r
}

func (r resultData) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// served is a Server serving over in-memory pipes: send writes request lines, next reads what it wrote.
type served struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan msg
	served chan error
	dir    string
}

// guard bounds how long a test waits for a message: a hang is a failure, not a timing assertion.
const guard = 30 * time.Second

func serve(t *testing.T) *served {
	t.Helper()
	return serveWith(t, nil)
}

// serveWith is serve with the server edited first.
func serveWith(t *testing.T, edit func(s *Server, dir string)) *served {
	t.Helper()
	dir := t.TempDir()
	local := &supervisor.Pool{Spares: 1}
	t.Cleanup(func() { local.Close() })
	exe := lcl.New(lcl.Config{ArtifactDir: filepath.Join(dir, "artifacts"), SessionDir: filepath.Join(dir, "sessions"),
		TaskDir: filepath.Join(dir, "tasks"), KillLimit: 10 * time.Second, Supervisors: local})
	s := &Server{Service: service.New(service.Config{Timeout: 60, KillGrace: 1}, exe)}
	if edit != nil {
		edit(s, dir)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &served{t: t, in: inW, lines: make(chan msg, 1000), served: make(chan error, 1), dir: dir}
	go func() {
		ss.served <- s.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m msg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("not one JSON object per line: %q: %v", sc.Text(), err)
				continue
			}
			ss.lines <- m
		}
		close(ss.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		<-ss.served
	})
	return ss
}

func (s *served) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Fatalf("send: %v", err)
		}
	}
}

// next returns the next message.
func (s *served) next() msg {
	s.t.Helper()
	select {
	case m, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the server's output ended")
		}
		return m
	case <-time.After(guard):
		s.t.Fatal("no message from the server")
	}
	return msg{}
}

// until returns the messages up to and including the first for which stop holds.
func (s *served) until(stop func(msg) bool) []msg {
	s.t.Helper()
	var got []msg
	for {
		m := s.next()
		got = append(got, m)
		if stop(m) {
			return got
		}
	}
}

// response returns the response to id, skipping other messages (kept in skipped).
func (s *served) response(id string) (msg, []msg) {
	s.t.Helper()
	got := s.until(func(m msg) bool { return m.Type == TypeResponse && string(m.ID) == id })
	return got[len(got)-1], got[:len(got)-1]
}

func TestBashEchoesIDs(t *testing.T) {
	s := serve(t)
	s.send(`{"id":1,"type":"bash","command":"echo hi"}`, `{"id":"x","type":"bash","command":"echo x; exit 3"}`,
		`{"id":{"b":[1, 2.0],"a":null},"type":"bash","command":"true"}`)
	got := map[string]msg{}
	for range 3 {
		m := s.next()
		got[string(m.ID)] = m
	}
	for id, want := range map[string]string{`1`: "hi", `"x"`: "x\n\nCommand exited with code 3",
		`{"a":null,"b":[1,2.0]}`: "(no output)"} {
		m := got[id]
		if !m.Success || m.Command != TypeBash || m.result(t).text() != want {
			t.Errorf("response %s: %+v, text %q, want %q", id, m, m.result(t).text(), want)
		}
	}
}

func TestErrorResponsesAndTheLoopGoesOn(t *testing.T) {
	s := serve(t)
	cases := []struct {
		line, id, want string
	}{
		{`{not json`, `null`, "bad JSON"},
		{`[1,2]`, `null`, "want a JSON object"},
		{`{"id":5,"type":"frobnicate"}`, `5`, `unknown request type "frobnicate"`},
		{`{"id":6}`, `6`, "type: required"},
		{`{"id":7,"type":"bash","command":"echo","Command":"x"}`, `7`, `unknown field "Command"`},
		{`{"id":8,"type":"bash","command":"echo x","timeout":"soon"}`, `8`, "timeout: want a number of seconds"},
		{`{"id":9,"type":"bash","command":42}`, `9`, "command: want a string"},
		{`{"id":10,"type":"bash","command":"echo","session":"../x"}`, `10`, "session"},
		{`{"id":11,"type":"bash"}`, `11`, "command: required"},
		{`{"id":12,"type":"output","taskId":"007"}`, `12`, "leading zeros"},
		{`{"id":13,"type":"bash","command":"echo","head":-1}`, `13`, "head: want a line count"},
		{`{"id":14,"type":"kill","taskId":"1","signal":"NOPE"}`, `14`, "unknown signal"},
	}
	for _, c := range cases {
		s.send(c.line, "", "   ") // empty and blank lines are ignored
		m := s.next()
		if m.Type != TypeResponse || m.Success || string(m.ID) != c.id || !strings.Contains(m.Error, c.want) {
			t.Errorf("%s: got %+v, want an error with id %s naming %q", c.line, m, c.id, c.want)
		}
	}
	// A line over MaxLine is read to its end, answered, and not run.
	long := `{"id":"big","type":"bash","command":"echo ` + strings.Repeat("x", MaxLine) + `"}`
	s.send(long, `{"id":"after","type":"bash","command":"echo still here"}`)
	m := s.next()
	if m.Success || string(m.ID) != "null" || !strings.Contains(m.Error, "too long") {
		t.Errorf("long line: %+v", m)
	}
	m = s.next()
	if string(m.ID) != `"after"` || m.result(t).text() != "still here" {
		t.Errorf("after the long line: %+v", m)
	}
}

// TestTaskIDErrorsOneShape: a malformed task id ("07", "-1", "x/../1") is answered as an unknown one is,
// for every task request: success false, the error, and as data the error result the CLI prints, which
// leaves out the command, cwd and shell it does not know.
func TestTaskIDErrorsOneShape(t *testing.T) {
	s := serve(t)
	for i, c := range []struct{ typ, id, want string }{
		{"output", "999", "task 999: no such task"},
		{"output", "07", `task "07": malformed task id: leading zeros (write it as 7)`},
		{"wait", "-1", `task "-1": malformed task id`},
		{"kill", "x/../1", `task "x/../1": malformed task id`},
		{"kill", "999", "task 999: no such task"},
	} {
		s.send(fmt.Sprintf(`{"id":%d,"type":%q,"taskId":%q}`, i, c.typ, c.id))
		m := s.next()
		if m.Success || m.Command != c.typ || !strings.HasPrefix(m.Error, c.want) {
			t.Errorf("%s %q: %+v, want an error %q", c.typ, c.id, m, c.want)
			continue
		}
		r := m.result(t)
		if r.Details.Status != result.StatusError || !r.IsError || r.text() != m.Error {
			t.Errorf("%s %q: data %s, want the error result of %q", c.typ, c.id, m.Data, m.Error)
		}
		var d struct{ Details map[string]any }
		json.Unmarshal(m.Data, &d)
		for _, k := range []string{"command", "cwd", "shell"} {
			if v, ok := d.Details[k]; ok {
				t.Errorf("%s %q: details.%s = %q, want it left out", c.typ, c.id, k, v)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, "tasks", "x")); err == nil {
		t.Error("a malformed id reached the file system")
	}
}

func TestRequestsRunConcurrently(t *testing.T) {
	s := serve(t)
	flag := filepath.Join(s.dir, "flag")
	// The first ends only once the second ran: served one after the other, they never would.
	s.send(fmt.Sprintf(`{"id":"a","type":"bash","command":"until [ -e %s ]; do sleep 0.01; done; echo a"}`, flag),
		fmt.Sprintf(`{"id":"b","type":"bash","command":"touch %s; echo b"}`, flag))
	texts := map[string]string{}
	for range 2 {
		m := s.next()
		texts[string(m.ID)] = m.result(t).text()
	}
	if texts[`"a"`] != "a" || texts[`"b"`] != "b" {
		t.Errorf("got %v", texts)
	}
}

func TestSessionRequestsRunInArrivalOrder(t *testing.T) {
	s := serve(t)
	// Without a queue per session the second would answer first.
	s.send(`{"id":1,"type":"bash","command":"sleep 0.3; echo first","session":"s1"}`,
		`{"id":2,"type":"bash","command":"echo second","session":"s1"}`,
		`{"id":3,"type":"bash","command":"echo other","session":"s2"}`)
	var order []string
	for range 3 {
		m := s.next()
		order = append(order, string(m.ID)+":"+m.result(t).text())
	}
	first, second := -1, -1
	for i, o := range order {
		switch o {
		case "1:first":
			first = i
		case "2:second":
			second = i
		}
	}
	if first < 0 || second < 0 || first > second {
		t.Errorf("order %v: want 1 before 2", order)
	}
}

func TestAbortRunningAndQueued(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"run","type":"bash","command":"echo started; sleep 30","session":"q","stream":true}`,
		`{"id":"queued","type":"bash","command":"touch never","session":"q"}`)
	s.until(func(m msg) bool { return m.Type == TypeUpdate && strings.Contains(m.Text, "started") })
	s.send(`{"id":"ab","type":"abort_bash","target":"queued"}`)
	got := s.until(func(m msg) bool { return string(m.ID) == `"queued"` && m.Type == TypeResponse })
	ab := got[0]
	if string(ab.ID) != `"ab"` || ab.Command != TypeAbort || string(ab.Data) != `{"aborted":["queued"]}` {
		t.Errorf("abort response %+v, then %d more", ab, len(got)-1)
	}
	if r := got[len(got)-1].result(t); r.Details.Status != "cancelled" || r.text() != "[Command cancelled]\n(no output)" {
		t.Errorf("queued: %+v", r)
	}
	// The running one is untouched; an abort without a target takes it.
	s.send(`{"id":"all","type":"abort_bash"}`)
	got = s.until(func(m msg) bool { return string(m.ID) == `"run"` && m.Type == TypeResponse })
	var ab2 msg
	for _, m := range got {
		if string(m.ID) == `"all"` {
			ab2 = m
		}
	}
	if string(ab2.Data) != `{"aborted":["run"]}` {
		t.Errorf("abort all: %+v", ab2)
	}
	if r := got[len(got)-1].result(t); r.Details.Status != "cancelled" || !strings.HasPrefix(r.text(), "[Command cancelled]") {
		t.Errorf("run: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "never")); err == nil {
		t.Error("the queued request ran")
	}
	s.send(`{"id":"none","type":"abort_bash","target":"run"}`)
	if m := s.next(); string(m.Data) != `{"aborted":[]}` {
		t.Errorf("abort of nothing: %+v", m)
	}
}

func TestAbortTargetIsJSONEqual(t *testing.T) {
	s := serve(t)
	s.send(`{"id":2,"type":"bash","command":"echo go; sleep 30","stream":true}`,
		`{"id":"2","type":"bash","command":"sleep 0.5; echo string id"}`)
	s.until(func(m msg) bool { return m.Type == TypeUpdate })
	s.send(`{"id":"ab","type":"abort_bash","target":2.0}`, `{"id":"ab2","type":"abort_bash","target":2}`)
	if m, _ := s.response(`"ab"`); string(m.Data) != `{"aborted":[]}` {
		t.Errorf("2.0 is not 2: %+v", m)
	}
	if m, _ := s.response(`"ab2"`); string(m.Data) != `{"aborted":[2]}` {
		t.Errorf("target 2: %+v", m)
	}
	m, _ := s.response(`2`)
	if m.result(t).Details.Status != "cancelled" {
		t.Errorf("2: %+v", m.result(t))
	}
	m, _ = s.response(`"2"`)
	if r := m.result(t); r.Details.Status != "exited" || r.text() != "string id" {
		t.Errorf(`"2": %+v`, r)
	}
}

func TestEOFCancelsAndAnswers(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"e","type":"bash","command":"echo up; sleep 30","stream":true}`)
	s.until(func(m msg) bool { return m.Type == TypeUpdate })
	s.in.Close()
	m, _ := s.response(`"e"`)
	if r := m.result(t); r.Details.Status != "cancelled" {
		t.Errorf("at EOF: %+v", r)
	}
	select {
	case err := <-s.served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		s.served <- err // for the cleanup
	case <-time.After(guard):
		t.Fatal("Serve did not return at EOF")
	}
}

func TestStreamUpdates(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"st","type":"bash","command":"for i in 1 2 3; do echo line$i; sleep 0.25; done","stream":true}`)
	m, before := s.response(`"st"`)
	if m.result(t).text() != "line1\nline2\nline3" {
		t.Errorf("result %q", m.result(t).text())
	}
	if len(before) == 0 {
		t.Fatal("no update")
	}
	var last msg
	for _, u := range before {
		if u.Type != TypeUpdate || string(u.ID) != `"st"` {
			t.Errorf("not an update of st: %+v", u)
		}
		if u.Total < last.Total || u.Text == last.Text {
			t.Errorf("update %+v after %+v: not new", u, last)
		}
		if !strings.HasPrefix("line1\nline2\nline3\n", u.Text) || u.Total != int64(len(u.Text)) || u.Lines != int64(strings.Count(u.Text, "\n")) {
			t.Errorf("update %+v", u)
		}
		last = u
	}
	// Nothing comes after the response.
	s.send(`{"id":"z","type":"bash","command":"true"}`)
	if m := s.next(); string(m.ID) != `"z"` {
		t.Errorf("after the response: %+v", m)
	}
}

func TestStreamTailIsBounded(t *testing.T) {
	st := &streamer{l: &loop{out: io.Discard, broken: make(chan struct{})}, max: 10}
	var mu sync.Mutex
	var sent []Update
	st.l.out = writerFunc(func(p []byte) (int, error) {
		var u Update
		_ = json.Unmarshal(p, &u)
		mu.Lock()
		sent = append(sent, u)
		mu.Unlock()
		return len(p), nil
	})
	st.l.s = &Server{}
	st.observe(run.LiveText{Text: "héllo wörld, and more\nnext", TotalBytes: int64(len("héllo wörld, and more\nnext")), TotalLines: 2})
	st.stop()
	if len(sent) != 1 || len(sent[0].Text) > 10 || !strings.HasSuffix("héllo wörld, and more\nnext", sent[0].Text) ||
		sent[0].TotalBytes != int64(len("héllo wörld, and more\nnext")) || sent[0].TotalLines != 2 {
		t.Errorf("sent %+v", sent)
	}
	st.observe(run.LiveText{Text: "more"})
	if len(sent) != 1 {
		t.Errorf("an update after stop: %+v", sent)
	}
}

// An update shows the sanitized tail: a progress bar redrawn by CRs as its last state, with the sink's counts
// at its end; after a gap in the relay (Skipped) the tail starts again, with no marker.
func TestStreamCollapsesCR(t *testing.T) {
	var sent []Update
	st := &streamer{l: &loop{broken: make(chan struct{})}, max: 100}
	st.l.out = writerFunc(func(p []byte) (int, error) {
		var u Update
		_ = json.Unmarshal(p, &u)
		sent = append(sent, u)
		return len(p), nil
	})
	st.l.s = &Server{}
	st.observe(run.LiveText{Text: "red\n20%\r40%\r100%\nend\n", TotalBytes: 13, TotalLines: 3})
	if len(sent) != 1 || sent[0].Text != "red\n100%\nend\n" || sent[0].TotalBytes != 13 || sent[0].TotalLines != 3 {
		t.Errorf("sent %+v", sent)
	}
	st.last = time.Time{} // the next update is due at once
	st.observe(run.LiveText{Text: "later\n", TotalBytes: 1013, TotalLines: 300, Skipped: 994})
	st.stop()
	if len(sent) != 2 || sent[1].Text != "later\n" || sent[1].TotalBytes != 1013 || sent[1].TotalLines != 300 {
		t.Errorf("sent %+v", sent)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestTaskRequests(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"t","type":"start","command":"echo bg; exit 4"}`)
	m := s.next()
	r := m.result(t)
	if !m.Success || m.Command != TypeStart || r.Details.Status != "running" || r.Details.TaskID == "" {
		t.Fatalf("start: %+v %+v", m, r)
	}
	id := r.Details.TaskID
	done := s.next()
	if done.Type != TypeTaskDone || done.TaskID != id || *done.result(t).Details.ExitCode != 4 {
		t.Errorf("task_done: %+v", done)
	}
	s.send(fmt.Sprintf(`{"id":"o","type":"output","taskId":%q,"wait":5}`, id))
	if m := s.next(); m.Command != TypeOutput || !strings.HasPrefix(m.result(t).text(), "bg") {
		t.Errorf("output: %+v %q", m, m.result(t).text())
	}
	s.send(fmt.Sprintf(`{"id":"w","type":"wait","taskId":%q}`, id))
	if m := s.next(); m.Command != TypeWait || *m.result(t).Details.ExitCode != 4 {
		t.Errorf("wait: %+v", m)
	}
	s.send(`{"id":"l","type":"tasks","all":true}`)
	m = s.next()
	var rows []tasks.Row
	if err := json.Unmarshal(m.Data, &rows); err != nil || len(rows) != 1 || rows[0].TaskID != id {
		t.Errorf("tasks: %+v (%v)", m, err)
	}
	s.send(fmt.Sprintf(`{"id":"k","type":"kill","taskId":%q,"signal":"INT"}`, id))
	if m := s.next(); m.Command != TypeKill || !strings.Contains(string(m.Data), `"killed":false`) {
		t.Errorf("kill of an ended task: %+v", m)
	}
	s.send(`{"id":"u","type":"wait","taskId":"999"}`)
	if m := s.next(); m.Success || !strings.Contains(m.Error, "no such task") {
		t.Errorf("unknown task: %+v", m)
	}
	// A background bash request is a start; a yield that passes hands the command over as a task.
	s.send(`{"id":"y","type":"bash","command":"echo soon; sleep 1; echo later","yield":0.3}`)
	m = s.next()
	r = m.result(t)
	if r.Details.Status != "running" || r.Details.TaskID == "" || !strings.HasPrefix(r.text(), "soon") {
		t.Fatalf("yield: %+v", r)
	}
	if done := s.next(); done.Type != TypeTaskDone || done.TaskID != r.Details.TaskID {
		t.Errorf("task_done of the yielded run: %+v", done)
	}
}

// A task's task_done comes when it ends, whatever tasks started before it still run: the watcher looks at
// each task once a tick and waits on none (it once waited on the first, a dev server, and held back every
// other task's end behind it).
func TestTaskDoneNotHeldBehindLongerTask(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"long","type":"start","command":"exec sleep 30"}`)
	long := s.next().result(t).Details.TaskID
	s.send(`{"id":"short","type":"start","command":"exit 3"}`)
	short := s.next().result(t).Details.TaskID
	start := time.Now()
	done := s.next()
	if done.Type != TypeTaskDone || done.TaskID != short || *done.result(t).Details.ExitCode != 3 {
		t.Fatalf("first event %+v, want task_done of %s (exit 3) while %s runs", done, short, long)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("task_done of %s came after %v", short, d)
	}
	s.send(fmt.Sprintf(`{"id":"k","type":"kill","taskId":%q}`, long))
	for {
		if m := s.next(); m.Type == TypeTaskDone && m.TaskID == long {
			break
		}
	}
}

// TestTargets: a request's target picks the service of that place (here a second local place with its own
// directories and PLACE=second in its shell environment, opened as the allowed target ssh://second): its
// command runs there, its task is watched and reached there, and only there; a target the server does not
// allow is an error response naming it, cmd:// even when listed; abort_bash's target stays a request id.
func TestTargets(t *testing.T) {
	s := serveWith(t, func(s *Server, dir string) {
		places := service.NewPlaces(s.Service, "", []string{"ssh://second", "cmd://sh"}, func(string) (executor.Executor, error) {
			d := filepath.Join(dir, "second")
			return lcl.New(lcl.Config{ArtifactDir: filepath.Join(d, "artifacts"), SessionDir: filepath.Join(d, "sessions"),
				TaskDir: filepath.Join(d, "tasks"), KillLimit: 10 * time.Second, ShellEnv: []string{"PLACE=second"}}), nil
		})
		t.Cleanup(func() { _ = places.Close() })
		s.For = places.For
	})
	for _, tc := range []struct{ line, want string }{
		{`{"id":1,"type":"bash","command":"echo ${PLACE:-own}","target":"ssh://second"}`, "second"},
		{`{"id":2,"type":"bash","command":"echo ${PLACE:-own}","target":"local"}`, "own"},
		{`{"id":3,"type":"bash","command":"echo ${PLACE:-own}"}`, "own"},
	} {
		s.send(tc.line)
		if m := s.next(); !m.Success || m.result(t).text() != tc.want {
			t.Errorf("%s: %+v %q", tc.line, m, m.result(t).text())
		}
	}
	for _, tc := range []struct{ line, want string }{
		{`{"id":4,"type":"bash","command":"echo hi","target":"ssh://other"}`, `target "ssh://other": not allowed`},
		{`{"id":5,"type":"tasks","target":"docker://x"}`, `target "docker://x": not allowed`},
		{`{"id":6,"type":"session_list","target":"ssh://second.example"}`, `in targets.allowed of the config file`},
		{`{"id":7,"type":"start","command":"echo hi","target":"cmd://sh"}`, `target "cmd://sh": a request never names a cmd:// target`},
		{`{"id":8,"type":"output","taskId":"1","target":7}`, `target: want a target URI`},
	} {
		s.send(tc.line)
		if m := s.next(); m.Success || !strings.Contains(m.Error, tc.want) {
			t.Errorf("%s: %+v", tc.line, m)
		}
	}

	// abort_bash's target is the id of a request, even one that reads as a URI.
	s.send(`{"id":"ssh://second","type":"bash","command":"sleep 30"}`, `{"id":"a","type":"abort_bash","target":"ssh://second"}`)
	m, _ := s.response(`"a"`)
	if string(m.Data) != `{"aborted":["ssh://second"]}` {
		t.Errorf("abort: %+v", m)
	}
	if m, _ := s.response(`"ssh://second"`); m.result(t).Details.Status != "cancelled" {
		t.Errorf("the aborted request: %s", m.Data)
	}

	// A task started on the target: its end is pushed (read there), and only its target finds it.
	s.send(`{"id":"t","type":"start","command":"echo $PLACE; exit 3","target":"ssh://second"}`)
	m = s.next()
	id := m.result(t).Details.TaskID
	if !m.Success || id == "" {
		t.Fatalf("start on the target: %+v", m)
	}
	if done := s.next(); done.Type != TypeTaskDone || done.TaskID != id || *done.result(t).Details.ExitCode != 3 {
		t.Errorf("task_done: %+v", done)
	}
	s.send(fmt.Sprintf(`{"id":"o","type":"output","taskId":%q,"target":"ssh://second"}`, id))
	if m := s.next(); !m.Success || !strings.HasPrefix(m.result(t).text(), "second") {
		t.Errorf("output on the target: %+v", m)
	}
	s.send(fmt.Sprintf(`{"id":"w","type":"wait","taskId":%q}`, id))
	if m := s.next(); m.Success || !strings.Contains(m.Error, "no such task") {
		t.Errorf("wait on the server's own place: %+v", m)
	}
	s.send(`{"id":"r","type":"start","command":"exec sleep 300","target":"ssh://second"}`)
	id = s.next().result(t).Details.TaskID
	s.send(fmt.Sprintf(`{"id":"k","type":"kill","taskId":%q,"target":"ssh://second"}`, id))
	if m, _ := s.response(`"k"`); !m.Success || !strings.Contains(string(m.Data), `"killed":true`) {
		t.Errorf("kill on the target: %+v", m)
	}
}

// A caller that said hello (another agentbash) gets each result's parts beside it; any other caller does not.
func TestPartsAfterHello(t *testing.T) {
	s := serve(t)
	s.send(`{"id":1,"type":"bash","command":"echo hi; exit 3"}`)
	if m, _ := s.response("1"); m.Parts != nil {
		t.Errorf("parts without a hello: %+v", m.Parts)
	}
	s.send(`{"id":2,"type":"hello","protocol":1}`, `{"id":3,"type":"bash","command":"echo hi; exit 3"}`)
	m, _ := s.response("3")
	if m.Parts == nil || m.Parts.Output != "hi" || len(m.Parts.Footer) != 1 || m.Parts.Footer[0] != "Command exited with code 3" {
		t.Errorf("parts after a hello: %+v", m.Parts)
	}
}

// inputResult is the part of an input, output or bash result the interactive tests look at.
type inputResult struct {
	resultData
	Details struct {
		Status string `json:"status"`
		TaskID string `json:"taskId"`
		Screen *struct {
			Text string `json:"text"`
		} `json:"screen"`
	} `json:"details"`
}

func (m msg) input(t *testing.T) inputResult {
	t.Helper()
	var r inputResult
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatalf("data of %s: %v", m.ID, err)
	}
	return r
}

// readUntil sends output requests (wait 1) for task id until seen holds for what was read so far, the task
// ended, or ten reads were made; it returns what was read.
func (s *served) readUntil(id string, seen func(string) bool) string {
	s.t.Helper()
	var all string
	for i := range 10 {
		s.send(fmt.Sprintf(`{"id":"read%d","type":"output","taskId":%q,"wait":1}`, i, id))
		m, _ := s.response(fmt.Sprintf(`"read%d"`, i))
		r := m.input(s.t)
		all += r.text()
		if r.Details.Screen != nil {
			all += "\n" + r.Details.Screen.Text
		}
		if seen(all) || r.Details.Status != "running" {
			break
		}
	}
	return all
}

// TestInputToAPipe: a python REPL started with a stdin pipe answers what an input request types, in the
// input's own response; a bash request with a stdin pipe and no task is refused, as the service says.
func TestInputToAPipe(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"p","type":"bash","command":"cat","stdin":"pipe"}`)
	m, _ := s.response(`"p"`)
	if r := m.result(t); r.Details.Status != result.StatusError || r.text() != texts.StdinPipeNeedsTask {
		t.Errorf("a stdin pipe on a foreground bash: %s", m.Data)
	}
	s.send(`{"id":"s","type":"start","command":"python3 -q -i","stdin":"pipe"}`)
	m, _ = s.response(`"s"`)
	id := m.result(t).Details.TaskID
	if !m.Success || id == "" {
		t.Fatalf("start: %+v", m)
	}
	if got := s.readUntil(id, func(s string) bool { return strings.Contains(s, ">>>") }); !strings.Contains(got, ">>>") {
		t.Fatalf("no prompt: %q", got)
	}
	s.send(fmt.Sprintf(`{"id":"i","type":"input","taskId":%q,"text":"print(6*7)\n","wait":5}`, id))
	m, _ = s.response(`"i"`)
	if r := m.input(t); !m.Success || m.Command != TypeInput || r.Details.Status != "running" ||
		!regexp.MustCompile(`(?m)^42$`).MatchString(r.text()) {
		t.Errorf("input: %+v %q", m, r.text())
	}
	s.send(fmt.Sprintf(`{"id":"e","type":"input","taskId":%q,"eof":true,"wait":5}`, id))
	if m, _ := s.response(`"e"`); !m.Success {
		t.Errorf("eof: %+v", m)
	}
	s.send(fmt.Sprintf(`{"id":"w","type":"wait","taskId":%q,"timeout":20}`, id))
	if m, _ := s.response(`"w"`); m.result(t).Details.Status != result.StatusExited {
		t.Errorf("after eof: %s", m.Data)
	}
	// Input to the task that ended: an error response, with the error result the CLI prints.
	s.send(fmt.Sprintf(`{"id":"x","type":"input","taskId":%q,"text":"1\n"}`, id))
	m, _ = s.response(`"x"`)
	want := fmt.Sprintf(texts.InputEnded, id, result.StatusExited)
	if r := m.result(t); m.Success || m.Error != want || !r.IsError || r.text() != want {
		t.Errorf("input to an ended task: %+v", m)
	}
}

// TestInputToATerminal: a tty bash request runs in a terminal with and without a yield; a yielded python
// REPL shows its prompt on the screen, and input "6*7\r" (Enter is CR in a terminal) shows 42.
func TestInputToATerminal(t *testing.T) {
	s := serve(t)
	s.send(`{"id":"t","type":"bash","command":"tty","tty":true}`)
	m, _ := s.response(`"t"`)
	if r := m.input(t); !strings.HasPrefix(r.text(), "/dev/pts/") || r.Details.Screen == nil {
		t.Errorf("tty without a yield: %s", m.Data)
	}
	s.send(`{"id":"y","type":"bash","command":"python3 -q","tty":true,"cols":80,"rows":24,"yield":2}`)
	m, _ = s.response(`"y"`)
	r := m.input(t)
	id := r.Details.TaskID
	if r.Details.Status != "running" || id == "" {
		t.Fatalf("yield: %s", m.Data)
	}
	t.Cleanup(func() { s.send(fmt.Sprintf(`{"id":"k","type":"kill","taskId":%q}`, id)) })
	if got := s.readUntil(id, func(s string) bool { return strings.Contains(s, ">>>") }); !strings.Contains(got+r.text(), ">>>") {
		t.Fatalf("no prompt: %q", got)
	}
	s.send(fmt.Sprintf(`{"id":"i","type":"input","taskId":%q,"text":"6*7\r","wait":5}`, id))
	m, _ = s.response(`"i"`)
	r = m.input(t)
	if !m.Success || r.Details.Screen == nil || !regexp.MustCompile(`(?m)^42\s*$`).MatchString(r.Details.Screen.Text) {
		t.Errorf("input: %s", m.Data)
	}
	s.send(fmt.Sprintf(`{"id":"c","type":"input","taskId":%q,"keys":"C-d","wait":5}`, id))
	if m, _ := s.response(`"c"`); !m.Success {
		t.Errorf("keys C-d: %+v", m)
	}
	s.send(fmt.Sprintf(`{"id":"w","type":"wait","taskId":%q,"timeout":20}`, id))
	if m, _ := s.response(`"w"`); m.result(t).Details.Status != result.StatusExited {
		t.Errorf("after C-d: %s", m.Data)
	}
}
