package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// A session's commands make no new files (docs/architecture.md, sessions): after many commands its
// directory holds the lock, the state, and the one prelude and dump the commands rewrite.
func TestCommandsLeaveTheSameFiles(t *testing.T) {
	s := newStore(t)
	for _, c := range []string{`export A=1`, `true`, `cd /`, `unset A`, `exit 3`, `x=$(printf 'long%.0s' {1..500})`, `unset x`} {
		shell(t, s, "s", c, Prelude{}, "")
	}
	entries, err := os.ReadDir(filepath.Join(s.Dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{dumpFile, lockFile, preludeFile, stateFile}; !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
	// The dump is whole (a shorter one after a longer one leaves nothing of the longer behind).
	if _, cwd, kept, w := shell(t, s, "s", `true`, Prelude{}, ""); !kept || cwd != "/" {
		t.Errorf("kept %v cwd %q warning %q", kept, cwd, w)
	}
}

// A state the command left as it was is not written again; a changed one is.
func TestUnchangedStateNotWritten(t *testing.T) {
	s := newStore(t)
	shell(t, s, "s", `export A=1`, Prelude{}, "")
	path := filepath.Join(s.Dir, "s", stateFile)
	ino := func() uint64 {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.Sys().(*syscall.Stat_t).Ino
	}
	before := ino()
	shell(t, s, "s", `true; echo "$A"`, Prelude{}, "")
	if ino() != before {
		t.Error("an unchanged state was written again")
	}
	shell(t, s, "s", `export A=2`, Prelude{}, "")
	if ino() == before {
		t.Error("a changed state was not written")
	}
	if out, _, _, _ := shell(t, s, "s", `echo "$A"`, Prelude{}, ""); out != "2\n" {
		t.Errorf("A: %q", out)
	}
}

// The state another process wrote is the one read, whatever this process read before.
func TestStateWrittenElsewhereIsRead(t *testing.T) {
	s := newStore(t)
	shell(t, s, "s", `cd /`, Prelude{}, "")
	if got := s.Cwd("s"); got != "/" {
		t.Fatalf("cwd %q", got)
	}
	path := filepath.Join(s.Dir, "s", stateFile)
	var st stored
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	st.State.Cwd = run.Raw(other)
	b, _ = json.Marshal(st)
	if err := writeFile(path, b); err != nil {
		t.Fatal(err)
	}
	if got := s.Cwd("s"); got != other {
		t.Errorf("cwd %q, want %q", got, other)
	}
}

// A dump or prelude path that a command made into something else (a symbolic link, a FIFO, a directory)
// is replaced, and what a link pointed to is left alone.
func TestRewriteReplacesOddFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(string) error{
		"symlink": func(p string) error { return os.Symlink(target, p) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dir":     func(p string) error { return os.MkdirAll(filepath.Join(p, "sub"), 0o700) },
		"longer":  func(p string) error { return os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o600) },
	} {
		p := filepath.Join(dir, name)
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
		if err := rewrite(p, []byte("new")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		info, err := os.Lstat(p)
		if b, _ := os.ReadFile(p); err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 && name != "longer" || string(b) != "new" {
			t.Errorf("%s: %v %v %q", name, info.Mode(), err, b)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target: %q", b)
	}
}

// Parsing declare -p's output a line at a time gives what parsing it whole gives, and output with a
// statement over several lines (bash 4 printed a newline in a value as is) is parsed whole.
func TestDeclareLines(t *testing.T) {
	for _, text := range []string{
		"declare -- A=\"1\"\ndeclare -x B=\"two words\"\n",
		"declare -- X=$'a\\nb'\ndeclare -a ARR=([0]=\"x\" [1]=$'y\\tz')\ndeclare -A M=([k]=\"v\" )\ndeclare -ir R=\"3\"\ndeclare -- U\n",
		"declare -- S=\"a;declare -- T=1\"\n",
		"declare -- NL=\"line one\ndeclare -- FAKE=\\\"x\\\"\nline three\"\ndeclare -- AFTER=\"z\"\n",
		"declare -- BS=\"end\\\\\"\n",
		"",
	} {
		whole, err := parseDeclaresWhole(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		for range 2 { // the second time from what the first remembered
			got, err := parseDeclares(text)
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			if !reflect.DeepEqual(got, whole) {
				t.Errorf("%q:\n got %+v\nwant %+v", text, got, whole)
			}
		}
	}
	if got, _ := parseDeclares("declare -- NL=\"a\ndeclare -- FAKE=1\nb\"\n"); len(got) != 1 || got[0].Name != "NL" || got[0].value != "a\ndeclare -- FAKE=1\nb" {
		t.Errorf("a value over several lines: %+v", got)
	}
}

// What a command (or anyone) puts in place of a session's directory or files is never followed out of
// the store, never read without end, never waited on: a symbolic link as the session's directory (a
// project's), state.json made a link to /dev/zero or a FIFO, the lock file made a link to another file.
// Each is an error naming the file, the file pointed to is left as it was, and `session rm` removes
// nothing through the link.
func TestForeignFilesRefused(t *testing.T) {
	project := func(t *testing.T) (string, func()) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("code"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir, func() {
			t.Helper()
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != "main.go" {
				t.Errorf("the project behind the link holds %v, want main.go alone", entries)
			}
		}
	}
	lockFor := func(s Store) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := s.Acquire(ctx, "s")
		if err == nil {
			l.Release()
		}
		return err
	}
	t.Run("directory link", func(t *testing.T) {
		s := newStore(t)
		dir, check := project(t)
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dir, filepath.Join(s.Dir, "s")); err != nil {
			t.Fatal(err)
		}
		if err := lockFor(s); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Acquire: %v, want the link refused", err)
		}
		if _, err := s.Peek("s"); err == nil {
			t.Error("Peek through a link succeeded")
		}
		if err := s.Remove("s", time.Second); err == nil {
			t.Error("Remove through a link succeeded")
		}
		check()
	})
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"state link to /dev/zero", func(t *testing.T, p string) { mustSymlink(t, "/dev/zero", p) }, "symbolic link"},
		{"state FIFO", func(t *testing.T, p string) { mustMkfifo(t, p) }, "named pipe"},
		{"state too large", func(t *testing.T, p string) {
			if err := os.Truncate(p, maxStateBytes+1); err != nil {
				t.Fatal(err)
			}
		}, "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			shell(t, s, "s", `export A=1`, Prelude{}, "")
			path := filepath.Join(s.Dir, "s", stateFile)
			if tc.name != "state too large" {
				os.Remove(path)
			}
			tc.make(t, path)
			if err := lockFor(s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Acquire: %v, want %q", err, tc.want)
			}
			if _, err := readState(path); err == nil {
				t.Error("readState succeeded")
			}
		})
	}
	t.Run("lock link", func(t *testing.T) {
		s := newStore(t)
		shell(t, s, "s", `export A=1`, Prelude{}, "")
		precious := filepath.Join(t.TempDir(), "precious")
		if err := os.WriteFile(precious, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(precious, old, old); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(s.Dir, "s", lockFile)
		os.Remove(lock)
		mustSymlink(t, precious, lock)
		if err := lockFor(s); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Acquire: %v, want the link refused", err)
		}
		if info, err := os.Stat(precious); err != nil || !info.ModTime().Equal(old) {
			t.Errorf("the file behind the lock's link was touched: %v %v", info.ModTime(), err)
		}
	})
}

