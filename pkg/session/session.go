// Package session keeps named shell state that carries over between commands (reference §7.1): the working
// directory, variables, functions, aliases, shell options and umask a command left when it ended by
// itself are there for the next command of the same session, and for no other.
//
// The mechanism is a state captured at the end of each command and restored at the start of the next,
// not a kept shell: every command is still a fresh, fully supervised `bash -c`. A [Lease] (the session's
// lock, taken by [Store.Acquire]) writes a prelude that bash sources through BASH_ENV before the command
// (so the command's text, $LINENO and `bash: line N:` messages are those of a run without a session): the
// kept state, then the request's explicit environment (which wins), then an EXIT trap that dumps what
// the shell holds at its end. [Lease.Commit] keeps that dump only when the command ended by itself.
//
// Files: Dir/NAME/ (0700) holds state.json (the kept state, replaced whole by a rename), lock (the
// flock that serializes the session's commands across processes), and the prelude (prelude.sh) and dump
// (dump) of its foreground commands, rewritten in place by each under the lock (creating two files and
// removing them again cost each command more than half a millisecond on ext4). A task's prelude is its
// own (task.*.sh). Everything is 0600: exported variables can be secrets.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Valid reports whether name is a session name: `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` (reference §7.1), so no
// `/`, never `.` or `..`, at most 64 bytes. A name is checked before it names a file, so it can never
// reach outside the store. (A loop, not a regexp: this package is in every agentbash process, and a
// compiled regexp would cost each one's start.)
func Valid(name string) bool {
	if len(name) == 0 || len(name) > 64 || !alnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// NameRule says in words what a session name is, for error messages.
const NameRule = "a session name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

// Errors a caller tests for.
var (
	ErrBadName  = errors.New(NameRule)
	ErrNotFound = errors.New("no such session")
	ErrBusy     = errors.New("a command of the session is still running")
)

// RemoveWait is how long removing a session (`session rm`, rpc session_rm) waits for its running command
// (reference §7.1).
const RemoveWait = 5 * time.Second

var ()

// Store is a directory of sessions, one subdirectory per name.
type Store struct {
	Dir string // $XDG_STATE_HOME/agentbash/sessions by default
}

// File names inside a session's directory.
const (
	lockFile     = "lock"
	stateFile    = "state.json"
	preludeFile  = "prelude.sh" // a foreground command's prelude, rewritten by the next one
	dumpFile     = "dump"       // what a foreground command's EXIT trap wrote, read by Commit
	runPrefix    = "run."       // a foreground command's prelude of earlier versions (run.NONCE.sh): swept
	dumpPrefix   = "dump."      // its dump of earlier versions (dump.NONCE): swept
	taskPrefix   = "task."      // a task's prelude: it empties itself once read; swept when old
	taskSweepAge = time.Minute
)

func (s Store) path(name string) string { return filepath.Join(s.Dir, name) }

// ErrNoDir is a Store without a directory: a session would land in the working directory.
var ErrNoDir = errors.New("sessions have no state directory")

// check checks name and that the store has a directory.
func (s Store) check(name string) error {
	if s.Dir == "" {
		return fmt.Errorf("session %s: %w", name, ErrNoDir)
	}
	return checkName(name)
}

func checkName(name string) error {
	if !Valid(name) {
		return fmt.Errorf("session %q: %w", name, ErrBadName)
	}
	return nil
}

// Acquire takes session name's lock for one command, waiting (FIFO within this process) while another
// command of the session runs, and creating the session when it is new. Cancelling ctx while it waits
// returns ctx's error. The Lease must be released.
func (s Store) Acquire(ctx context.Context, name string) (*Lease, error) {
	t, err := s.enqueue(name)
	if err != nil {
		return nil, err
	}
	return t.Acquire(ctx)
}

// Peek returns session name's kept state without its lock or a place in its queue, for a command that
// starts from the state but never writes it back (a task, reference §8): it must not wait behind a running
// command of the session. The state file is replaced whole by a rename, so what Peek reads is one
// command's state, never half of one. The Lease must be released (it removes its prelude).
func (s Store) Peek(name string) (*Lease, error) {
	if err := s.check(name); err != nil {
		return nil, err
	}
	dir := s.path(name)
	if err := ownDir(dir); err != nil {
		return nil, fmt.Errorf("session %s: %w", name, err)
	}
	l := &Lease{Name: name, store: s, dir: dir}
	if err := l.load(); err != nil {
		return nil, err
	}
	return l, nil
}

// Cwd is where session name's last kept command ended, "" for a new (or unreadable) session: read
// without the lock, as [Store.Peek] reads, and without creating anything.
func (s Store) Cwd(name string) string {
	if checkName(name) != nil {
		return ""
	}
	st, err := readState(filepath.Join(s.path(name), stateFile))
	if err != nil {
		return ""
	}
	return string(st.State.Cwd)
}

// enqueue takes a place in this process's queue for session name without waiting; [ticket.Acquire] then
// waits for its turn. The ticket must be acquired or cancelled.
func (s Store) enqueue(name string) (*ticket, error) {
	if err := s.check(name); err != nil {
		return nil, err
	}
	t := &ticket{store: s, name: name, key: filepath.Join(s.Dir, name), ready: make(chan struct{})}
	queues.mu.Lock()
	defer queues.mu.Unlock()
	q := queues.m[t.key]
	if q == nil {
		q = &queue{}
		queues.m[t.key] = q
	}
	if q.held {
		q.waiting = append(q.waiting, t)
	} else {
		q.held = true
		close(t.ready)
	}
	return t, nil
}

// queues orders the commands of each session within this process (in arrival order; the flock
// serializes processes, in no particular order). Keyed by the session's directory.
var queues = struct {
	mu sync.Mutex
	m  map[string]*queue
}{m: map[string]*queue{}}

type queue struct {
	held    bool      // a ticket has the turn
	waiting []*ticket // in order
}

// ticket is a place in a session's queue (see [Store.enqueue]).
type ticket struct {
	store Store
	name  string
	key   string
	ready chan struct{} // closed when it is this ticket's turn
	done  bool          // acquired or cancelled
}

// Acquire waits for the ticket's turn, then for the session's lock across processes (polled, so ctx's
// cancel ends the wait there too).
func (t *ticket) Acquire(ctx context.Context) (*Lease, error) {
	if t.done {
		return nil, errors.New("session ticket used twice")
	}
	t.done = true
	select {
	case <-t.ready:
	case <-ctx.Done():
		t.leave()
		return nil, context.Cause(ctx)
	}
	l, err := t.store.lock(ctx, t.name)
	if err != nil {
		passTurn(t.key)
		return nil, err
	}
	l.key = t.key
	return l, nil
}

// Cancel gives up a ticket that was not acquired.
func (t *ticket) Cancel() {
	if !t.done {
		t.done = true
		t.leave()
	}
}

// leave takes t out of its queue, passing the turn on when it had it.
func (t *ticket) leave() {
	queues.mu.Lock()
	q := queues.m[t.key]
	if i := slices.Index(q.waiting, t); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
		queues.mu.Unlock()
		return
	}
	queues.mu.Unlock()
	passTurn(t.key) // it had the turn (ready closed as ctx ended)
}

