// Package snapshot captures what the user's interactive bash defines from ~/.bashrc — aliases, functions,
// shell options and the PATH entries the rc adds — into a cached script that agentbash sources before each
// command, so the agent's shell behaves like the user's (reference §3.7). Other exported variables are not
// captured: the environment is the runner's.
//
// The script is generated when the cache is missing or any file it was built from changed (the rc and
// every file the rc sourced, directly or not; their modification times and sizes are the cache key), by
// a helper process ([Main]) that runs the rc in a shell of its own session with no inherited stdio, kills
// it after [Timeout], and leaves nothing the rc started running, whether the snapshot was taken or not,
// nor when agentbash dies meanwhile. Any failure is no snapshot and one warning, and it is cached too, so
// a .bashrc that hangs costs [Timeout] once, not on every run.
package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Timeout bounds the generation of a snapshot (reference §3.7).
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
	Env      []string // environment for the generating shell (BASH_ENV and ENV are dropped); its PATH, the inherited one, is part of the cache key
	Timeout  time.Duration
	// Helper, when set, is the argv that starts the snapshot's helper ([Main]): Helper[0] is executed with
	// the rest, then the shell and the timeout. nil is this executable as `agentbash __snapshot`.
	Helper []string
}

// stamp is the cache key of a snapshot, kept beside it as JSON: the files it was built from, each with
// its modification time and size as they were when the rc was read, and how the generation ended.
type stamp struct {
	Version int         `json:"version"`
	Status  string      `json:"status"` // "ok" or "failed: <reason>"
	Files   []fileStamp `json:"files"`  // the rc first
}

type fileStamp struct {
	Path    string `json:"path"`
	ModTime int64  `json:"mtime"` // Unix nanoseconds; 0 when the file did not exist
	Size    int64  `json:"size"`  // bytes; -1 when the file did not exist
}

// stampVersion changes when the snapshot's format does, so older caches are rebuilt.
const stampVersion = 6 // 6: the options in one command each way; 5: the definitions file beside the script; 4: inherit_errexit and BASH_COMPAT no longer leak

func statFile(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{Path: path, Size: -1}
	}
	return fileStamp{Path: path, ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}
}

// fresh reports whether s is of this version, for rc (the rc file as it is now, first of its files),
// and every other file of s is as it was when s was written.
func (s stamp) fresh(rc fileStamp) bool {
	if s.Version != stampVersion || len(s.Files) == 0 || s.Files[0] != rc {
		return false
	}
	for _, f := range s.Files[1:] {
		if statFile(f.Path) != f {
			return false
		}
	}
	return true
}

// seen holds, by stamp file, the stamp this process last read or wrote there: a long-lived process (rpc,
// mcp), which asks before every command, then checks the files' times without reading and parsing the
// stamp file again. A script removed meanwhile is still seen (it is looked for), and one made again by
// another process for the same files is the same snapshot.
var seen sync.Map // string → stamp

// Ensure returns the path of an up-to-date snapshot of o.RCFile, generating it when the cache is missing
// or any file it was built from has changed. It returns "" and no warning when there is no rc file (no
// extra process is started), and "" with a warning when the snapshot could not be made. A failure is
// cached against the same files: later calls return "" quietly until one of them changes.
func Ensure(ctx context.Context, o Options) (path, warning string) {
	fi, err := os.Stat(o.RCFile)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Sprintf("shell snapshot skipped: %v", err)
		}
		return "", ""
	}
	rcStamp := fileStamp{Path: o.RCFile, ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}
	if o.Timeout <= 0 {
		o.Timeout = Timeout
	}
	// The inherited PATH is part of the key: the snapshot records the PATH entries the rc adds to the one
	// it was given, and an rc may add an entry only when it is missing (`pathmunge`), or add it again at
	// the front where it was already. A snapshot made under a PATH that already held ~/bin would then
	// record nothing, and a run under a PATH without it would miss ~/bin. With the key, each PATH gets
	// what an interactive bash started with that PATH would have. A fixed baseline PATH would be cheaper
	// to cache but would change what the rc itself finds while it runs (`eval "$(brew shellenv)"`,
	// `command -v pyenv && …`), which is the user's real PATH in the shell being reproduced.
	key := sha256.Sum256([]byte(o.Shell + "\x00" + o.RCFile + "\x00" + inheritedPath(o.Env)))
	base := filepath.Join(o.CacheDir, "bash-"+hex.EncodeToString(key[:8]))
	script, stampFile := base+".sh", base+".stamp"

	use := func(cached stamp) (ok bool) {
		switch {
		case !cached.fresh(rcStamp):
			return false
		case cached.Status == "ok" && fileExists(script):
			path = script
			return true
		case cached.Status != "ok":
			return true // warned when it failed; retried when a file it read changes
		}
		return false
	}
	if cached, ok := seen.Load(stampFile); ok && use(cached.(stamp)) {
		return path, ""
	}
	if b, err := os.ReadFile(stampFile); err == nil {
		var cached stamp
		if json.Unmarshal(b, &cached) == nil && use(cached) {
			seen.Store(stampFile, cached)
			return path, ""
		}
	}

	body, defs, sources, genErr := generate(ctx, o)
	if ctx.Err() != nil {
		return "", "" // agentbash was cancelled: nothing learned about the rc file, nothing cached
	}
	// The rc's stamp is the one from before it ran, so an rc edited while it was read is read again next
	// time; the files it sourced are learnt from the run and stamped now.
	st := stamp{Version: stampVersion, Status: "ok", Files: []fileStamp{rcStamp}}
	for _, f := range sources {
		if f != o.RCFile {
			st.Files = append(st.Files, statFile(f))
		}
	}
	if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	if genErr != nil {
		st.Status = "failed: " + genErr.Error()
		if writeStamp(stampFile, st) == nil {
			seen.Store(stampFile, st)
		}
		return "", "shell snapshot of " + o.RCFile + " failed: " + genErr.Error()
	}
	if err := writeAtomic(definitionsFile(script), defs); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	if err := writeAtomic(script, body); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	if err := writeStamp(stampFile, st); err != nil {
		return "", fmt.Sprintf("shell snapshot not cached: %v", err)
	}
	seen.Store(stampFile, st)
	return script, ""
}

func writeStamp(path string, s stamp) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return writeAtomic(path, b)
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

// inheritedPath is the PATH of env ("" when it has none); the last entry wins, as in exec.Cmd.
func inheritedPath(env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return path
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Definitions are the functions and aliases a snapshot defines, by name: a function as `declare -f NAME`
// prints it, an alias's value. A session compares what its command left with them, so that it keeps only
// its own definitions and takes the rc's fresh each command (README "Sessions").
type Definitions struct {
	Functions map[string]string
	Aliases   map[string]string
}

// definitionsFile is where the definitions of the snapshot script are kept: beside it.
func definitionsFile(script string) string {
	return strings.TrimSuffix(script, ".sh") + ".defs"
}

// ReadDefinitions returns the definitions of the snapshot at script, the path [Ensure] returned.
func ReadDefinitions(script string) (Definitions, error) {
	b, err := os.ReadFile(definitionsFile(script))
	if err != nil {
		return Definitions{}, err
	}
	d := Definitions{Functions: map[string]string{}, Aliases: map[string]string{}}
	fields := strings.Split(string(b), "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		switch fields[i] {
		case "F":
			d.Functions[fields[i+1]] = fields[i+2]
		case "A":
			d.Aliases[fields[i+1]] = fields[i+2]
		default:
			return Definitions{}, fmt.Errorf("snapshot definitions %s: unknown record %q", definitionsFile(script), fields[i])
		}
	}
	return d, nil
}