// A command that puts something else in place of its dump (a link to /dev/zero, a directory) leaves the
// session's state as it was, with a warning: its end never reads without end. (A FIFO there makes the
// shell's own EXIT trap wait for a reader: the command's timeout ends that, as any command that waits.)
func TestForeignDumpNotKept(t *testing.T) {
	for _, replace := range []string{`ln -sf /dev/zero "$d"`, `rm -f "$d" && mkdir "$d"`} {
		s := newStore(t)
		shell(t, s, "s", `export A=1`, Prelude{}, "")
		// The dump is the file the EXIT trap appends to; the command finds it there.
		cmd := `d=$(trap -p EXIT | grep -o "[^ ']*/` + dumpFile + `" | head -n 1); export A=2; ` + replace
		done := make(chan struct{})
		var kept bool
		var warning string
		go func() {
			defer close(done)
			_, _, kept, warning = shell(t, s, "s", cmd, Prelude{}, "")
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the command's end never came", replace)
		}
		if kept || !strings.Contains(warning, "not saved") {
			t.Errorf("%s: kept %v, warning %q", replace, kept, warning)
		}
		if out, _, _, _ := shell(t, s, "s", `echo "A=$A"`, Prelude{}, ""); !strings.Contains(out, "A=1") {
			t.Errorf("%s: the state after: %q, want A=1 kept", replace, out)
		}
	}
}

func mustSymlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func mustMkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
