// Package config holds agentbash's configuration (reference §4): its keys, their built-in defaults, and the
// checks of each source on its own (a YAML file, the AGENTBASH_* variables), which turn a bad value into
// an error that names where it came from. Layering the sources and the flags over the defaults is the
// CLI's job (cmd/config.go, with viper).
package config

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/adrg/xdg"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/sink"
)

// Config is every key of reference §4. The mapstructure tags are the keys, camelCase; a new field (with its
// default in [Default]) is a new key, with its AGENTBASH_* variable, for the file, the environment and viper.
type Config struct {
	// Timeout is the default wall-clock limit of a command, seconds; clamped to [1, 3600] (reference §3.5).
	Timeout float64 `mapstructure:"timeout"`
	// MaxBytes is the in-memory output window, bytes (reference §3.8).
	MaxBytes int `mapstructure:"maxBytes"`
	// Format is json, text or auto (reference §3.10).
	Format string `mapstructure:"format"`
	// KillGrace is the time between SIGTERM and SIGKILL, seconds (reference §3.7).
	KillGrace float64 `mapstructure:"killGrace"`
	// Session names the session commands run in, "" for none (reference §7.1).
	Session string `mapstructure:"session"`
	// Target is where commands run: "local" (this machine) or a target URI (ssh://…, docker://…, podman://…,
	// kubectl://…, cmd://…; reference §15). "" is local too.
	Target string `mapstructure:"target"`

	Targets     Targets     `mapstructure:"targets"`
	Shell       Shell       `mapstructure:"shell"`
	Artifacts   Artifacts   `mapstructure:"artifacts"`
	Interceptor Interceptor `mapstructure:"interceptor"`
	Result      Result      `mapstructure:"result"`
	Tasks       Tasks       `mapstructure:"tasks"`
	MCP         MCP         `mapstructure:"mcp"`
	Sandbox     Sandbox     `mapstructure:"sandbox"`
}

// Sandbox is the sandbox of every command (reference §13): for a server (rpc, mcp) the floor its requests
// can only tighten. Paths stay as written (`~/…`): the place resolves them against its own home.
type Sandbox struct {
	// Mode is off (the default: nothing confined), workspace-write or read-only.
	Mode sandbox.Mode `mapstructure:"mode"`
	// Network is off (the default in a sandbox), proxy (only AllowHosts, through a proxy) or on.
	Network sandbox.Network `mapstructure:"network"`
	// Writable is the paths writable in workspace-write besides the cwd and a private /tmp.
	Writable CommaList `mapstructure:"writable"`
	// DenyRead is the paths a sandboxed command sees as absent or empty.
	DenyRead CommaList `mapstructure:"denyRead"`
	// CacheDirs is the tool caches writable in workspace-write.
	CacheDirs CommaList `mapstructure:"cacheDirs"`
	// AllowHosts is the host:port patterns network: proxy reaches.
	AllowHosts CommaList `mapstructure:"allowHosts"`
}

// Policy is s as the sandbox's policy. The allowed hosts are network proxy's: with another network it has
// none, so a list in the config file or the environment waits for the commands that turn the proxy on
// (--sandbox-network proxy), and one turning it off is not refused for the list.
func (s Sandbox) Policy() sandbox.Policy {
	p := sandbox.Policy{Mode: s.Mode, Network: s.Network, Writable: slices.Clone(s.Writable),
		DenyRead: slices.Clone(s.DenyRead), CacheDirs: slices.Clone(s.CacheDirs)}
	if s.Network == sandbox.NetworkProxy {
		p.AllowHosts = slices.Clone(s.AllowHosts)
	}
	return p
}

// CommaList is a list whose environment form is split at commas only, not at blanks: its items are paths
// or host patterns, and a path may hold a blank.
type CommaList []string

// Targets configures who may name a target (reference §15).
type Targets struct {
	// Allowed lists the target URIs (or ssh://host patterns) an rpc or MCP request may name; the configured
	// target is always allowed, cmd:// never from a request.
	Allowed []string `mapstructure:"allowed"`
}

// MCP configures `agentbash mcp` (README "MCP server").
type MCP struct {
	// MaxBytes is the output window of the MCP server's calls, bytes, in place of maxBytes (the text
	// travels twice, as content and as structuredContent.output, and clients cut large results on their
	// own); --max-bytes given to `agentbash mcp` overrides it.
	MaxBytes int `mapstructure:"maxBytes"`
}

