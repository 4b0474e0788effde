package sandbox

import (
	"os/exec"
	"syscall"
)

// stage confines this process to the spec's writes and execs its argv; it returns only on failure.
func stage(spec StageSpec) error {
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		return err
	}
	if err := confineWrites(spec.Writable); err != nil {
		return err
	}
	return syscall.Exec(path, spec.Argv, spec.Env)
}
