package run

import (
	"os/exec"
	"path/filepath"
)

// FindShell resolves the shell to run: path when set (a name is looked up in PATH), else bash from PATH,
// else /bin/sh (reference §3.7). The error wraps [ErrShellNotFound].
func FindShell(path string) (string, error) {
	if path == "" {
		if p, err := exec.LookPath("bash"); err == nil {
			return absPath(p), nil
		}
		path = "/bin/sh"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", startError(ErrShellNotFound, path, err)
	}
	return absPath(p), nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