// passTurn gives the turn of key's queue to the next ticket, or frees the queue.
func passTurn(key string) {
	queues.mu.Lock()
	defer queues.mu.Unlock()
	q := queues.m[key]
	if len(q.waiting) > 0 {
		next := q.waiting[0]
		q.waiting = q.waiting[1:]
		close(next.ready)
		return
	}
	delete(queues.m, key)
}

// lock takes the flock of session name's lock file. After locking it checks that the file it locked is
// still the one at the path (same inode): `session rm` removes it while holding the lock, and a waiter
// that then gets the old file's lock starts again with a new one.
func (s Store) lock(ctx context.Context, name string) (*Lease, error) {
	dir := s.path(name)
	delay := 2 * time.Millisecond
	for {
		if err := ownDir(dir); err != nil {
			return nil, fmt.Errorf("session %s: %w", name, err)
		}
		f, _, err := openRegular(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the directory was removed (session rm, or a lease of a session that kept nothing) meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", name, err)
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
			if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
				break
			}
			select {
			case <-ctx.Done():
				f.Close()
				return nil, context.Cause(ctx)
			case <-time.After(delay):
				delay = min(2*delay, 50*time.Millisecond)
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("session %s: lock: %w", name, err)
		}
		if sameFile(f, filepath.Join(dir, lockFile)) {
			l := &Lease{Name: name, store: s, dir: dir, lock: f}
			if err := l.load(); err != nil {
				l.unlock()
				return nil, err
			}
			l.sweep()
			return l, nil
		}
		f.Close() // removed (session rm) while we waited: start again
	}
}

