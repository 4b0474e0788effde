package tasks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/texts"
)

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"1": true, "0042": false, "04": false, "": false, "../x": false, "1a": false,
		"-1": false, "1.json": false, "+1": false, "18446744073709551615": true, "18446744073709551616": false,
		"99999999999999999999999999": false} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestValidReader(t *testing.T) {
	for name, want := range map[string]bool{"default": true, "a": true, "A.b_c-9": true, "": false, ".": false,
		"..": false, "a/b": false, "-a": false, ".a": false, strings.Repeat("x", 64): true, strings.Repeat("x", 65): false} {
		if got := ValidReader(name); got != want {
			t.Errorf("ValidReader(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCreateUniqueAcrossGoroutinesAndModes(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "tasks")}
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := s.Create(Record{Command: "true"})
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s given twice", id)
		}
		seen[id] = true
	}
	fi, err := os.Stat(s.Dir)
	if err != nil || fi.Mode().Perm() != DirMode {
		t.Errorf("dir mode %v (%v), want %v", fi.Mode().Perm(), err, DirMode)
	}
	fi, err = os.Stat(s.recordPath(ids[0]))
	if err != nil || fi.Mode().Perm() != FileMode {
		t.Errorf("record mode %v (%v), want %v", fi.Mode().Perm(), err, FileMode)
	}
}

// Ids are never given twice, also once every record was pruned or removed: a stale id names nothing.
func TestIDsNeverReused(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	old := time.Now().Add(-time.Hour)
	for range 3 {
		id, err := s.Create(Record{})
		if err != nil {
			t.Fatal(err)
		}
		s.Save(Record{TaskID: id, Status: StatusExited, StartedAt: old, EndedAt: &old})
	}
	if removed, err := s.Prune(0, time.Now()); err != nil || len(removed) != 3 {
		t.Fatalf("pruned %v (%v)", removed, err)
	}
	if id, err := s.Create(Record{}); err != nil || id != "4" {
		t.Errorf("after pruning tasks 1-3 the next id is %q (%v), want 4", id, err)
	}
	if _, err := s.Load("3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a pruned id reads %v, want ErrNotFound", err)
	}
	// Concurrent starts whose records are removed at once: every id is new.
	const n = 40
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id, err := s.Create(Record{})
			if err != nil {
				t.Error(err)
			}
			s.Remove(id)
			ids[i] = id
		})
	}
	wg.Wait()
	seen := map[string]bool{"1": true, "2": true, "3": true, "4": true}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("id %s given twice", id)
		}
		seen[id] = true
	}
}

func TestLoadErrors(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for id, want := range map[string]error{"999": ErrNotFound, "../x": ErrMalformedID, "": ErrMalformedID} {
		if _, err := s.Load(id); !errors.Is(err, want) {
			t.Errorf("Load(%q) = %v, want %v", id, err, want)
		}
	}
}

