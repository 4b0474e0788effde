package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/texts"
)

func TestResolveDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	os.WriteFile(file, nil, 0o600)
	t.Chdir(tmp)
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", tmp, ""},
		{".", tmp, ""},
		{"~", tmp, ""},
		{"~/", tmp, ""},
		{tmp + "/./", tmp, ""},
		{"/nonexistent", "", "Working directory does not exist: /nonexistent"},
		{"f", "", "Working directory is not a directory: " + file},
		{"missing/x", "", "Working directory does not exist: " + filepath.Join(tmp, "missing/x")},
		{"a\x00b", "", "Working directory holds a NUL byte (at byte 1), which no path can hold: pass the directory's name without it"},
	} {
		got, err := ResolveDir(tc.in, tmp)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ResolveDir(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ResolveDir(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// Started from a directory that was removed: the directory is $PWD, else the path the kernel keeps
// (reference §3.4), and it does not exist; never a bare getwd error.
func TestResolveDirRemovedStartDir(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pwd      func(dir string) string // "" unsets PWD
		recreate bool
		want     func(dir string) string
	}{
		{"PWD names it", func(d string) string { return d }, false, func(d string) string { return texts.DirNotExist + d }},
		{"PWD unset", func(string) string { return "" }, false, func(d string) string { return texts.DirNotExist + d }},
		{"PWD relative", func(string) string { return "rel" }, false, func(d string) string { return texts.DirNotExist + d }},
		{"made again", func(d string) string { return d }, true, func(d string) string { return texts.DirReplaced + d + texts.DirReplacedHint }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "gone")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			if tc.recreate {
				os.Mkdir(dir, 0o755)
			}
			t.Setenv("PWD", tc.pwd(dir))
			if tc.pwd(dir) == "" {
				os.Unsetenv("PWD")
			}
			got, err := ResolveDir("", "/home")
			if err == nil || err.Error() != tc.want(dir) || got != dir {
				t.Errorf("ResolveDir = %q, %v; want %q, %q", got, err, dir, tc.want(dir))
			}
			if got, err := ResolveDir("sub", "/home"); err == nil || got != filepath.Join(dir, "sub") {
				t.Errorf("ResolveDir(sub) = %q, %v", got, err)
			}
		})
	}
}

func TestResolveDirNotAccessible(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can enter any directory")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	os.Mkdir(dir, 0o000)
	if _, err := ResolveDir(dir, ""); err == nil || !strings.Contains(err.Error(), "not accessible") {
		t.Errorf("err = %v", err)
	}
}

// One `~` expansion for the working directory and for config paths; without a home directory it says so.
func TestExpandHome(t *testing.T) {
	for _, tc := range []struct {
		path, home, want string
		noHome           bool
	}{
		{"~", "/h", "/h", false},
		{"~/", "/h", "/h", false},
		{"~/a/../b", "/h", "/h/b", false},
		{"~user/x", "/h", "~user/x", false},
		{"a/~", "/h", "a/~", false},
		{"/abs", "", "/abs", false},
		{"", "", "", false},
		{"~", "", "~", true},
		{"~/x", "", "~/x", true},
	} {
		got, err := ExpandHome(tc.path, tc.home)
		if got != tc.want || errors.Is(err, ErrNoHome) != tc.noHome || (err != nil) != tc.noHome {
			t.Errorf("ExpandHome(%q, %q) = %q, %v; want %q (no home: %v)", tc.path, tc.home, got, err, tc.want, tc.noHome)
		}
	}
}

// ResolveDir reports a `~` it cannot expand as the working directory's error, in words.
func TestResolveDirNoHome(t *testing.T) {
	_, err := ResolveDir("~/src", "")
	if want := "Working directory ~/src: cannot expand ~: no home directory ($HOME is not set)"; err == nil ||
		err.Error() != want || !errors.Is(err, ErrNoHome) {
		t.Errorf("err = %v, want %q wrapping ErrNoHome", err, want)
	}
}
