// Package artifact keeps the full output of commands as numbered files in one directory (reference §3.6).
//
// Each artifact is <id>.log (the raw bytes of the stream, mode 0600) plus <id>.json (its [Meta],
// mode 0600); the directory is mode 0700, since output can hold secrets. Ids are decimal integers
// allocated with O_CREATE|O_EXCL, so concurrent processes sharing the directory never get the same id.
package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

var (
	// ErrNotFound: no artifact has that id.
	ErrNotFound = errors.New("artifact not found")
	// ErrMalformedID: the id is not a decimal integer (digits only), so it cannot name an artifact.
	ErrMalformedID = errors.New("malformed artifact id")
)

// Modes of the directory and the files, set explicitly (umask-proof).
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// Store is a directory of artifacts. Its methods are safe for concurrent use, also across
// processes sharing Dir.
type Store struct {
	Dir string
}

// Meta is the metadata kept in <id>.json.
type Meta struct {
	ID      string    `json:"id"`
	Command string    `json:"command"`
	Cwd     string    `json:"cwd"`
	Created time.Time `json:"created"`
	Capped  bool      `json:"capped,omitempty"`  // the artifact hit its size cap
	Omitted int64     `json:"omitted,omitempty"` // raw bytes left out past the cap
	Binary  bool      `json:"binary,omitempty"`  // the output is binary: print it raw
}

// Info describes one artifact for listing.
type Info struct {
	ID      string    `json:"id"`
	Size    int64     `json:"size"` // bytes of <id>.log
	ModTime time.Time `json:"modTime"`
	Command string    `json:"command"` // from <id>.json; "" if unreadable
}

// ValidID reports whether id has the form of an artifact id: one or more ASCII digits.
func ValidID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// URLPrefix starts an artifact's name as results print it: artifact://17.
const URLPrefix = "artifact://"

// ParseRef returns the id named by ref, written as the id ("17") or as results print it
// ("artifact://17"). Anything else ("../x", "artifact://", "artifact://x") is an error wrapping
// ErrMalformedID.
func ParseRef(ref string) (string, error) {
	id := strings.TrimPrefix(ref, URLPrefix)
	if !ValidID(id) {
		return "", fmt.Errorf("%w: %q (want an id such as 17 or artifact://17)", ErrMalformedID, ref)
	}
	return id, nil
}

func checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q (want digits only)", ErrMalformedID, id)
	}
	return nil
}

func (s Store) logPath(id string) string  { return filepath.Join(s.Dir, id+".log") }
func (s Store) metaPath(id string) string { return filepath.Join(s.Dir, id+".json") }

// Create makes the directory if needed (0700) and a new artifact <id>.log (0600) with the next free
// id (one more than the largest in the directory, retrying on a race), writes its metadata (m with
// ID set, and Created set to now when zero) and returns the open log file and the id. The caller
// writes the raw stream to the file and closes it. Errors are wrapped with the path.
func (s Store) Create(m Meta) (*os.File, string, error) {
	if err := s.Mkdir(); err != nil {
		return nil, "", err
	}
	next, err := s.maxID()
	if err != nil {
		return nil, "", err
	}
	for tries := 0; ; tries++ {
		next++
		id := strconv.FormatUint(next, 10)
		f, err := os.OpenFile(s.logPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
		if errors.Is(err, fs.ErrExist) && tries < 10000 {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("create artifact: %w", err)
		}
		if err := f.Chmod(FileMode); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, "", fmt.Errorf("create artifact: %w", err)
		}
		m.ID = id
		if m.Created.IsZero() {
			m.Created = time.Now()
		}
		if err := s.UpdateMeta(m); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, "", err
		}
		s.recordLastID(next)
		return f, id, nil
	}
}

// Mkdir creates Dir with mode 0700 when it does not exist, so $ARTIFACTS names a directory a command can
// write to. An existing directory is left as it is.
func (s Store) Mkdir() error {
	if s.Dir == "" {
		return errors.New("artifact directory not set")
	}
	if fi, err := os.Stat(s.Dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("artifact directory %s: not a directory", s.Dir)
		}
		return nil
	}
	if err := os.MkdirAll(s.Dir, DirMode); err != nil {
		return fmt.Errorf("artifact directory: %w", err)
	}
	if err := os.Chmod(s.Dir, DirMode); err != nil {
		return fmt.Errorf("artifact directory: %w", err)
	}
	return nil
}

// lastIDFile remembers the largest id ever allocated, so ids are not reused after a prune empties the
// directory: an old artifact://N never names a different run.
const lastIDFile = ".last-id"

// recordLastID stores id in lastIDFile when it is larger than what is there (best effort: the
// O_EXCL create is what makes ids unique).
func (s Store) recordLastID(id uint64) {
	if id <= s.lastID() {
		return
	}
	_ = s.replaceFile(lastIDFile, []byte(strconv.FormatUint(id, 10)))
}