// Shell configures the shell that runs commands (reference §3.7).
type Shell struct {
	// Path is the shell; "" means bash from PATH, else /bin/sh.
	Path string `mapstructure:"path"`
	// Prefix is shell text put before the command with a space (`set -o pipefail;`): the script becomes
	// `<prefix> <command>`.
	Prefix string `mapstructure:"prefix"`
	// Wrapper is an argv put before the shell itself (`nice -n 10` runs `nice -n 10 bash -c <command>`),
	// so it covers the whole command, `cd x && make` included. Empty: the shell runs directly.
	Wrapper Argv `mapstructure:"wrapper"`
	// Snapshot sources the user's aliases, functions and options from ~/.bashrc.
	Snapshot bool `mapstructure:"snapshot"`
	// Env is added to the command's environment after the non-interactive defaults.
	Env map[string]string `mapstructure:"env"`
}

// Tasks configures background tasks (reference §8).
type Tasks struct {
	// Dir holds the task records; "" is $XDG_STATE_HOME/agentbash/tasks.
	Dir string `mapstructure:"dir"`
	// MaxLifetime is the most a task runs, seconds, before it is killed as by `kill`; 0 is no limit.
	MaxLifetime float64 `mapstructure:"maxLifetime"`
}

// Artifacts configures where full outputs are kept (reference §3.6).
type Artifacts struct {
	// Dir is the artifact directory; "" means $XDG_STATE_HOME/agentbash/artifacts.
	Dir string `mapstructure:"dir"`
	// MaxBytes caps one artifact file, bytes.
	MaxBytes int64 `mapstructure:"maxBytes"`
}

// Interceptor configures the guard of reference §3.3.
type Interceptor struct {
	Enabled      bool             `mapstructure:"enabled"`
	Tools        []string         `mapstructure:"tools"`
	DefaultRules bool             `mapstructure:"defaultRules"`
	Rules        []intercept.Rule `mapstructure:"rules"`
}

// Result configures result shaping (reference §3.9).
type Result struct {
	// NonZeroExit is "error" (a non-zero exit is an error result) or "report" (plain data).
	NonZeroExit string `mapstructure:"nonZeroExit"`
}

// Limits and defaults (reference §3.5, §3.6, §3.7, §3.8).
const (
	DefaultTimeout          = request.DefaultTimeout
	DefaultMaxBytes         = sink.DefaultMaxBytes
	DefaultKillGrace        = 3.0
	DefaultArtifactMaxBytes = sink.DefaultArtifactMaxBytes
	DefaultMaxLifetime      = 86400.0 // tasks.maxLifetime, seconds (reference §8)
	DefaultMCPMaxBytes      = 20480   // mcp.maxBytes (README "MCP server")
	MaxWindowBytes          = request.MaxWindowBytes
	MaxKillGrace            = request.MaxKillGrace
)

// Default returns the built-in defaults.
func Default() Config {
	return Config{
		Timeout:     DefaultTimeout,
		MaxBytes:    DefaultMaxBytes,
		Format:      "auto",
		KillGrace:   DefaultKillGrace,
		Shell:       Shell{Snapshot: true, Env: map[string]string{}, Wrapper: Argv{}},
		Artifacts:   Artifacts{MaxBytes: DefaultArtifactMaxBytes},
		Interceptor: Interceptor{Tools: []string{}, DefaultRules: true, Rules: []intercept.Rule{}},
		Result:      Result{NonZeroExit: result.NonZeroError},
		Tasks:       Tasks{MaxLifetime: DefaultMaxLifetime},
		MCP:         MCP{MaxBytes: DefaultMCPMaxBytes},
		Target:      "local",
		Targets:     Targets{Allowed: []string{}},
		Sandbox: Sandbox{Mode: sandbox.ModeOff, Network: sandbox.NetworkOff, Writable: CommaList{},
			DenyRead: slices.Clone(sandbox.DefaultDenyRead), CacheDirs: slices.Clone(sandbox.DefaultCacheDirs),
			AllowHosts: CommaList{}},
	}
}

// Defaults returns every key with its default value, as dotted key → value (e.g. "artifacts.maxBytes"),
// for a key/value loader. It is derived from [Default] and the mapstructure tags, so no key is missed.
func Defaults() map[string]any {
	out := map[string]any{}
	flatten(reflect.ValueOf(Default()), "", out)
	return out
}

func flatten(v reflect.Value, prefix string, out map[string]any) {
	t := v.Type()
	for i := range t.NumField() {
		key := prefix + t.Field(i).Tag.Get("mapstructure")
		if f := v.Field(i); f.Kind() == reflect.Struct {
			flatten(f, key+".", out)
		} else {
			out[key] = f.Interface()
		}
	}
}

