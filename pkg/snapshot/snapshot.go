// Package snapshot captures the user's bash aliases, functions and shell options from ~/.bashrc into a
// cached script that agentbash sources before each command, so the agent's shell behaves like the
// user's (SPEC §3.7). Exported variables are not captured: the environment is the runner's.
//
// The script is generated once per change of the rc file (its modification time and size are the cache
// key), in its own session with no inherited stdio, and killed after [Timeout]; a failure is cached too, so
// a .bashrc that hangs costs [Timeout] once, not on every run.
package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Timeout bounds the generation of a snapshot (SPEC §3.7).
const Timeout = 2 * time.Second

// CommonTools are names whose aliases and functions are left out of the snapshot: an agent's `ls`, `grep`
// or `rm` must behave as documented, not as the user's alias (after pi's exclusion list).
var CommonTools = []string{
	"ls", "dir", "vdir", "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "find", "fd",
	"locate", "sed", "awk", "perl", "cp", "mv", "rm", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "pwd",
	"readlink", "stat", "cut", "sort", "uniq", "xargs", "tee", "tr", "basename", "dirname", "cd", "echo",
	"printf", "test", "git", "diff", "wc", "env", "which", "command", "type", "source", "exec",
}

// Options says where the rc file and the cache are.
type Options struct {
	Shell    string   // absolute path of bash
	RCFile   string   // usually ~/.bashrc
	CacheDir string   // directory for snapshot files (created 0700)
	Env      []string // environment for the generating shell (BASH_ENV and ENV are dropped)
	Timeout  time.Duration
}

// Ensure returns the path of an up-to-date snapshot of o.RCFile, generating it when the cache is missing
// or stale. It returns "" and no warning when there is no rc file (no extra process is started), and ""
// with a warning when the snapshot could not be made. A failure is cached against the rc file's
// modification time and size: later calls return "" quietly until the file changes.
func Ensure(ctx context.Context, o Options) (path, warning string) {
	fi, err := os.Stat(o.RCFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", ""
		}
		return "", fmt.Sprintf("shell snapshot skipped: %v", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = Timeout
	}
	key := sha256.Sum256([]byte(o.Shell + "\x00" + o.RCFile))
	base := filepath.Join(o.CacheDir, "bash-"+hex.EncodeToString(key[:8]))
	script, stampFile := base+".sh", base+".stamp"
	stamp := fmt.Sprintf("%d %d", fi.ModTime().UnixNano(), fi.Size())

	if b, err := os.ReadFile(stampFile); err == nil {
		cachedStamp, status, _ := strings.Cut(string(b), "\n")
		if cachedStamp == stamp {
			if status == "ok" && fileExists(script) {
				return script, ""
			}
			if strings.HasPrefix(status, "failed: ") {
				return "", "" // warned when it failed; retried when the rc file changes
			}
		}
	}

	body, genErr := generate(ctx, o)
	if ctx.Err() != nil {
		return "", "" // agentbash was cancelled: nothing learned about the rc file, nothing cached
	}
	if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	if genErr != nil {
		_ = writeAtomic(stampFile, []byte(stamp+"\nfailed: "+genErr.Error()))
		return "", "shell snapshot of " + o.RCFile + " failed: " + genErr.Error()
	}
	if err := writeAtomic(script, body); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	if err := writeAtomic(stampFile, []byte(stamp+"\nok")); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	return script, ""
}

// dumpScript sources the rc file in an interactive-looking shell (so `case $- in *i*` guards pass) with
// its output discarded, then prints the functions, options and aliases as a script.
const dumpScript = `
source "$AGENTBASH_RC" </dev/null >/dev/null 2>&1
skip=" $AGENTBASH_SKIP "
echo '# agentbash shell snapshot: aliases, functions and options of '"$AGENTBASH_RC"
for f in $(compgen -A function); do
  case "$f" in _*) continue;; esac
  case "$skip" in *" $f "*) continue;; esac
  declare -f -- "$f"
done
shopt -p 2>/dev/null | grep -v -E ' (login_shell|restricted_shell|progcomp_alias)$'
set -o | while read -r name state; do
  [ "$state" = on ] || continue
  case "$name" in monitor|history|histexpand|emacs|vi|onecmd|restricted|interactive-comments|errexit|nounset|xtrace|verbose|noexec) continue;; esac
  echo "set -o $name"
done
for a in "${!BASH_ALIASES[@]}"; do
  case "$skip" in *" $a "*) continue;; esac
  printf 'alias -- %s=%q\n' "$a" "${BASH_ALIASES[$a]}"
done
echo 'shopt -s expand_aliases'
echo 'unset BASH_ENV'
`

// generate runs the dump in its own session, with no inherited stdio, killed after o.Timeout.
func generate(ctx context.Context, o Options) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.Shell, "--norc", "--noprofile", "-i", "-c", dumpScript)
	var env []string
	for _, kv := range o.Env {
		if k, _, _ := strings.Cut(kv, "="); k != "BASH_ENV" && k != "ENV" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "AGENTBASH_RC="+o.RCFile, "AGENTBASH_SKIP="+strings.Join(CommonTools, " "))
	var out bytes.Buffer
	cmd.Stdout = &out // stdin and stderr are /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 200 * time.Millisecond // a background job of the rc holding stdout cannot hang us
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("timed out after %s", o.Timeout)
	}
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