// replaceFile writes data to Dir/name (mode 0600) through a temporary file and a rename, so a reader sees
// the old content or the new, never half a file.
func (s Store) replaceFile(name string, data []byte) error {
	f, err := os.CreateTemp(s.Dir, "."+name+".tmp*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(FileMode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.Dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func (s Store) lastID() uint64 {
	b, err := os.ReadFile(filepath.Join(s.Dir, lastIDFile))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// maxID returns the largest id among <id>.log and <id>.json in Dir and the last id ever allocated
// (0 when none).
func (s Store) maxID() (uint64, error) {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return 0, fmt.Errorf("artifact directory: %w", err)
	}
	top := s.lastID()
	for _, e := range ents {
		if id, ok := idOf(e.Name(), ".log"); ok {
			top = max(top, id)
		} else if id, ok := idOf(e.Name(), ".json"); ok {
			top = max(top, id)
		}
	}
	return top, nil
}

// idOf parses "<digits><ext>".
func idOf(name, ext string) (uint64, bool) {
	id, ok := strings.CutSuffix(name, ext)
	if !ok || !ValidID(id) {
		return 0, false
	}
	n, err := strconv.ParseUint(id, 10, 64)
	return n, err == nil
}

// Path returns the path of artifact id's raw log. A malformed id gives an error wrapping
// ErrMalformedID (so "../x" can never reach the file system); a missing one wraps ErrNotFound.
func (s Store) Path(id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	p := s.logPath(id)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return "", fmt.Errorf("artifact %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("artifact %s: %w", id, err)
	}
	return p, nil
}

// ReadMeta reads artifact id's metadata. Errors as for Path.
func (s Store) ReadMeta(id string) (Meta, error) {
	if _, err := s.Path(id); err != nil {
		return Meta{}, err
	}
	var m Meta
	b, err := os.ReadFile(s.metaPath(id))
	if err != nil {
		return m, fmt.Errorf("artifact %s: %w", id, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("artifact %s: metadata: %w", id, err)
	}
	return m, nil
}

// List returns the artifacts in Dir sorted by numeric id. A missing directory is an empty list.
func (s Store) List() ([]Info, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	}
	var out []Info
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		in := Info{ID: id, Size: fi.Size(), ModTime: fi.ModTime()}
		if b, err := os.ReadFile(s.metaPath(id)); err == nil {
			var m Meta
			if json.Unmarshal(b, &m) == nil {
				in.Command = m.Command
			}
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

// compareIDs orders decimal ids numerically, whatever their length.
func compareIDs(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// Prune removes the artifacts (<id>.log and <id>.json) whose log was last modified more than
// olderThan before now, and returns their ids in numeric order. Metadata without a log and
// leftover temporary files that old are removed too (not reported). Removal errors are joined;
// a missing directory prunes nothing.
func (s Store) Prune(olderThan time.Duration, now time.Time) ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifact directory: %w", err)
	}
	cutoff := now.Add(-olderThan)
	old := func(e fs.DirEntry) bool {
		fi, err := e.Info()
		return err == nil && fi.ModTime().Before(cutoff)
	}
	var removed []string
	var errs []error
	rm := func(p string) bool {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			return false
		}
		return true
	}
	logs := map[string]bool{}
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".log"); ok && ValidID(id) {
			logs[id] = true
		}
	}
	for _, e := range ents {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, ".log"); ok && ValidID(id) {
			if e.Type().IsRegular() && old(e) && rm(s.logPath(id)) {
				rm(s.metaPath(id))
				removed = append(removed, id)
			}
		} else if id, ok := strings.CutSuffix(name, ".json"); ok && ValidID(id) && !logs[id] {
			if old(e) {
				rm(filepath.Join(s.Dir, name))
			}
		} else if strings.HasPrefix(name, ".") && strings.Contains(name, ".json.tmp") && old(e) {
			rm(filepath.Join(s.Dir, name))
		}
	}
	slices.SortFunc(removed, compareIDs)
	return removed, errors.Join(errs...)
}

// UpdateMeta rewrites <m.ID>.json (0600) atomically, e.g. to record the cap at the end of a run.
func (s Store) UpdateMeta(m Meta) error {
	if err := checkID(m.ID); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("artifact %s: metadata: %w", m.ID, err)
	}
	if err := s.replaceFile(filepath.Base(s.metaPath(m.ID)), append(b, '\n')); err != nil {
		return fmt.Errorf("artifact %s: metadata: %w", m.ID, err)
	}
	return nil
}

// Remove deletes artifact id (its log and metadata), e.g. one whose writing failed part way. A missing
// file is not an error.
func (s Store) Remove(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	var errs []error
	for _, p := range []string{s.logPath(id), s.metaPath(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Print copies artifact id to w: the sanitized text, the same text whose lines the truncation notice
// counts (reference §3.8), or the raw bytes as written when raw is set or the artifact is binary (its
// metadata says so, or a NUL byte is in its first 8 KiB). Errors are those of [Store.Path], reading and
// writing.
func (s Store) Print(w io.Writer, id string, raw bool) error {
	p, err := s.Path(id)
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 8<<10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read artifact %s: %w", id, err)
	}
	head = head[:n]
	if m, err := s.ReadMeta(id); err == nil && m.Binary || bytes.IndexByte(head, 0) >= 0 {
		raw = true
	}
	if raw {
		_, err := io.Copy(w, io.MultiReader(bytes.NewReader(head), f))
		return err
	}
	san := sanitize.NewWriter(w)
	if _, err := io.Copy(san, io.MultiReader(bytes.NewReader(head), f)); err != nil {
		return err
	}
	return san.Close()
}