// KeyError is a bad value of one key.
type KeyError struct {
	Key string // dotted, as in the file: "artifacts.maxBytes"
	Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

// Validate checks values that have a fixed set or range; the error is a *KeyError naming the key. The
// timeout is not an error when out of range: it is clamped (see request.ClampTimeout). Interceptor rules are
// checked by intercept.New, one warning per broken rule.
func (c Config) Validate() error {
	bad := func(key, format string, a ...any) error { return &KeyError{Key: key, Msg: fmt.Sprintf(format, a...)} }
	switch {
	case math.IsNaN(c.Timeout) || math.IsInf(c.Timeout, 0):
		return bad("timeout", "must be a finite number of seconds, got %v", c.Timeout)
	case !slices.Contains([]string{"json", "text", "auto"}, c.Format):
		return bad("format", "must be json, text or auto, got %q", c.Format)
	case c.MaxBytes < 1 || c.MaxBytes > MaxWindowBytes:
		return bad("maxBytes", "must be from 1 to %d bytes, got %d", MaxWindowBytes, c.MaxBytes)
	case !(c.KillGrace >= 0 && c.KillGrace <= MaxKillGrace): // NaN fails too
		return bad("killGrace", "must be from 0 to %v seconds, got %v", MaxKillGrace, c.KillGrace)
	case c.MCP.MaxBytes < 1 || c.MCP.MaxBytes > MaxWindowBytes:
		return bad("mcp.maxBytes", "must be from 1 to %d bytes, got %d", MaxWindowBytes, c.MCP.MaxBytes)
	case c.Artifacts.MaxBytes < 1:
		return bad("artifacts.maxBytes", "must be at least 1, got %d", c.Artifacts.MaxBytes)
	case !(c.Tasks.MaxLifetime >= 0) || math.IsInf(c.Tasks.MaxLifetime, 0):
		return bad("tasks.maxLifetime", "must be a number of seconds ≥ 0 (0 for no limit), got %v", c.Tasks.MaxLifetime)
	case c.Session != "" && !session.Valid(c.Session):
		return bad("session", "%s, got %q", session.NameRule, c.Session)
	case !slices.Contains([]string{result.NonZeroError, result.NonZeroReport}, c.Result.NonZeroExit):
		return bad("result.nonZeroExit", "must be error or report, got %q", c.Result.NonZeroExit)
	}
	if len(c.Shell.Wrapper) > 0 && c.Shell.Wrapper[0] == "" {
		return bad("shell.wrapper", "the first word must be the program to run, got an empty word")
	}
	for _, w := range c.Shell.Wrapper {
		if strings.ContainsRune(w, 0) {
			return bad("shell.wrapper", "a word holds a NUL byte: %q", w)
		}
	}
	for k := range c.Shell.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return bad("shell.env", "invalid variable name %q", k)
		}
	}
	err := c.Sandbox.Policy().Check()
	if err == nil { // every host entry is checked where it is written, whatever the network
		err = sandbox.Policy{Network: sandbox.NetworkProxy, AllowHosts: c.Sandbox.AllowHosts}.Check()
	}
	return sandboxError(err)
}

// sandboxError is the first of the sandbox policy's errors (each "sandbox.KEY: what is wrong") as a
// *KeyError naming its key; nil for none.
func sandboxError(err error) error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		err = joined.Unwrap()[0]
	}
	key, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok || !strings.HasPrefix(key, "sandbox.") {
		key, msg = "sandbox", err.Error()
	}
	return &KeyError{Key: key, Msg: msg}
}

// ArtifactDir is the artifact directory: c.Artifacts.Dir with `~` expanded, else
// $XDG_STATE_HOME/agentbash/artifacts.
func (c Config) ArtifactDir() string {
	if c.Artifacts.Dir != "" {
		return ExpandHome(c.Artifacts.Dir)
	}
	return filepath.Join(xdg.StateHome, "agentbash", "artifacts")
}

// TaskDir is the task directory: c.Tasks.Dir with `~` expanded, else $XDG_STATE_HOME/agentbash/tasks.
func (c Config) TaskDir() string {
	if c.Tasks.Dir != "" {
		return ExpandHome(c.Tasks.Dir)
	}
	return filepath.Join(xdg.StateHome, "agentbash", "tasks")
}

// ExpandHome expands a leading `~` or `~/` to the home directory ([run.ExpandHome], reference §3.4). With no
// home directory known ($HOME unset) the path is kept as written: a config path is not a working
// directory, and whatever then fails to open it says which path it was.
func ExpandHome(p string) string {
	home, _ := os.UserHomeDir()
	if expanded, err := run.ExpandHome(p, home); err == nil {
		return expanded
	}
	return p
}

// SessionDir is where sessions keep their state: $XDG_STATE_HOME/agentbash/sessions (reference §7.1).
func SessionDir() string {
	return filepath.Join(xdg.StateHome, "agentbash", "sessions")
}

// SnapshotDir is where shell snapshots are cached: $XDG_CACHE_HOME/agentbash/snapshots.
func SnapshotDir() string {
	return filepath.Join(xdg.CacheHome, "agentbash", "snapshots")
}

// DefaultFile is the config file read when none is named: $XDG_CONFIG_HOME/agentbash/config.yaml.
func DefaultFile() string {
	return filepath.Join(xdg.ConfigHome, "agentbash", "config.yaml")
}
