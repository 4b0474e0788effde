package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/texts"
)

// ErrNoHome is the error of [ExpandHome] for a path that starts with `~` when no home directory is known.
var ErrNoHome = errors.New("cannot expand ~: no home directory ($HOME is not set)")

// ExpandHome expands a leading `~` or `~/` of path to home (reference §3.4): `~` is home, `~/x` is home/x
// (cleaned). Any other path (`~user`, `a/~`, "") is returned as it is. With home "" a path that starts with
// `~` is returned as written, with [ErrNoHome]: [ResolveDir] reports it as the working directory's error,
// config keeps the path as written (config.ExpandHome).
func ExpandHome(path, home string) (string, error) {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	if home == "" {
		return path, ErrNoHome
	}
	return filepath.Join(home, path[1:]), nil
}

// ResolveDir turns the requested working directory into the absolute path the command runs in: "" is
// the current directory; `~` and `~/` expand to home; a relative path resolves against the current
// directory; the result is cleaned, not symlink-resolved (reference §3.4). It fails with the exact texts of
// §3.4 when the directory does not exist or is not a directory, with [ErrNoHome] (wrapped in a
// [DirError]) for `~` when home is "", and with the stat error otherwise.
func ResolveDir(dir, home string) (string, error) {
	if i := strings.IndexByte(dir, 0); i >= 0 {
		// No path holds a NUL: say so, instead of the system call's "invalid argument".
		return strings.ReplaceAll(dir, "\x00", `\x00`), &DirError{Text: fmt.Sprintf(texts.DirNUL, i)}
	}
	dir, err := ExpandHome(dir, home)
	if err != nil {
		return dir, &DirError{Text: "Working directory " + dir + ": " + err.Error(), Err: err}
	}
	var abs string
	if filepath.IsAbs(dir) {
		abs = filepath.Clean(dir)
	} else {
		wd, err := workingDir()
		if err != nil {
			return filepath.Join(wd, dir), err
		}
		abs = filepath.Join(wd, dir)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return abs, &DirError{Text: texts.DirNotExist + abs, Err: err}
	case err != nil:
		return abs, &DirError{Text: err.Error(), Err: err}
	case !fi.IsDir():
		return abs, &DirError{Text: texts.DirNotDir + abs}
	}
	if err := unix.Access(abs, unix.X_OK); err != nil {
		return abs, &DirError{Text: texts.DirNotAccessible + abs + ": " + err.Error(), Err: err}
	}
	return abs, nil
}

// workingDir is the logical current directory: $PWD when it names the same directory as ".", so a cwd
// reached through a symlink is reported as the user sees it (what `pwd` prints), else os.Getwd.
//
// When the directory agentbash was started in has been removed (getcwd fails), it is still the one
// meant: its path is $PWD (reference §3.4), else the path the kernel keeps for it (/proc/self/cwd, Linux), and
// ResolveDir then reports that it does not exist. Should that path name a directory again (removed and
// made anew, or a stale $PWD), it is not the one agentbash is in: an error, never a run there. The error
// has the path when one is known.
func workingDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return removedDir(err)
	}
	if pwd := os.Getenv("PWD"); filepath.IsAbs(pwd) && pwd != wd {
		a, errA := os.Stat(pwd)
		b, errB := os.Stat(wd)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return filepath.Clean(pwd), nil
		}
	}
	return wd, nil
}

// removedDir is the path of the removed current directory, for workingDir; getwdErr is why getcwd failed.
func removedDir(getwdErr error) (string, error) {
	path := os.Getenv("PWD")
	if !filepath.IsAbs(path) {
		link, err := os.Readlink("/proc/self/cwd") // "/old/path (deleted)"
		path = strings.TrimSuffix(link, " (deleted)")
		if err != nil || !filepath.IsAbs(path) {
			return "", &DirError{Text: texts.DirRemoved, Err: getwdErr}
		}
	}
	path = filepath.Clean(path)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return path, &DirError{Text: texts.DirReplaced + path + texts.DirReplacedHint, Err: getwdErr}
	}
	return path, nil
}

// DirError is a working-directory problem; Text is the whole message.
type DirError struct {
	Text string
	Err  error
}

func (e *DirError) Error() string { return e.Text }
func (e *DirError) Unwrap() error { return e.Err }
