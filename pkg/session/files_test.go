package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

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
