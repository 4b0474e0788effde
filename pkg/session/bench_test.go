package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSessionCommand is one command of a session as a server runs it: the lease, the prelude, bash
// running `true` from it, Commit and Release; BenchmarkBareCommand is the same bash without a session
// (their difference is what a session costs a command, bash's part included).
func BenchmarkSessionCommand(b *testing.B) {
	s := Store{Dir: filepath.Join(b.TempDir(), "sessions")}
	dir := b.TempDir()
	command(b, s, dir) // the session's first command makes its state
	for b.Loop() {
		command(b, s, dir)
	}
}

func command(b *testing.B, s Store, dir string) {
	l, err := s.Acquire(context.Background(), "s")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Release()
	path, err := l.Prelude(Prelude{Capture: true})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "--", "true")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PWD="+dir, "BASH_ENV="+path)
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	if _, kept, w, err := l.Commit(true); err != nil || !kept {
		b.Fatal(err, w)
	}
}

func BenchmarkBareCommand(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command("bash", "-c", "--", "true")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PWD="+dir)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionOverhead is this process's part alone: the lease, the prelude, Commit of a dump a real
// bash wrote (copied into the dump file as the EXIT trap would append it) and Release.
func BenchmarkSessionOverhead(b *testing.B) {
	s := Store{Dir: filepath.Join(b.TempDir(), "sessions")}
	dir := b.TempDir()
	command(b, s, dir) // one real dump, which the dump file keeps after the lease
	dump, err := os.ReadFile(filepath.Join(s.Dir, "s", dumpFile))
	if err != nil {
		b.Fatal(err)
	}
	dump = dump[len(unwrittenDump):]
	for b.Loop() {
		l, err := s.Acquire(context.Background(), "s")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Prelude(Prelude{Capture: true}); err != nil {
			b.Fatal(err)
		}
		if err := appendFile(l.dump, dump); err != nil {
			b.Fatal(err)
		}
		if _, kept, w, err := l.Commit(true); err != nil || !kept {
			b.Fatal(err, w)
		}
		l.Release()
	}
}

// appendFile appends data to the file at path, as the EXIT trap's `>>` does.
func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}
