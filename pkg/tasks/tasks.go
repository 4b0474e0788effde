// Package tasks keeps the records of background tasks (reference §8): a task is a supervised run whose supervisor
// is detached from the process that started it, so the command outlives its starter.
//
// The store is one directory (mode 0700) of files (mode 0600): <id>.json is the task's [Record], written by
// temp-file-and-rename so a reader never sees half of one, <id>.reader.<name> holds one reader's offset
// into the task's output stream (what that reader has been shown) and <id>.lock.<name> its lock, and
// <id>.tail.<offset> the output past the artifact cap ([TailWriter]). Ids are canonical decimal numbers, each
// record created whole by linking a temporary file to its name (the link fails when the id is taken), so
// concurrent processes never share one and no record is ever empty, and they are checked before they name a file.
// An id is never given twice, also once its record was pruned: last-id keeps the largest one given.
//
// The supervisor writes the record when the shell runs (status running, with its pid and its own) and once
// more when the run ended (the final status, the outcome, the sink's summary): completion is recorded exactly
// once, by the process that saw it, whether or not anyone watches. A record that says running while its
// supervisor is gone (or its pid is another process now: the start time in /proc differs) is reported as
// status error with the reason, never as running forever.
//
// A task owns its whole tree to the end (README "Background tasks"): when its shell ends while processes
// it started still run, the final record is written then (with them in the outcome's leftoverPids and
// their number in Leftovers), and the supervisor lives on as their subreaper, keeping Leftovers up to
// date, until they are gone, a kill ends them (LeftoverKilled), or tasks.maxLifetime does. The record's
// supervisorPid and start time say whether it still does: a record whose supervisor is gone has none
// left.
package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

var (
	// ErrNotFound: no task has that id.
	ErrNotFound = errors.New("no such task")
	// ErrMalformedID: the id is not a decimal integer, so it cannot name a task.
	ErrMalformedID = errors.New("malformed task id")
	// ErrBadReader: a reader name that does not match [ValidReader].
	ErrBadReader = errors.New("bad reader name (want letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64)")
)

// Modes of the directory and the files, set explicitly (umask-proof).
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// Statuses of a task (details.status, reference §3.10 and §8).
const (
	StatusStarting = "starting" // the id is allocated, the supervisor has not yet written the record
	StatusRunning  = "running"
	StatusExited   = "exited"
	StatusSignaled = "signaled"
	StatusKilled   = "killed"
	StatusTimedOut = "timed_out"
	// StatusCancelled is a run its own client cancelled before it was handed over (Ctrl-C during
	// `run --yield`): a cancelled run, not a killed task.
	StatusCancelled = "cancelled"
	StatusError     = "error"
)

// DefaultReader is the reader of `agentbash output` without --reader.
const DefaultReader = "default"

// DefaultMaxLifetime is tasks.maxLifetime's default, seconds (reference §8).
const DefaultMaxLifetime = 86400.0