// sameFile reports whether the open file f is the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// Lease is one command's hold on a session: its lock, the state it starts from, and the files of its
// prelude and dump.
type Lease struct {
	Name string
	// Cwd is where the session's last kept command ended: the next command's working directory unless
	// it names one. "" for a new session.
	Cwd string

	store     Store
	dir       string
	key       string // the in-process queue's; "" for a lease not taken through a queue
	lock      *os.File
	state     *State          // the kept state; nil for a new session
	saved     []byte          // state.json as read or last written: Commit does not rewrite it unchanged
	prelude   string          // prelude.sh, once a foreground command's prelude is written
	dump      string          // the file its EXIT trap writes (Files)
	explicit  []string        // the names of the command's explicit environment
	base      Base            // what the command's rc snapshot defines
	sandbox   *sandbox.Policy // the command's, recorded by Commit (RunsUnder)
	workspace string          // its sandboxed workspace, recorded with it
	stricter  bool            // confined more than the session: its state is not kept (RunsUnder)
	// unchanging: the command cannot change the state (see [unchanging]): no dump, Commit keeps the state.
	unchanging bool
	than       *sandbox.Policy // what it is confined more than: the session's, or its server's

	released bool
}

// load reads the kept state.
func (l *Lease) load() error {
	st, raw, err := readStateFile(filepath.Join(l.dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", l.Name, err)
	}
	l.state, l.Cwd, l.saved = &st.State, string(st.State.Cwd), raw
	return nil
}

// sweep removes what crashed processes and earlier versions left: preludes and dumps of foreground
// commands with a nonce in their names (none runs now, since this lease holds the lock) and tasks'
// preludes older than a minute (bash reads one within milliseconds of starting).
// A process sweeps a session at most once every taskSweepAge (nothing it sweeps is younger), so a
// server's commands do not read the directory each time.
func (l *Lease) sweep() {
	now := time.Now()
	swept.mu.Lock()
	last, ok := swept.m[l.dir]
	if !ok || now.Sub(last) >= taskSweepAge {
		if len(swept.m) >= 1024 {
			clear(swept.m)
		}
		swept.m[l.dir] = now
	}
	swept.mu.Unlock()
	if ok && now.Sub(last) < taskSweepAge {
		return
	}
	entries, _ := os.ReadDir(l.dir)
	for _, e := range entries {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, runPrefix), strings.HasPrefix(n, dumpPrefix):
			_ = os.Remove(filepath.Join(l.dir, n))
		case strings.HasPrefix(n, taskPrefix):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > taskSweepAge {
				_ = os.Remove(filepath.Join(l.dir, n))
			}
		}
	}
}

// swept is when this process last swept each session's directory.
var swept = struct {
	mu sync.Mutex
	m  map[string]time.Time
}{m: map[string]time.Time{}}

// Release records the session's last use (the lock file's modification time) and gives the lock to
// the next command. Safe to call twice.
func (l *Lease) Release() {
	if l.released {
		return
	}
	l.released = true
	switch {
	case l.state == nil:
		// A session that never kept a state (its commands never ran, or none ended by itself) is left as
		// it was before them: not there. The lock file goes while it is held, as `session rm` does it; the
		// directory only when nothing else is in it (another process's lock file or prelude).
		for _, p := range []string{l.prelude, l.dump} {
			if p != "" {
				_ = os.Remove(p)
			}
		}
		if l.lock != nil {
			_ = os.Remove(filepath.Join(l.dir, lockFile))
		}
		_ = os.Remove(l.dir)
	case l.lock != nil:
		// Through the held descriptor: the name could have been made a link to another file meanwhile.
		now := unix.NsecToTimeval(time.Now().UnixNano())
		_ = unix.Futimes(int(l.lock.Fd()), []unix.Timeval{now, now})
	}
	l.unlock()
	if l.key != "" {
		passTurn(l.key)
	}
}

func (l *Lease) unlock() {
	if l.lock == nil {
		return // a Peek
	}
	_ = unix.Flock(int(l.lock.Fd()), unix.LOCK_UN)
	l.lock.Close()
}

// nonce is a random name part for one command's files.
func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// stored is state.json.
type stored struct {
	Name  string `json:"name"`
	State State  `json:"state"`
}

