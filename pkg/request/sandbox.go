package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sandbox"
)

// SandboxKeys are the keys of a request's sandbox object (docs/reference.md §13), the config's.
var SandboxKeys = []string{"mode", "network", "writable", "denyRead", "cacheDirs", "allowHosts"}

// WantSandbox says in words what a request's sandbox field takes.
const WantSandbox = "a mode (\"off\", \"workspace-write\" or \"read-only\") or an object with the keys mode, " +
	"network, writable, denyRead, cacheDirs and allowHosts"

// ParseSandbox reads the sandbox field of an rpc request or an MCP call (docs/reference.md §13): a mode string,
// or an object with the config's keys, each of its type; null is none (nil). It reads what
// sandbox.Policy's UnmarshalJSON reads, with errors a caller (or a model) can act on, each naming the field
// and what was given: an unknown key (exact names: denyread is not denyRead), a value of the wrong type. Whether
// a mode or network exists, and whether the policy may tighten the server's, is the service's to say.
func ParseSandbox(raw json.RawMessage) (*sandbox.Policy, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var mode string
	if raw[0] == '"' && json.Unmarshal(raw, &mode) == nil {
		return &sandbox.Policy{Mode: sandbox.Mode(mode)}, nil
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, fmt.Errorf("sandbox: want %s, got %s", WantSandbox, ShownJSON(raw))
	}
	var p sandbox.Policy
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		var err error
		switch k {
		case "mode":
			err = json.Unmarshal(v, &p.Mode)
		case "network":
			err = json.Unmarshal(v, &p.Network)
		case "writable":
			err = json.Unmarshal(v, &p.Writable)
		case "denyRead":
			err = json.Unmarshal(v, &p.DenyRead)
		case "cacheDirs":
			err = json.Unmarshal(v, &p.CacheDirs)
		case "allowHosts":
			err = json.Unmarshal(v, &p.AllowHosts)
		default:
			errs = append(errs, fmt.Errorf("sandbox: unknown key %q (its keys: %s)", k, strings.Join(SandboxKeys, ", ")))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sandbox.%s: want %s, got %s", k, wantSandboxKey[k], ShownJSON(v)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &p, nil
}

// wantSandboxKey says in words what each key of the sandbox object takes.
var wantSandboxKey = map[string]string{
	"mode":       "a string (off, workspace-write or read-only)",
	"network":    "a string (off, proxy or on)",
	"writable":   "an array of paths (strings)",
	"denyRead":   "an array of paths (strings)",
	"cacheDirs":  "an array of paths (strings)",
	"allowHosts": "an array of host:port patterns (strings)",
}

// ShownJSON is a JSON value as an error sentence quotes it: compact, at most 60 bytes (cut at a rune).
func ShownJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		b.Reset()
		b.Write(v)
	}
	s := b.String()
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
