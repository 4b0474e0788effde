package artifact

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestCreateModesAndMeta(t *testing.T) {
	old := syscall.Umask(0) // the modes must not depend on the umask
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "state", "artifacts")
	s := Store{Dir: dir}
	f, id, err := s.Create(Meta{Command: "seq 1 100000", Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	if id != "1" {
		t.Fatalf("first id %q", id)
	}
	f.WriteString("raw\x1b[31m bytes\n")
	f.Close()
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	p, err := s.Path(id)
	if err != nil || p != filepath.Join(dir, "1.log") {
		t.Fatalf("Path: %q %v", p, err)
	}
	if m := mode(dir); m != 0o700 {
		t.Errorf("dir mode %o", m)
	}
	if m := mode(p); m != 0o600 {
		t.Errorf("log mode %o", m)
	}
	if m := mode(filepath.Join(dir, "1.json")); m != 0o600 {
		t.Errorf("json mode %o", m)
	}
	m, err := s.ReadMeta(id)
	if err != nil || m.ID != "1" || m.Command != "seq 1 100000" || m.Cwd != "/tmp" || m.Created.IsZero() {
		t.Fatalf("%+v %v", m, err)
	}
	m.Capped, m.Omitted = true, 42
	if err := s.UpdateMeta(m); err != nil {
		t.Fatal(err)
	}
	if m2, _ := s.ReadMeta(id); !m2.Capped || m2.Omitted != 42 {
		t.Fatalf("%+v", m2)
	}
	if m := mode(filepath.Join(dir, "1.json")); m != 0o600 {
		t.Errorf("json mode after update %o", m)
	}
	// The next id follows the largest one, gaps included.
	os.WriteFile(filepath.Join(dir, "41.log"), nil, 0o600)
	if _, id, _ := s.Create(Meta{}); id != "42" {
		t.Fatalf("next id %q", id)
	}
	// Temporary metadata files are gone.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != lastIDFile {
			t.Errorf("leftover %s", e.Name())
		}
	}
}

// A umask that takes owner bits away does not change the modes (they are set explicitly).
func TestCreateStrangeUmask(t *testing.T) {
	old := syscall.Umask(0o266)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "a")
	f, id, err := Store{Dir: dir}.Create(Meta{})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, id+".log"): 0o600, filepath.Join(dir, id+".json"): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
}

func TestPathErrors(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for _, id := range []string{"../x", "1/2", "", "-1", "01a", "1.log", " 1", "１"} {
		if _, err := s.Path(id); !errors.Is(err, ErrMalformedID) || !strings.Contains(err.Error(), strconv.Quote(id)) {
			t.Errorf("Path(%q): %v", id, err)
		}
	}
	if _, err := s.Path("99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	os.Mkdir(filepath.Join(s.Dir, "5.log"), 0o700)
	if _, err := s.Path("5"); !errors.Is(err, ErrNotFound) {
		t.Errorf("directory: %v", err)
	}
	if err := s.UpdateMeta(Meta{ID: "../x"}); !errors.Is(err, ErrMalformedID) {
		t.Errorf("UpdateMeta: %v", err)
	}
	if _, err := (Store{Dir: filepath.Join(t.TempDir(), "none")}).Path("1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no dir: %v", err)
	}
}

func TestCreateUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	for _, dir := range []string{filepath.Join(file, "x"), file, ""} {
		if f, _, err := (Store{Dir: dir}).Create(Meta{}); err == nil {
			f.Close()
			t.Errorf("Create in %q succeeded", dir)
		}
	}
	if os.Geteuid() != 0 { // root ignores permissions
		ro := filepath.Join(t.TempDir(), "ro")
		os.Mkdir(ro, 0o500)
		if _, _, err := (Store{Dir: ro}).Create(Meta{}); err == nil {
			t.Error("Create in a read-only directory succeeded")
		}
	}
}

// Many goroutines, each with its own Store value, never share an id.
func TestCreateConcurrentGoroutines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a")
	const n = 40
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			f, id, err := Store{Dir: dir}.Create(Meta{Command: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(f, "%d", i)
			f.Close()
			ids[i] = id
		})
	}
	wg.Wait()
	checkDistinct(t, ids, n)
	// Each file holds what its creator wrote.
	for i, id := range ids {
		b, _ := os.ReadFile(filepath.Join(dir, id+".log"))
		if string(b) != fmt.Sprint(i) {
			t.Fatalf("artifact %s holds %q, want %d", id, b, i)
		}
	}
}