func readState(path string) (stored, error) {
	st, _, err := readStateFile(path)
	return st, err
}

// readStateFile reads state.json, returning its bytes too. What it read last of each file is kept
// beside the file's identity (inode, size, times; a new state is a new file, renamed over the old), so a
// server's next command of the session reads it again only when another process changed it. The
// returned state is shared: nobody changes a kept state in place.
func readStateFile(path string) (stored, []byte, error) {
	var st stored
	var key unix.Stat_t
	if err := unix.Lstat(path, &key); err != nil {
		return st, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	key.Atim = unix.Timespec{} // reading it changes it
	states.mu.Lock()
	c, ok := states.m[path]
	states.mu.Unlock()
	if ok && c.key == key {
		return c.st, c.raw, nil
	}
	b, err := readRegular(path)
	if err != nil {
		return st, nil, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, nil, fmt.Errorf("%s: %w", path, err)
	}
	states.mu.Lock()
	if len(states.m) >= 64 {
		clear(states.m)
	}
	states.m[path] = stateRead{key: key, st: st, raw: b}
	states.mu.Unlock()
	return st, b, nil
}

// states is what readStateFile read last, by path.
var states = struct {
	mu sync.Mutex
	m  map[string]stateRead
}{m: map[string]stateRead{}}

type stateRead struct {
	key unix.Stat_t
	st  stored
	raw []byte
}

// maxStateBytes bounds what a session reads of its state and of a command's dump: a larger file is an
// error, not a read without end (a command of the session can put /dev/zero's link or a huge file there).
const maxStateBytes = 64 << 20

// ownDir makes the session directory dir (0700) when it is missing and checks that it is a directory of
// its own: a symbolic link there (to a project, say) would have the session's files, and `session rm`'s
// removal, land wherever it points.
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory but a %s; remove it to start the session anew", dir, kind(fi.Mode()))
	}
	return nil
}

// openRegular opens the file at path of a session's directory with flag (0600 when it creates it), never
// through a symbolic link and never blocking (a FIFO put there), and checks that it is a regular file;
// fi is what it found.
func openRegular(path string, flag int) (f *os.File, fi fs.FileInfo, err error) {
	f, err = os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, fmt.Errorf("%s is a symbolic link; remove it", path)
	}
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s is not a regular file but a %s; remove it", path, kind(fi.Mode()))
	}
	return f, fi, nil
}

// readRegular reads the regular file at path whole (openRegular), at most maxStateBytes of it.
func readRegular(path string) ([]byte, error) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err == nil && len(b) > maxStateBytes {
		err = fmt.Errorf("%s is larger than %d MiB", path, maxStateBytes>>20)
	}
	return b, err
}

// kind names what a file mode is, for an error.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "file"
}

// rewrite makes the file at path (0600) hold data, writing over what it held: no new file, no
// truncation to zero (each makes ext4 do work a command in a session would wait for). data is not empty.
// A path that is not a regular file (a command of the session put something else there) is replaced.
func rewrite(path string, data []byte) error {
	f, fi, err := openRegular(path, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		if rerr := os.RemoveAll(path); rerr != nil {
			return rerr
		}
		return os.WriteFile(path, data, 0o600)
	}
	_, err = f.WriteAt(data, 0)
	if size := fi.Size(); err == nil && size > int64(len(data)) {
		err = f.Truncate(int64(len(data)))
	}
	return errors.Join(err, f.Close())
}

// writeFile writes data to path whole: a temporary file (0600) renamed over it.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp." + nonce()
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Info is what `session list` and `session show` tell about a session.
type Info struct {
	Name     string    `json:"name"`
	Cwd      string    `json:"cwd"` // "" until a command's state was kept
	LastUsed time.Time `json:"lastUsed"`
	// The names of what is kept (show only): variables (exported ones marked in Exported), inherited
	// variables the session unset, functions, aliases, the shell options that are on.
	Variables  []string `json:"variables,omitempty"`
	Exported   []string `json:"exported,omitempty"`
	Unset      []string `json:"unset,omitempty"`
	Functions  []string `json:"functions,omitempty"`
	Aliases    []string `json:"aliases,omitempty"`
	SetOptions []string `json:"setOptions,omitempty"`
	Shopts     []string `json:"shopts,omitempty"`
	Umask      string   `json:"umask,omitempty"`
	// Values (show --values only) is the kept state as the shell text that restores it.
	Values string `json:"values,omitempty"`
}

