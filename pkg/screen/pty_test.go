//go:build linux

package screen

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyRun is a real program on a pseudo-terminal of 80×24 whose output feeds a Terminal and whose
// terminal queries the Terminal answers, as the supervisor does it.
type ptyRun struct {
	term   *Terminal
	master *os.File
	cmd    *exec.Cmd
	pumped chan struct{}
}

func startPty(t *testing.T, name string, args ...string) *ptyRun {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s: %v", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "PS1=$ ", "PYTHONSTARTUP=")
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	r := &ptyRun{master: master, cmd: cmd, pumped: make(chan struct{})}
	r.term = New(80, 24, func(p []byte) { _, _ = master.Write(p) })
	go func() {
		defer close(r.pumped)
		_, _ = io.Copy(r.term, master) // ends with EIO once the program and its children are gone
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = master.Close()
		<-r.pumped
		r.term.Close()
	})
	return r
}

// await polls the screen until it holds want (a bounded wait for a real program, not a timing check).
func (r *ptyRun) await(t *testing.T, want string) Screen {
	t.Helper()
	var s Screen
	for range 600 {
		if s = r.term.Snapshot(); strings.Contains(s.Text, want) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the screen never showed %q:\n%s", want, s.Text)
	return s
}

func (r *ptyRun) keys(t *testing.T, names ...string) {
	t.Helper()
	b, err := Keys(names, r.term.KeyMode())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.master.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestPtyPythonREPL(t *testing.T) {
	r := startPty(t, "python3", "-q")
	s := r.await(t, ">>>") // the row is right-trimmed
	if !s.Showing() || s.AltScreen {
		t.Errorf("the prompt does not show: %+v", s)
	}
	if _, err := r.master.Write([]byte("6*7\r")); err != nil {
		t.Fatal(err)
	}
	s = r.await(t, "42\n>>>")
	if !strings.HasSuffix(s.Text, ">>> 6*7\n42\n>>>") || !s.Showing() {
		t.Errorf("screen:\n%s", s.Text)
	}
	if strings.ContainsAny(s.Text, "\x1b\r") {
		t.Errorf("escape or CR on the screen: %q", s.Text)
	}
	// Up recalls the line (readline's keys, in the mode it set), Enter runs it again.
	r.keys(t, "Up", "Enter")
	r.await(t, "42\n>>> 6*7\n42")
	r.keys(t, "C-d")
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("python after C-d: %v", err)
	}
}

func TestPtyCursorPositionQuery(t *testing.T) {
	r := startPty(t, "bash", "--norc", "--noprofile", "-c",
		`printf 'ab\n\e[6n'; IFS= read -rsd R -t 3 p; echo "pos=${p#*[}"; read -r -p "Name: " n; echo "hello $n"`)
	s := r.await(t, "pos=")
	if !strings.Contains(s.Text, "pos=2;1") {
		t.Errorf("no position answered: %q", s.Text)
	}
	s = r.await(t, "Name:")
	if !s.Showing() {
		t.Errorf("the read -p prompt does not show: %+v", s)
	}
	if _, err := r.master.Write([]byte("you\r")); err != nil {
		t.Fatal(err)
	}
	r.await(t, "hello you")
	var exit *exec.ExitError
	if err := r.cmd.Wait(); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
}

func TestPtyFullScreen(t *testing.T) {
	// less on the alternate screen (TERM=xterm-256color's smcup is ESC[?1049h), then q brings the main
	// screen back.
	dir := t.TempDir()
	var text strings.Builder
	for i := 1; i <= 200; i++ {
		text.WriteString("row " + strings.Repeat("x", i%50) + "\n")
	}
	file := dir + "/f.txt"
	if err := os.WriteFile(file, []byte("the first line\n"+text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startPty(t, "bash", "--norc", "--noprofile", "-c", "echo before; LESS= less "+file+"; echo after")
	s := r.await(t, "the first line")
	for i := 0; !s.AltScreen && i < 100; i++ {
		time.Sleep(50 * time.Millisecond)
		s = r.term.Snapshot()
	}
	if !s.AltScreen || !s.Showing() || strings.Contains(s.Text, "before") {
		t.Errorf("less: %+v", s)
	}
	r.keys(t, "PageDown")
	r.keys(t, "q")
	s = r.await(t, "after")
	if s.AltScreen || !strings.HasPrefix(s.Text, "before") {
		t.Errorf("after less: %+v", s)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("bash: %v", err)
	}
}
