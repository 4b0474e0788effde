package supervisor

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// startTask starts r as a task through the executor seam and lets it go, as `agentbash start` does.
func startTask(t *testing.T, r run.Request) (tasks.Store, tasks.Record) {
	t.Helper()
	store := tasks.Store{Dir: t.TempDir()}
	id, err := store.Create(tasks.Record{Command: r.Command, StartedAt: time.Now(), Head: -1, Tail: -1})
	if err != nil {
		t.Fatal(err)
	}
	r.Task, r.Output.Keep = &run.Task{Dir: run.Raw(store.Dir), ID: id}, true
	p, err := (&Local{}).Start(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	p.(*Run).Release() // the client goes away: a detached supervisor runs on
	rec, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	// Running, or (a quick command) ended already: the shell may finish before this read.
	if (rec.Status != tasks.StatusRunning && rec.Outcome == nil) || rec.Pid != p.Pid() || rec.SupervisorPid <= 0 || rec.ArtifactPath == "" {
		t.Fatalf("record after start: %+v", rec)
	}
	return store, rec
}

// The seam's start, attach (through the store) and kill of a detached run.
func TestTaskOutlivesClientAndIsKilled(t *testing.T) {
	m := marker(t)
	store, rec := startTask(t, spec(t, "echo up; exec -a "+m+" sleep 300", time.Hour))
	defer cleanup(t, m)
	if !waitFor(5*time.Second, func() bool { return len(alive(m)) > 0 }) {
		t.Fatal("the task did not run on after its client let it go")
	}
	rd, err := store.ReadOutput(rec.TaskID, tasks.DefaultReader, 1000, 5*time.Second)
	if err != nil || rd.Text != "up\n" {
		t.Fatalf("read %q, %v", rd.Text, err)
	}
	got, killed, err := store.Kill(rec.TaskID, syscall.SIGTERM, 10*time.Second)
	if err != nil || !killed || got.Status != tasks.StatusKilled || got.EndedAt == nil || got.Outcome == nil {
		t.Fatalf("kill: killed %v, %v, record %+v", killed, err, got)
	}
	if left := alive(m); len(left) > 0 {
		t.Errorf("left after kill: %v", left)
	}
	if _, killed, _ := store.Kill(rec.TaskID, syscall.SIGTERM, time.Second); killed {
		t.Error("a second kill says it killed")
	}
}

// Completion is recorded by the supervisor, with nobody watching.
func TestTaskRecordsCompletion(t *testing.T) {
	store, rec := startTask(t, spec(t, "echo out; exit 4", time.Hour))
	got, err := store.Wait(rec.TaskID, 10*time.Second)
	if err != nil || got.Status != tasks.StatusExited || got.Outcome == nil || got.Outcome.ExitCode != 4 ||
		got.Summary == nil || got.Summary.Text != "out\n" {
		t.Fatalf("record %+v, %v", got, err)
	}
	if r := tasks.Result(got, false); r.Details.Status != result.StatusExited || r.Details.ExitCode == nil ||
		*r.Details.ExitCode != 4 || r.Details.TaskID != rec.TaskID {
		t.Errorf("result details %+v", r.Details)
	}
}