// A record that says running while its supervisor is gone reads as error with the reason.
func TestLostSupervisor(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	start, _ := StartTime(os.Getpid())
	cases := []struct {
		name      string
		pid       int
		start     uint64
		wantError bool
	}{
		{"alive", os.Getpid(), start, false},
		{"pid reused", os.Getpid(), start + 1, true},
		{"gone", 1 << 22, 0, true},
	}
	for _, c := range cases {
		id, err := s.Create(Record{Command: c.name})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(Record{TaskID: id, Status: StatusRunning, SupervisorPid: c.pid, SupervisorStart: c.start,
			StartedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		rec, err := s.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Status == StatusError && rec.Error != ""; got != c.wantError {
			t.Errorf("%s: status %s, error %q", c.name, rec.Status, rec.Error)
		}
	}
}

// writeTask makes a running task whose supervisor is this process, with an artifact holding data.
func writeTask(t *testing.T, s Store, data string) (Record, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "1.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.WriteString(data)
	id, err := s.Create(Record{})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := StartTime(os.Getpid())
	rec := Record{TaskID: id, Status: StatusRunning, SupervisorPid: os.Getpid(), SupervisorStart: start,
		StartedAt: time.Now(), ArtifactID: "1", ArtifactPath: path}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec, f
}

func TestReadOutputIncremental(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	rec, f := writeTask(t, s, "one\ntwo\npart")
	steps := []struct {
		write, want string
	}{
		{"", "one\ntwo\npart"}, // a line still being written is shown: nothing is cut inside it
		{"", ""},               // nothing new
		{"ial\nthree\n", "ial\nthree\n"},
		{"\x1b[31", ""},            // an escape sequence not yet ended waits
		{"mred\x1b[0m\n", "red\n"}, // and is removed once whole
		{"caf\xc3", "caf"},         // a character cut at the end waits
		{"\xa9\n", "\u00e9\n"},
		{"\x1b[\n", "[\n"}, // a sequence cut by a control is text again (its ESC dropped): nothing waits
	}
	for i, st := range steps {
		f.WriteString(st.write)
		rd, err := s.ReadOutput(rec.TaskID, DefaultReader, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Text != st.want || rd.Lossy {
			t.Errorf("step %d: read %q (lossy %v), want %q", i, rd.Text, rd.Lossy, st.want)
		}
	}
	// Another reader gets the whole stream.
	rd, _ := s.ReadOutput(rec.TaskID, "other", 1000, 0)
	if want := "one\ntwo\npartial\nthree\nred\ncafé\n[\n"; rd.Text != want {
		t.Errorf("other reader: %q, want %q", rd.Text, want)
	}
	if _, err := s.ReadOutput(rec.TaskID, "../x", 1000, 0); !errors.Is(err, ErrBadReader) {
		t.Errorf("bad reader: %v", err)
	}
}

// A read whose delivery failed (a closed stdout) leaves the reader where it was: the next read gives the
// same text again, and then moves on.
func TestReadOutputToFailedDelivery(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	rec, f := writeTask(t, s, "one\n")
	broken := errors.New("broken pipe")
	rd, err := s.ReadOutputTo(rec.TaskID, DefaultReader, 1000, 0, func(Read) error { return broken })
	if !errors.Is(err, broken) || rd.Text != "one\n" {
		t.Fatalf("failed delivery: %q, %v", rd.Text, err)
	}
	f.WriteString("two\n")
	var got []string
	for range 2 {
		rd, err := s.ReadOutputTo(rec.TaskID, DefaultReader, 1000, 0, func(Read) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rd.Text)
	}
	if got[0] != "one\ntwo\n" || got[1] != "" {
		t.Fatalf("reads after the failed one: %q, want the whole text once", got)
	}
}

func TestReadOutputLossy(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	var b strings.Builder
	for i := range 1000 {
		b.WriteString(strings.Repeat("x", 9) + string(rune('a'+i%26)) + "\n") // 11 bytes a line
	}
	rec, _ := writeTask(t, s, b.String())
	rd, err := s.ReadOutput(rec.TaskID, DefaultReader, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rd.Lossy || len(rd.Text) > 100 || rd.Skipped+int64(len(rd.Text)) != 11000 || !strings.HasSuffix(rd.Text, "\n") ||
		len(rd.Text)%11 != 0 {
		t.Errorf("lossy read: lossy %v, skipped %d, text %q", rd.Lossy, rd.Skipped, rd.Text)
	}
	r := ReadResult(rd)
	if !strings.Contains(r.Text(), "artifact://1") || !r.Details.Lossy || r.Details.SkippedBytes != rd.Skipped {
		t.Errorf("lossy result: %q %+v", r.Text(), r.Details)
	}
	if rd, _ := s.ReadOutput(rec.TaskID, DefaultReader, 100, 0); rd.Text != "" || rd.Lossy {
		t.Errorf("second read: %+v", rd)
	}
	if got := ReadResult(Read{Record: rec}).Text(); got != texts.NoNewOutput {
		t.Errorf("empty read text %q, want %q", got, texts.NoNewOutput)
	}
}

func TestPruneKeepsRunning(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	old := time.Now().Add(-48 * time.Hour)
	running, _ := writeTask(t, s, "")
	doneID, _ := s.Create(Record{})
	s.Save(Record{TaskID: doneID, Status: StatusExited, StartedAt: old, EndedAt: &old})
	freshID, _ := s.Create(Record{})
	now := time.Now()
	s.Save(Record{TaskID: freshID, Status: StatusExited, StartedAt: now, EndedAt: &now})
	removed, err := s.Prune(24*time.Hour, time.Now())
	if err != nil || len(removed) != 1 || removed[0] != doneID {
		t.Errorf("pruned %v (%v), want [%s]", removed, err, doneID)
	}
	for _, id := range []string{running.TaskID, freshID} {
		if _, err := s.Load(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// A starting record whose starter is gone (and no supervisor reported) is an error at once, not for a
// minute "starting"; Create never leaves an empty record.
func TestStartingWithStarterGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	gone := cmd.Process.Pid
	for _, tc := range []struct {
		name    string
		starter int
		status  string
	}{
		{"starter alive", os.Getpid(), StatusStarting},
		{"starter gone", gone, StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			id, err := s.Create(Record{StartedAt: time.Now(), StarterPid: tc.starter})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(s.Dir, id+".json")); len(b) == 0 {
				t.Fatal("Create left an empty record")
			}
			rec, err := s.Load(id)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != tc.status {
				t.Errorf("status %q, want %q (%s)", rec.Status, tc.status, rec.Error)
			}
			if rs := KillResult(rec, false).Output; tc.status == StatusError && strings.Contains(rs, "running") {
				t.Errorf("kill text %q says running", rs)
			}
		})
	}
}

// Readers that share a name take turns: together they deliver the stream once, nothing repeated.
func TestReadOutputSameReaderConcurrent(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	var want strings.Builder
	for i := range 2000 {
		want.WriteString(strings.Repeat("y", i%30) + "\n")
	}
	rec, _ := writeTask(t, s, want.String())
	var mu sync.Mutex
	var got int
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				rd, err := s.ReadOutput(rec.TaskID, DefaultReader, 64<<10, 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got += len(rd.Text)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != want.Len() {
		t.Errorf("the readers got %d bytes together, want the stream's %d once", got, want.Len())
	}
}

// A task whose supervisor died has no result, but wait still shows the output it left.
func TestFinalResultOfLostTaskHasOutput(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true:", err)
	}
	for _, tc := range []struct {
		name, out, want string
		maxBytes        int
		lossy           bool
	}{
		{"all of it", "compiled 3 files\nstill going", "compiled 3 files\nstill going\n\n", 1000, false},
		{"the newest part", strings.Repeat("a", 50) + "newest", "newest\n\n", 6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			rec, _ := writeTask(t, s, tc.out)
			rec.SupervisorPid, rec.SupervisorStart, rec.MaxBytes = cmd.Process.Pid, 0, tc.maxBytes
			if err := s.Save(rec); err != nil {
				t.Fatal(err)
			}
			rec, err := s.Load(rec.TaskID)
			if err != nil || rec.Status != StatusError {
				t.Fatalf("load: %v %q", err, rec.Status)
			}
			r := s.FinalResult(rec)
			if !strings.HasPrefix(r.Output, tc.want) || !strings.Contains(r.Output, "supervisor") {
				t.Errorf("output %q, want it to start with %q and give the reason", r.Output, tc.want)
			}
			if r.Details.Lossy != tc.lossy {
				t.Errorf("lossy %v, want %v", r.Details.Lossy, tc.lossy)
			}
		})
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"TERM": syscall.SIGTERM, "sigint": syscall.SIGINT, " HUP ": syscall.SIGHUP,
		"9": syscall.SIGKILL, "64": 64} {
		if got, err := ParseSignal(in); err != nil || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "NOPE", "0", "65", "+9", "09", "9x"} {
		if _, err := ParseSignal(in); err == nil {
			t.Errorf("ParseSignal(%q): no error", in)
		}
	}
}