// Several processes (this test binary re-executed) create artifacts in one directory at once.
func TestCreateConcurrentProcesses(t *testing.T) {
	if dir := os.Getenv("ARTIFACT_TEST_DIR"); dir != "" {
		var ids []string
		for range 25 {
			f, id, err := Store{Dir: dir}.Create(Meta{})
			if err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			f.Close()
			ids = append(ids, id)
		}
		fmt.Println(strings.Join(ids, " "))
		os.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "shared")
	const procs = 6
	outs := make([][]byte, procs)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCreateConcurrentProcesses$")
			cmd.Env = append(os.Environ(), "ARTIFACT_TEST_DIR="+dir)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("child: %v %s", err, out)
			}
			outs[i] = out
		})
	}
	wg.Wait()
	var ids []string
	for _, o := range outs {
		ids = append(ids, strings.Fields(string(o))...)
	}
	checkDistinct(t, ids, procs*25)
}

func checkDistinct(t *testing.T, ids []string, n int) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if !ValidID(id) || seen[id] {
			t.Fatalf("bad or duplicate id %q in %v", id, ids)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d ids, want %d", len(seen), n)
	}
}

func TestListAndPrune(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if l, err := (Store{Dir: filepath.Join(s.Dir, "none")}).List(); err != nil || l != nil {
		t.Fatalf("missing dir: %v %v", l, err)
	}
	for i := range 11 {
		f, _, err := s.Create(Meta{Command: fmt.Sprintf("cmd %d", i+1)})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Repeat("x", i+1))
		f.Close()
	}
	os.WriteFile(filepath.Join(s.Dir, "notes.txt"), nil, 0o600)
	os.WriteFile(filepath.Join(s.Dir, "12.json"), []byte("{}"), 0o600) // metadata without a log
	l, err := s.List()
	if err != nil || len(l) != 11 {
		t.Fatalf("%v %v", l, err)
	}
	var got []string
	for _, in := range l {
		got = append(got, in.ID)
		if n, _ := strconv.Atoi(in.ID); in.Size != int64(n) || in.Command != "cmd "+in.ID {
			t.Errorf("%+v", in)
		}
	}
	if want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}; !slices.Equal(got, want) {
		t.Fatalf("order %v", got)
	}
	// Age 1, 2, 10 and 12 by ten days.
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	for _, name := range []string{"1.log", "2.log", "10.log", "12.json"} {
		os.Chtimes(filepath.Join(s.Dir, name), old, old)
	}
	removed, err := s.Prune(7*24*time.Hour, now)
	if err != nil || !slices.Equal(removed, []string{"1", "2", "10"}) {
		t.Fatalf("%v %v", removed, err)
	}
	for _, name := range []string{"1.log", "1.json", "10.json", "12.json"} {
		if _, err := os.Stat(filepath.Join(s.Dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s not removed", name)
		}
	}
	if l, _ := s.List(); len(l) != 8 {
		t.Fatalf("%d left", len(l))
	}
	if _, err := s.Path("1"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
}

func TestIDsNotReusedAfterPrune(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "a")}
	for range 3 {
		f, _, err := s.Create(Meta{Command: "x"})
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := s.Prune(0, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	f, id, err := s.Create(Meta{Command: "y"})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if id != "4" {
		t.Errorf("id after prune = %s, want 4", id)
	}
}

// TestParseRef: an artifact is named by its id or as the notice prints it; nothing else gets through.
func TestParseRef(t *testing.T) {
	for ref, want := range map[string]string{"17": "17", "artifact://17": "17", "007": "007"} {
		if got, err := ParseRef(ref); err != nil || got != want {
			t.Errorf("ParseRef(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for _, ref := range []string{"", "../x", "artifact://", "artifact://x", "artifact://../1", "artifact:/1",
		"ARTIFACT://1", "artifact://artifact://1", "artifact:// 1", "1 ", "x"} {
		if _, err := ParseRef(ref); !errors.Is(err, ErrMalformedID) || !strings.Contains(err.Error(), strconv.Quote(ref)) {
			t.Errorf("ParseRef(%q): %v, want a malformed-id error quoting it", ref, err)
		}
	}
}
