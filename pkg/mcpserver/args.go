package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/screen"
)

// The server checks a call's arguments itself (README "MCP server"): a broken argument gets an isError
// result whose text is one sentence naming the argument, what it must be and what was given, e.g.
// `timeout must be a number of seconds ≥ 0, got "soon"`, never a JSON-schema validator's text, which a
// model cannot act on. Each tool still declares its input schema; the checks here are that schema's.
//
// An optional argument given as null counts as left out (models write null for "none"); a required one
// given as null is an error.

// What each kind of argument must be, as the error sentences say it.
const (
	mustString  = "must be a string"
	mustSeconds = "must be a number of seconds ≥ 0"
	mustLines   = "must be a whole number of lines ≥ 0"
	mustBool    = "must be true or false"
	mustTaskID  = `must be a task id: the digits bash returned, as a string ("7") or a number (7)`
	mustSandbox = "must be " + request.WantSandbox
	mustSize    = "must be a whole number from 2 to 1000"
	mustKeys    = `must be a list of key names (["Enter"], ["C-c"]) or one string of them ("Enter,C-c")`
	mustStdin   = `must be "pipe" (a pipe that bash_input writes to) or left out`
)

// args reads the arguments of one call: each getter takes one argument out, and [args.check] then says
// what was wrong first, an unknown argument included.
type args struct {
	tool  string
	names []string // the tool's arguments, in the schema's order, for the unknown-argument sentence
	m     map[string]json.RawMessage
	err   error
	// missing says err is a required argument left out: an unknown argument beside it is said too (a
	// model that wrote "cmd" for "command" learns both).
	missing bool
}

// readArgs starts reading raw, the arguments of a call of tool, which takes the arguments names.
func readArgs(tool string, raw json.RawMessage, names ...string) *args {
	a := &args{tool: tool, names: names, m: map[string]json.RawMessage{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return a
	}
	if raw[0] != '{' || json.Unmarshal(raw, &a.m) != nil {
		a.err = fmt.Errorf("the arguments of %s must be a JSON object of named arguments, got %s", tool, request.ShownJSON(raw))
	}
	return a
}

// take removes name from the arguments: its value, whether it was given (null counts as left out), and,
// for a required one, sets the error when it is missing or null.
func (a *args) take(name, must string, required bool) (json.RawMessage, bool) {
	v, ok := a.m[name]
	delete(a.m, name)
	if a.err != nil {
		return nil, false
	}
	given := ok && string(v) != "null"
	if required && !given {
		if ok {
			a.err = fmt.Errorf("%s %s, got null", name, must)
		} else {
			a.err, a.missing = fmt.Errorf("%s is missing: %s needs it, and it %s", name, a.tool, must), true
		}
	}
	return v, given
}

// fail sets the error for a value of name that is not what it must be.
func (a *args) fail(name, must string, v json.RawMessage) {
	if a.err == nil {
		a.err = fmt.Errorf("%s %s, got %s", name, must, request.ShownJSON(v))
	}
}

// string is the string argument name, "" when it is left out.
func (a *args) string(name string, required bool) string {
	v, ok := a.take(name, mustString, required)
	var s string
	if ok && json.Unmarshal(v, &s) != nil {
		a.fail(name, mustString, v)
	}
	return s
}

// seconds is the number argument name (seconds), nil when it is left out.
func (a *args) seconds(name string) *float64 {
	v, ok := a.take(name, mustSeconds, false)
	if !ok {
		return nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f < 0 {
		a.fail(name, mustSeconds, v)
		return nil
	}
	return &f
}

// lines is the whole-number argument name (lines), nil when it is left out. 3.0 is 3.
func (a *args) lines(name string) *int {
	v, ok := a.take(name, mustLines, false)
	if !ok {
		return nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		a.fail(name, mustLines, v)
		return nil
	}
	n := int(f)
	return &n
}

// flag is the boolean argument name, false when it is left out.
func (a *args) flag(name string) bool {
	v, ok := a.take(name, mustBool, false)
	var b bool
	if ok && json.Unmarshal(v, &b) != nil {
		a.fail(name, mustBool, v)
	}
	return b
}

// sandbox is the sandbox argument name (a mode or an object of the config's keys), nil when it is left out.
// Which modes exist and whether it may tighten the server's is the service's to say.
func (a *args) sandbox(name string) *sandbox.Policy {
	v, ok := a.take(name, mustSandbox, false)
	if !ok {
		return nil
	}
	p, err := request.ParseSandbox(v)
	switch {
	case err == nil:
		return p
	case !bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")):
		a.fail(name, mustSandbox, v)
	case a.err == nil:
		a.err = errors.New(strings.ReplaceAll(err.Error(), "\n", "; ")) // the key inside it and what it takes
	}
	return nil
}

// size is the argument name of a terminal's columns or rows, a whole number from 2 to 1000, nil when it is
// left out.
func (a *args) size(name string) *int {
	v, ok := a.take(name, mustSize, false)
	if !ok {
		return nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < screen.MinSize || f > screen.MaxSize {
		a.fail(name, mustSize, v)
		return nil
	}
	n := int(f)
	return &n
}

// keys is the key names argument name: a list of names, or one string of them split at commas as the
// command line's --keys is; each a name screen.Keys knows (an unknown one is named, with the known ones).
func (a *args) keys(name string) []string {
	v, ok := a.take(name, mustKeys, false)
	if !ok {
		return nil
	}
	names, shaped, err := request.ParseKeys(v)
	switch {
	case !shaped:
		a.fail(name, mustKeys, v)
	case err != nil && a.err == nil:
		a.err = fmt.Errorf("%s: %w", name, err)
	}
	return names
}

// stdin is the stdin argument name: request.StdinPipe, or "" when it is left out.
func (a *args) stdin(name string) string {
	v, ok := a.take(name, mustStdin, false)
	var s string
	if ok && (json.Unmarshal(v, &s) != nil || s != request.StdinPipe) {
		a.fail(name, mustStdin, v)
		return ""
	}
	return s
}

// taskID is the task id argument name, given as a string or as a JSON integer (a model may write 7 for
// "7"), as a string. Whether it names a task is the task store's to say.
func (a *args) taskID(name string) string {
	v, ok := a.take(name, mustTaskID, true)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(v, &n) == nil {
		if _, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return n.String()
		}
	}
	a.fail(name, mustTaskID, v)
	return ""
}

// check is the first thing wrong with the arguments: a getter's error, else an argument the tool does
// not take. nil when they are fine.
func (a *args) check() error {
	if (a.err != nil && !a.missing) || len(a.m) == 0 {
		return a.err
	}
	unknown := make([]string, 0, len(a.m))
	for name := range a.m {
		unknown = append(unknown, name)
	}
	slices.Sort(unknown)
	takes := "no arguments"
	if len(a.names) > 0 {
		takes = "only " + strings.Join(a.names, ", ")
	}
	noun := "argument"
	if len(unknown) > 1 {
		noun = "arguments"
	}
	quoted := make([]string, len(unknown))
	for i, u := range unknown {
		quoted[i] = strconv.Quote(u)
	}
	unknownErr := fmt.Errorf("unknown %s %s: %s takes %s", noun, strings.Join(quoted, ", "), a.tool, takes)
	if a.err != nil {
		return fmt.Errorf("%w; %v", a.err, unknownErr)
	}
	return unknownErr
}