// Record is one task, as kept in <id>.json.
type Record struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	Pid           int    `json:"pid,omitempty"`           // the shell's
	SupervisorPid int    `json:"supervisorPid,omitempty"` // the detached supervisor's
	// SupervisorStart is the supervisor's start time in clock ticks since boot (/proc/PID/stat field 22),
	// so a pid reused by another process is not taken for the supervisor.
	SupervisorStart uint64 `json:"supervisorStart,omitempty"`
	// StarterPid and StarterStart are the process that created the record (start, run --background or
	// --yield) and its start time: while the supervisor has not reported, a starter gone means the task
	// never started.
	StarterPid        int        `json:"starterPid,omitempty"`
	StarterStart      uint64     `json:"starterStart,omitempty"`
	Command           string     `json:"command"`
	NormalizedCommand string     `json:"normalizedCommand,omitempty"`
	Cwd               string     `json:"cwd"`
	Shell             string     `json:"shell"`
	StartedAt         time.Time  `json:"startedAt"`
	EndedAt           *time.Time `json:"endedAt,omitempty"`
	ArtifactID        string     `json:"artifactId,omitempty"`
	ArtifactPath      string     `json:"artifactPath,omitempty"`
	// ArtifactCap is the most raw bytes the artifact holds (artifacts.maxBytes); past it the output is in
	// the task's tail segments (see [TailWriter]).
	ArtifactCap int64 `json:"artifactCap,omitempty"`
	// TimeoutSeconds is the task's own timeout, 0 for none; MaxLifetime is tasks.maxLifetime, 0 for none.
	TimeoutSeconds float64 `json:"timeoutSeconds"`
	MaxLifetime    float64 `json:"maxLifetime"`
	// What the result of the run is built with (result.Input).
	Head        int      `json:"head"`
	Tail        int      `json:"tail"`
	MaxBytes    int      `json:"maxBytes"`
	NonZeroExit string   `json:"nonZeroExit,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// Sandbox is what confines the task for its whole life (details.sandbox); nil when it is not sandboxed.
	Sandbox *result.Sandbox `json:"sandbox,omitempty"`
	// Interactive is the task's input, console.ModePipe or console.ModeTTY (docs/reference.md §14); "" when it
	// has none.
	Interactive string `json:"interactive,omitempty"`
	// At the end: how the run ended, or the error that kept it from running or the reason it is lost.
	Outcome *run.Outcome  `json:"outcome,omitempty"`
	Summary *sink.Summary `json:"summary,omitempty"`
	Error   string        `json:"error,omitempty"`
	// KillSignal is the signal `kill` (or the maximum lifetime) ended the task with, 0 when none.
	KillSignal int `json:"killSignal,omitempty"`
	// LifetimeExceeded: tasks.maxLifetime ended the task.
	LifetimeExceeded bool `json:"lifetimeExceeded,omitempty"`
	// Leftovers is how many processes the task started still run after its shell ended: the task still
	// owns them, and its supervisor stays their subreaper until they are gone (see [Store]). The
	// supervisor keeps the number up to date; Load reads 0 once the supervisor is gone.
	Leftovers int `json:"leftovers,omitempty"`
	// LeftoverKilled is how many processes a kill (or tasks.maxLifetime) ended after the shell had.
	LeftoverKilled int `json:"leftoverKilled,omitempty"`
}

// Running reports whether the task has not ended (starting or running).
func (r Record) Running() bool { return r.Status == StatusRunning || r.Status == StatusStarting }

// Store is a directory of task records. Its methods are safe for concurrent use, also across processes.
type Store struct {
	Dir string
}

// ValidID reports whether id has the form of a task id: a canonical decimal number (no sign, no leading
// zeros) that fits in 64 bits, so one task has one name.
func ValidID(id string) bool { return CheckID(id) == nil }

// CheckID says why id is not a task id (wrapping [ErrMalformedID]), nil when it is one.
func CheckID(id string) error {
	if !artifact.ValidID(id) {
		return fmt.Errorf("task %q: %w (want a plain decimal number such as 7: no sign, no leading zeros)", id, ErrMalformedID)
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return fmt.Errorf("task %q: %w: too large (task ids fit in 64 bits)", id, ErrMalformedID)
	}
	if strconv.FormatUint(n, 10) != id {
		return fmt.Errorf("task %q: %w: leading zeros (write it as %d)", id, ErrMalformedID, n)
	}
	return nil
}

// ValidReader reports whether name is a reader name: [A-Za-z0-9][A-Za-z0-9._-]{0,63} (the session-name
// pattern, reference §7.1), so it can name a file.
func ValidReader(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

func checkID(id string) error { return CheckID(id) }

func (s Store) recordPath(id string) string { return filepath.Join(s.Dir, id+".json") }
func (s Store) readerPath(id, name string) string {
	return filepath.Join(s.Dir, id+".reader."+name)
}

// Mkdir creates the directory (and parents) with mode 0700, and sets 0700 on one that exists.
func (s Store) Mkdir() error {
	if err := os.MkdirAll(s.Dir, DirMode); err != nil {
		return fmt.Errorf("task directory: %w", err)
	}
	if err := os.Chmod(s.Dir, DirMode); err != nil {
		return fmt.Errorf("task directory: %w", err)
	}
	return nil
}

// Create allocates a new id and writes rec under it (Status starting unless set), returning the id. The
// id is one more than the largest ever given in the directory: the largest record's, or the mark in
// lastIDFile when it is larger (the records of the newest tasks may have been pruned), so an id is never
// given twice and a stale one names nothing. Processes take turns over the allocation (a flock on
// lastIDFile); the record is created by linking (see [Store]), so even without the lock no two share an id.
func (s Store) Create(rec Record) (string, error) {
	if err := s.Mkdir(); err != nil {
		return "", err
	}
	unlock := s.lockIDs()
	defer unlock()
	next, err := s.maxID()
	if err != nil {
		return "", err
	}
	next = max(next, s.lastID())
	if rec.Status == "" {
		rec.Status = StatusStarting
	}
	if rec.StarterPid == 0 {
		rec.StarterPid = os.Getpid()
		rec.StarterStart, _ = StartTime(rec.StarterPid)
	}
	for tries := 0; tries < 10000; tries++ {
		next++
		id := strconv.FormatUint(next, 10)
		rec.TaskID = id
		// The whole record goes in a temporary file that is then linked to the id's name: link fails
		// when the name exists (the id is taken), and the record is never seen empty or half-written.
		tmp, err := s.temp(rec)
		if err != nil {
			return "", err
		}
		err = os.Link(tmp, s.recordPath(id))
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("task record: %w", err)
		}
		// Never lower the mark: without the lock (a store that refused it) a creator may finish after a
		// later one.
		mark := strconv.FormatUint(max(next, s.lastID()), 10)
		if err := s.replace(s.lastIDPath(), []byte(mark+"\n")); err != nil {
			s.Remove(id) // an id the mark does not hold could be given again once pruned
			return "", err
		}
		return id, nil
	}
	return "", errors.New("task record: no free id")
}

// lastIDFile holds the largest task id given in the directory, in decimal (Create). Prune and Remove
// leave it.
const lastIDFile = "last-id"

func (s Store) lastIDPath() string { return filepath.Join(s.Dir, lastIDFile) }

// lastID is the mark in lastIDFile, 0 when there is none.
func (s Store) lastID() uint64 {
	b, err := os.ReadFile(s.lastIDPath())
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// lockIDs takes the allocation lock, so concurrent processes take turns over reading and raising the
// mark: an exclusive flock on the directory (one on lastIDFile would be lost when the mark is replaced by
// a rename). A lock that cannot be taken is done
// without: the links still keep ids apart, and only a prune that races the allocation could then lower
// the mark.
func (s Store) lockIDs() (unlock func()) {
	d, err := os.Open(s.Dir)
	if err != nil {
		return func() {}
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	return func() { d.Close() } // closing releases the lock
}

// maxID is the largest id in the directory, 0 when none.
func (s Store) maxID() (uint64, error) {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return 0, fmt.Errorf("task directory: %w", err)
	}
	var m uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidID(name) {
			continue
		}
		if n, err := strconv.ParseUint(name, 10, 64); err == nil {
			m = max(m, n)
		}
	}
	return m, nil
}

// Save writes rec to <rec.TaskID>.json through a temporary file and a rename.
func (s Store) Save(rec Record) error {
	if err := checkID(rec.TaskID); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("task %s: encode record: %w", rec.TaskID, err)
	}
	return s.replace(s.recordPath(rec.TaskID), b)
}

// temp writes rec to a new temporary file in the directory and returns its name.
func (s Store) temp(rec Record) (string, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return "", fmt.Errorf("task %s: encode record: %w", rec.TaskID, err)
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("task record: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), FileMode)
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("task record: %w", werr)
	}
	return f.Name(), nil
}

// replace writes data to name atomically (temporary file in the same directory, then rename).
func (s Store) replace(name string, data []byte) error {
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("task store: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, FileMode)
	}
	if werr == nil {
		werr = os.Rename(tmp, name)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("task store: write %s: %w", filepath.Base(name), werr)
	}
	return nil
}

// Remove deletes a task's record and its readers' offsets (not its artifact).
func (s Store) Remove(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	readers, _ := filepath.Glob(filepath.Join(s.Dir, id+".reader.*"))
	tails, _ := filepath.Glob(filepath.Join(s.Dir, id+".tail.*"))
	locks, _ := filepath.Glob(filepath.Join(s.Dir, id+".lock.*"))
	for _, r := range append(append(readers, tails...), locks...) {
		os.Remove(r)
	}
	os.Remove(s.killPath(id))
	os.Remove(s.SocketPath(id))
	if err := os.Remove(s.recordPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("task %s: %w", id, err)
	}
	return nil
}

// SocketPath is where the supervisor of task id listens for its input while its shell runs (an
// interactive task, [Record.Interactive]; pkg/console).
func (s Store) SocketPath(id string) string { return filepath.Join(s.Dir, id+".sock") }

// startingGrace is how long a record may stay "starting" (id allocated, supervisor not reported yet)
// before it is taken as lost: the starter died between the two.
const startingGrace = time.Minute

// Load reads task id's record. A record that says running while its supervisor is gone is returned with
// status error and the reason in Error (see [Store]); the file is left as it is.
func (s Store) Load(id string) (Record, error) {
	rec, err := s.load(id)
	if err != nil {
		return rec, err
	}
	if !rec.Running() {
		if rec.Leftovers > 0 && !Alive(rec.SupervisorPid, rec.SupervisorStart) {
			rec.Leftovers = 0 // its supervisor, which owned them, is gone: nothing is the task's any more
		}
		return rec, nil
	}
	if reason := lost(rec); reason != "" {
		// The supervisor may have written the final record since the first read: read once more.
		if rec, err = s.load(id); err != nil || !rec.Running() {
			return rec, err
		}
		if reason = lost(rec); reason != "" {
			rec.Status, rec.Error = StatusError, reason
		}
	}
	return rec, nil
}

func (s Store) load(id string) (Record, error) {
	if err := checkID(id); err != nil {
		return Record{}, err
	}
	b, err := os.ReadFile(s.recordPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("task %s: %w", id, err)
	}
	var rec Record
	if len(b) == 0 { // allocated, not yet written (Create): starting
		fi, _ := os.Stat(s.recordPath(id))
		rec = Record{TaskID: id, Status: StatusStarting}
		if fi != nil {
			rec.StartedAt = fi.ModTime()
		}
		return rec, nil
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, fmt.Errorf("task %s: unreadable record: %w", id, err)
	}
	rec.TaskID = id
	return rec, nil
}

// lost says why a running record's supervisor cannot finish it, or "" while it can.
func lost(rec Record) string {
	if rec.Status == StatusStarting && rec.SupervisorPid == 0 {
		if rec.StarterPid > 0 && !Alive(rec.StarterPid, rec.StarterStart) {
			return "the task never started: its starter went away before the supervisor reported"
		}
		if time.Since(rec.StartedAt) > startingGrace {
			return "the task never started: its starter went away before the supervisor reported"
		}
		return ""
	}
	if !Alive(rec.SupervisorPid, rec.SupervisorStart) {
		return fmt.Sprintf("the task's supervisor (pid %d) is gone without recording how the task ended", rec.SupervisorPid)
	}
	return ""
}

// List returns every task's record, by id; records that cannot be read are left out.
func (s Store) List() ([]Record, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("task directory: %w", err)
	}
	var ids []uint64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidID(name) {
			continue
		}
		if n, err := strconv.ParseUint(name, 10, 64); err == nil {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	var out []Record
	for _, n := range ids {
		if rec, err := s.Load(strconv.FormatUint(n, 10)); err == nil {
			out = append(out, rec)
		}
	}
	return out, nil
}

// Prune removes the records of tasks that ended more than olderThan before now (running ones stay, and
// those whose leftover processes still run), and returns their ids.
func (s Store) Prune(olderThan time.Duration, now time.Time) ([]string, error) {
	recs, err := s.List()
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, r := range recs {
		if r.Running() || r.Leftovers > 0 { // a task that still owns processes stays
			continue
		}
		end := r.StartedAt
		if r.EndedAt != nil {
			end = *r.EndedAt
		}
		if now.Sub(end) < olderThan {
			continue
		}
		if err := s.Remove(r.TaskID); err != nil {
			return removed, err
		}
		removed = append(removed, r.TaskID)
	}
	return removed, nil
}