// List returns the sessions in the store, by name. A missing store is an empty list.
func (s Store) List() ([]Info, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Info{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := []Info{}
	for _, e := range entries {
		if !e.IsDir() || !Valid(e.Name()) {
			continue
		}
		info, _, err := s.info(e.Name())
		if err == nil {
			out = append(out, info)
		}
	}
	return out, nil
}

// info reads a session's name, cwd and last use, and its state (nil when none was kept yet).
func (s Store) info(name string) (Info, *State, error) {
	dir := s.path(name)
	lock, err := os.Stat(filepath.Join(dir, lockFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Info{}, nil, fmt.Errorf("session %s: %w", name, ErrNotFound)
		}
		return Info{}, nil, fmt.Errorf("session %s: %w", name, err)
	}
	info := Info{Name: name, LastUsed: lock.ModTime()}
	st, err := readState(filepath.Join(dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil, nil
	}
	if err != nil {
		return info, nil, fmt.Errorf("session %s: %w", name, err)
	}
	info.Cwd = string(st.State.Cwd)
	return info, &st.State, nil
}

// Show describes session name: its cwd, last use and the names of what it keeps; with values, also the
// kept state as shell text (values can be secrets, so only when asked). ErrNotFound when there is no
// such session.
func (s Store) Show(name string, values bool) (Info, error) {
	if err := checkName(name); err != nil {
		return Info{}, err
	}
	info, st, err := s.info(name)
	if err != nil || st == nil {
		return info, err
	}
	for _, v := range st.Vars {
		info.Variables = append(info.Variables, v.Name)
		if v.exported() {
			info.Exported = append(info.Exported, v.Name)
		}
	}
	info.Unset = st.Unset
	info.Functions = st.FunctionNames
	for _, a := range st.Aliases {
		info.Aliases = append(info.Aliases, a.Name)
	}
	info.SetOptions, info.Shopts, info.Umask = st.SetOn, st.ShoptOn, st.Umask
	if values {
		info.Values = st.body()
	}
	return info, nil
}

// Discard deletes session name's directory at once, whether or not a command holds it: for a process
// that is ending and must not leave the state (exported variables can be secrets) behind when a command
// of the session outlived its wait in [Store.Remove]. No such session is not an error.
func (s Store) Discard(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := os.RemoveAll(s.path(name)); err != nil {
		return fmt.Errorf("session %s: %w", name, err)
	}
	return nil
}

// Remove deletes session name once no command of it runs, waiting up to wait for one that does (then
// ErrBusy). ErrNotFound when there is no such session. A command waiting for the session meanwhile
// starts a new, empty one after the removal.
func (s Store) Remove(name string, wait time.Duration) error {
	if err := checkName(name); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(s.path(name), lockFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session %s: %w", name, ErrNotFound)
		}
		return fmt.Errorf("session %s: %w", name, err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), wait, ErrBusy)
	defer cancel()
	l, err := s.Acquire(ctx, name)
	if errors.Is(err, ErrBusy) {
		return fmt.Errorf("session %s: %w (waited %s)", name, ErrBusy, wait)
	}
	if err != nil {
		return err
	}
	defer func() {
		l.released = true
		l.unlock()
		passTurn(l.key)
	}()
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("session %s: %w", name, err)
	}
	for _, e := range entries {
		if e.Name() != lockFile {
			if err := os.RemoveAll(filepath.Join(l.dir, e.Name())); err != nil {
				return fmt.Errorf("session %s: %w", name, err)
			}
		}
	}
	// The lock file last, then the directory: a process that opened a new lock file meanwhile keeps
	// its (new, empty) session, and the rmdir fails quietly.
	if err := os.Remove(filepath.Join(l.dir, lockFile)); err != nil {
		return fmt.Errorf("session %s: %w", name, err)
	}
	_ = os.Remove(l.dir)
	return nil
}

// Files is the session's files the command's shell reads and writes (a sandbox binds them in while the
// state directory is hidden): the prelude it sources (made by Prelude) and, for a foreground command, the
// dump its EXIT trap writes ("" for a task).
func (l *Lease) Files(prelude string) (read, write []string) {
	switch {
	case l.unchanging:
		return []string{prelude}, nil
	case l.dump == "":
		return nil, []string{prelude} // a task's prelude empties itself
	}
	return []string{prelude}, []string{l.dump}
}
