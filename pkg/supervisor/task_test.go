package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// startTask starts r as a task through the executor seam and lets it go, as `agentbash start` does.
func startTask(t *testing.T, j job) (tasks.Store, tasks.Record) {
	t.Helper()
	return startTaskWith(t, j, tasks.Record{})
}

// startTaskWith is startTask with the record's other fields (MaxLifetime) from rec.
func startTaskWith(t *testing.T, j job, rec tasks.Record) (tasks.Store, tasks.Record) {
	t.Helper()
	store := tasks.Store{Dir: t.TempDir()}
	rec.Command, rec.StartedAt, rec.Head, rec.Tail = string(j.Command), time.Now(), -1, -1
	id, err := store.Create(rec)
	if err != nil {
		t.Fatal(err)
	}
	j.Task, j.Output.Keep = &run.Task{Dir: run.Raw(store.Dir), ID: id}, true
	p, err := (&Pool{}).Start(context.Background(), j.Spec, j.Streams)
	if err != nil {
		t.Fatal(err)
	}
	p.(*Attached).Release() // the client goes away: a detached supervisor runs on
	rec, err = store.Load(id)
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

// A task's supervisor makes itself lean (pkg/memlimit) once its task started, and once.
func TestTaskSupervisorIsLean(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "lean")
	t.Setenv(leanMarkEnv, mark) // read by the supervisor spawned next
	// The mark is written beside the run (off the start's path): the command waits up to 5 s for it.
	wait := "for i in $(seq 100); do [ -s " + mark + " ] && break; sleep 0.05; done; sleep 0.2; wc -l < " + mark
	store, rec := startTask(t, spec(t, wait, time.Hour))
	got, err := store.Wait(rec.TaskID, 10*time.Second)
	if err != nil || got.Summary == nil || strings.TrimSpace(got.Summary.Text) != "1" {
		t.Fatalf("leans of the task's supervisor while it ran: record %+v, %v; want 1", got, err)
	}
}

// parentOf is process pid's parent, 0 when it cannot be read.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// A task whose shell ended while a process it started runs on still owns that process: the task is
// reported ended with it in leftoverPids and counted in Leftovers, its supervisor stays its parent (the
// subreaper), and a kill ends it, says how many it ended, and the supervisor exits.
func TestTaskOwnsLeftovers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leftovers are found through the subreaper (Linux)")
	}
	m := marker(t)
	defer cleanup(t, m)
	store, rec := startTask(t, spec(t, "(exec -a "+m+" sleep 300) & exit 3", time.Hour))
	got, err := store.Wait(rec.TaskID, 10*time.Second)
	if err != nil || got.Status != tasks.StatusExited || got.Outcome == nil || len(got.Outcome.LeftoverPids) != 1 ||
		got.Leftovers != 1 {
		t.Fatalf("record once the shell ended: %+v, %v", got, err)
	}
	left := alive(m)
	for i := 0; i < 100 && len(left) == 0; i++ { // the subshell may not have exec'd the marked sleep yet
		time.Sleep(20 * time.Millisecond)
		left = alive(m)
	}
	if len(left) != 1 || parentOf(left[0]) != got.SupervisorPid {
		t.Fatalf("leftover %v, want one whose parent is the supervisor %d", left, got.SupervisorPid)
	}
	killed, ok, err := store.Kill(rec.TaskID, syscall.SIGTERM, 10*time.Second)
	if err != nil || !ok || killed.LeftoverKilled != 1 || killed.Leftovers != 0 || killed.Status != tasks.StatusExited {
		t.Fatalf("kill: killed %v, %v, record %+v", ok, err, killed)
	}
	if r := tasks.KillResult(killed, ok); r.Details.LeftoverKilled != 1 || r.Details.Killed == nil || !*r.Details.Killed {
		t.Errorf("kill result details %+v", r.Details)
	}
	if left := alive(m); len(left) > 0 {
		t.Errorf("left after kill: %v", left)
	}
	if tasks.Alive(killed.SupervisorPid, killed.SupervisorStart) {
		t.Error("the supervisor runs on after its leftovers were killed")
	}
}

// A leftover that ends by itself ends its task's ownership: the supervisor exits and the count is 0; one
// that outlives tasks.maxLifetime (from the task's start) is killed, and the result says so.
func TestTaskLeftoversEndOrMeetMaxLifetime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leftovers are found through the subreaper (Linux)")
	}
	m := marker(t)
	defer cleanup(t, m)
	store, rec := startTask(t, spec(t, "sleep 0.3 & exit 0", time.Hour))
	if !waitFor(10*time.Second, func() bool {
		got, _ := store.Load(rec.TaskID)
		return !got.Running() && !tasks.Alive(got.SupervisorPid, got.SupervisorStart)
	}) {
		t.Fatal("the supervisor did not exit once its leftover ended")
	}
	if got, _ := store.Load(rec.TaskID); got.Leftovers != 0 || got.LeftoverKilled != 0 {
		t.Errorf("record after the leftover ended: %+v", got)
	}

	store, rec = startTaskWith(t, spec(t, "(exec -a "+m+" sleep 300) & exit 0", time.Hour), tasks.Record{MaxLifetime: 1})
	var got tasks.Record
	if !waitFor(10*time.Second, func() bool {
		got, _ = store.Load(rec.TaskID)
		return got.LeftoverKilled > 0
	}) {
		t.Fatalf("tasks.maxLifetime did not end the leftover: %+v", got)
	}
	if got.LeftoverKilled != 1 || got.Status != tasks.StatusExited || !slices.ContainsFunc(got.Warnings, func(w string) bool {
		return strings.HasPrefix(w, "tasks.maxLifetime (1 seconds) killed 1 process")
	}) {
		t.Errorf("record after the lifetime: %+v", got)
	}
	if left := alive(m); len(left) > 0 {
		t.Errorf("left after the lifetime: %v", left)
	}
}
