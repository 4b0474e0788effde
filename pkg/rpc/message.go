package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/session"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// Request types (the "type" of a request line, reference §7.2).
const (
	TypeBash  = "bash"
	TypeAbort = "abort_bash"
	TypeStart = "start"
	// TypeOutput, TypeKill, TypeWait and TypeTasks are the task commands of reference §8.
	TypeOutput = "output"
	// TypeInput writes to a running task's input and reads its answer (reference §14).
	TypeInput = "input"
	TypeKill  = "kill"
	TypeWait  = "wait"
	TypeTasks = "tasks"
	// The place's stores, as another agentbash reaches them through a target (README "Targets"): tasks,
	// sessions and artifacts kept where the commands run.
	TypeTasksPrune    = "tasks_prune"
	TypeSessionList   = "session_list"
	TypeSessionShow   = "session_show"
	TypeSessionRemove = "session_rm"
	TypeArtifact      = "artifact"
	TypeArtifactPath  = "artifact_path"
	TypeArtifactList  = "artifact_list"
	TypeArtifactPrune = "artifact_prune"
	// TypeHello is the handshake of a target's connection (hello.go).
	TypeHello = "hello"
)

// Types of the lines the server writes.
const (
	TypeResponse = "response"
	TypeUpdate   = "update"
	TypeTaskDone = "task_done"
)

// MaxLine is the longest request line read, bytes without its newline (reference §7.2): a longer one is an
// error response, not a crash.
const MaxLine = 16 << 20

// null is the id of a request that has none, or whose line could not be parsed.
var null = json.RawMessage("null")

// Response is the answer to one request: Data is the result (or the object the task command prints) when
// Success, else Error says what was wrong.
type Response struct {
	ID      json.RawMessage `json:"id"`
	Type    string          `json:"type"`              // TypeResponse
	Command string          `json:"command,omitempty"` // the request's type, when it was known
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Parts is the result's text in the parts it was made of, for a caller that is another agentbash (one
	// that said hello): what the text alone cannot give back without parsing it (pkg/target).
	Parts *Parts `json:"parts,omitempty"`
}

// Parts is a result's text as result.Text joins it: the output, then the footer lines (status line,
// notices, hints).
type Parts struct {
	Output string   `json:"output"`
	Footer []string `json:"footer"`
}

// Update is a streamed request's live view: the sanitized tail of its output (at most maxBytes bytes) and
// the totals so far, counted over the sanitized text.
type Update struct {
	ID         json.RawMessage `json:"id"`
	Type       string          `json:"type"` // TypeUpdate
	Text       string          `json:"text"`
	TotalBytes int64           `json:"totalBytes"`
	TotalLines int64           `json:"totalLines"`
}

// TaskDone is pushed once when a task this server started ended: its final result, as `wait` prints it.
type TaskDone struct {
	Type   string        `json:"type"` // TypeTaskDone
	TaskID string        `json:"taskId"`
	Data   result.Result `json:"data"`
}

// Bash is a bash or start request: the command with its run options (fields left out take the server's
// defaults) and how it runs.
type Bash struct {
	request.Command
	Background bool    `json:"background,omitempty"` // start it as a task (as start)
	Yield      float64 `json:"yield,omitempty"`      // seconds; hand it over as a task after them, 0: never
	Stream     bool    `json:"stream,omitempty"`     // send update events while it runs
}

// Abort is an abort_bash request. Target is the canonical id of the request to abort; nil (no target)
// aborts all. A null target is refused by Decode.
type Abort struct {
	Target json.RawMessage
	// KillGrace, when set, is the grace of the aborted commands' kill, seconds, in place of the configured
	// one: a target's caller that is itself ending (its own caller went away) asks for the short one.
	KillGrace *float64
}

// Output is an output request: what task TaskID printed since Reader's previous read, waiting up to Wait
// seconds for something new.
type Output struct {
	TaskID string
	Wait   float64
	Reader string
}

// Input is an input request: In goes to task TaskID's input (a stdin pipe or a terminal), then the
// default reader reads what it printed once its output settled, waiting up to Wait seconds.
type Input struct {
	TaskID string
	In     console.Request
	Wait   float64
}

// Kill is a kill request: the task's tree gets Signal first.
type Kill struct {
	TaskID string
	Signal syscall.Signal
}

// Wait is a wait request: the task's final result, or its running status after Timeout seconds (0: none).
type Wait struct {
	TaskID  string
	Timeout float64
}

// Tasks is a tasks request: All lists every task kept, not only recent ones.
type Tasks struct {
	All bool
}

// Store is a request to the place's stores (TypeTasksPrune … TypeArtifactPrune): Op is its type.
type Store struct {
	Op         string
	Name       string  // session_show, session_rm
	Values     bool    // session_show
	ArtifactID string  // artifact, artifact_path
	Raw        bool    // artifact
	Offset     int64   // artifact: the first byte of the printed artifact to send
	Limit      int64   // artifact: at most this many bytes (0: MaxArtifactChunk)
	OlderThan  float64 // tasks_prune, artifact_prune: seconds
}

// MaxArtifactChunk is the most bytes of an artifact one artifact response carries.
const MaxArtifactChunk = 4 << 20

// Message is one decoded request: its canonical id, its type and the fields of that type (exactly one of
// the pointers is set).
type Message struct {
	ID   json.RawMessage // canonical JSON ("null" when there was none); equal ids have equal bytes
	Type string
	// Target is the place the request is for (README "Targets"): a target URI, "" for the server's own.
	// abort_bash and hello have none (an abort's target is the id of the request to abort).
	Target string
	Bash   *Bash // bash and start
	Abort  *Abort
	Output *Output
	Input  *Input
	Kill   *Kill
	Wait   *Wait
	Tasks  *Tasks
	Store  *Store
	Hello  *Hello
}

// DecodeError is a request that cannot be served: the id (null when the line could not be parsed), the
// type when it was known, and what was wrong, in words.
type DecodeError struct {
	ID   json.RawMessage
	Type string
	Msg  string
}

func (e *DecodeError) Error() string { return e.Msg }

// The wire forms of the requests. Every one knows id and type; the key check refuses anything else.
type (
	bashWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		request.Command
		Background bool     `json:"background"`
		Yield      *float64 `json:"yield"`
		Stream     bool     `json:"stream"`
	}
	startWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		request.Command
	}
	abortWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target json.RawMessage `json:"target"`
		// Request is the clearer name of target: a request id, where target elsewhere names a place.
		Request   json.RawMessage `json:"request"`
		KillGrace *float64        `json:"killGrace"`
	}
	outputWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		TaskID string          `json:"taskId"`
		Wait   *float64        `json:"wait"`
		Reader *string         `json:"reader"`
	}
	inputWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		TaskID string          `json:"taskId"`
		Text   string          `json:"text"`
		Keys   json.RawMessage `json:"keys"` // a comma-separated string or a list of names: keyNames
		EOF    bool            `json:"eof"`
		Wait   *float64        `json:"wait"`
		Cols   int             `json:"cols"`
		Rows   int             `json:"rows"`
	}
	killWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		TaskID string          `json:"taskId"`
		Signal *string         `json:"signal"`
	}
	waitWire struct {
		ID      json.RawMessage `json:"id"`
		Type    string          `json:"type"`
		Target  string          `json:"target"`
		TaskID  string          `json:"taskId"`
		Timeout *float64        `json:"timeout"`
	}
	tasksWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		All    bool            `json:"all"`
	}
	pruneWire struct {
		ID        json.RawMessage `json:"id"`
		Type      string          `json:"type"`
		Target    string          `json:"target"`
		OlderThan float64         `json:"olderThan"`
	}
	listWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
	}
	sessionWire struct {
		ID     json.RawMessage `json:"id"`
		Type   string          `json:"type"`
		Target string          `json:"target"`
		Name   string          `json:"name"`
		Values bool            `json:"values"`
	}
	artifactWire struct {
		ID         json.RawMessage `json:"id"`
		Type       string          `json:"type"`
		Target     string          `json:"target"`
		ArtifactID string          `json:"artifactId"`
		Raw        bool            `json:"raw"`
		Offset     int64           `json:"offset"`
		Limit      int64           `json:"limit"`
	}
)

// fieldsOf is each request type's field names, from its wire form's JSON tags.
var fieldsOf = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		TypeBash:   jsonNames(reflect.TypeFor[bashWire]()),
		TypeStart:  jsonNames(reflect.TypeFor[startWire]()),
		TypeAbort:  jsonNames(reflect.TypeFor[abortWire]()),
		TypeOutput: jsonNames(reflect.TypeFor[outputWire]()),
		TypeInput:  jsonNames(reflect.TypeFor[inputWire]()),
		TypeKill:   jsonNames(reflect.TypeFor[killWire]()),
		TypeWait:   jsonNames(reflect.TypeFor[waitWire]()),
		TypeTasks:  jsonNames(reflect.TypeFor[tasksWire]()),

		TypeTasksPrune:    jsonNames(reflect.TypeFor[pruneWire]()),
		TypeArtifactPrune: jsonNames(reflect.TypeFor[pruneWire]()),
		TypeSessionList:   jsonNames(reflect.TypeFor[listWire]()),
		TypeArtifactList:  jsonNames(reflect.TypeFor[listWire]()),
		TypeSessionShow:   jsonNames(reflect.TypeFor[sessionWire]()),
		TypeSessionRemove: jsonNames(reflect.TypeFor[sessionWire]()),
		TypeArtifact:      jsonNames(reflect.TypeFor[artifactWire]()),
		TypeArtifactPath:  jsonNames(reflect.TypeFor[artifactWire]()),
		TypeHello:         jsonNames(reflect.TypeFor[helloWire]()),
	}
})

// typeNames lists the request types for error messages.
var typeNames = "bash, abort_bash, start, output, input, kill, wait, tasks, tasks_prune, session_list, session_show, " +
	"session_rm, artifact, artifact_path, artifact_list, artifact_prune or hello"

// jsonNames is the set of JSON field names of struct t, embedded structs included, "-" fields excluded.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case f.Anonymous && name == "":
			maps.Copy(names, jsonNames(f.Type))
		case name == "-" || !f.IsExported():
		case name == "":
			names[f.Name] = true
		default:
			names[name] = true
		}
	}
	return names
}

// wants says in words what each field takes, for the error of an ill-typed one.
var wants = map[string]string{
	"type":        "a string naming the request (" + typeNames + ")",
	"command":     "a string of shell text",
	"cwd":         "a directory path (a string)",
	"timeout":     "a number of seconds",
	"head":        "a line count ≥ 0",
	"tail":        "a line count ≥ 0",
	"env":         "an object of string values ({\"NAME\": \"value\"})",
	"noNormalize": "true or false",
	"intercept":   "true or false",
	"tools":       "an array of tool names (strings)",
	"session":     "a session name (a string)",
	"background":  "true or false",
	"yield":       "a number of seconds",
	"stream":      "true or false",
	"taskId":      "a task id (a string of decimal digits, such as \"7\")",
	"wait":        "a number of seconds",
	"reader":      "a reader name (a string)",
	"signal":      "a signal name (a string such as \"TERM\")",
	"all":         "true or false",
	"olderThan":   "a number of seconds",
	"name":        "a session name (a string)",
	"values":      "true or false",
	"artifactId":  "an artifact id (a string of decimal digits)",
	"raw":         "true or false",
	"offset":      "a byte offset ≥ 0",
	"limit":       "a byte count ≥ 0",
	"resolved":    "the settled half of a command, as another agentbash sends it (an object)",
	"protocol":    "the protocol version (an integer)",
	"killGrace":   "a number of seconds",
	"request":     "the id of the request to abort",
	"target":      "a target URI (a string such as \"ssh://build\"), one the server allows",
	"sandbox":     request.WantSandbox,
	"stdin":       `"pipe" (a pipe that input writes to)`,
	"tty":         "true or false",
	"cols":        "a number of columns from 2 to 1000",
	"rows":        "a number of rows from 2 to 1000",
	"text":        "a string (written as it is; in a terminal Enter is \\r)",
	"keys":        `key names: a comma-separated string ("Enter,C-c") or a list (["Enter", "C-c"])`,
	"eof":         "true or false",
}

// Decode parses one request line (reference §7.2): a JSON object whose "type" names the request and whose
// other keys are exactly that type's fields. Its id, any JSON value, is kept in canonical form. A bash or
// start request starts from defaults (the server's run flags): a field it gives replaces the default.
// The error is a *DecodeError, with the id when the line had one.
func Decode(line []byte, defaults request.Command) (Message, error) {
	if m, err, ok := decodeFlat(line, defaults); ok {
		return m, err
	}
	return decodeJSON(line, defaults)
}

// decodeJSON is Decode through encoding/json, for every line: the line as a map first, to refuse a key the
// type does not have and say what is wrong in words, then as the type's wire form.
func decodeJSON(line []byte, defaults request.Command) (Message, error) {
	var obj map[string]json.RawMessage
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Message{}, &DecodeError{ID: null, Msg: "bad request: want a JSON object on one line"}
	}
	if err := json.Unmarshal(line, &obj); err != nil {
		return Message{}, &DecodeError{ID: null, Msg: "bad JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	id := null
	if raw, ok := obj["id"]; ok {
		id = Canonical(raw)
	}
	bad := func(typ, format string, a ...any) (Message, error) {
		return Message{}, &DecodeError{ID: id, Type: typ, Msg: fmt.Sprintf(format, a...)}
	}
	rawType, ok := obj["type"]
	if !ok {
		return bad("", "type: required, %s", wants["type"])
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return bad("", "type: want %s", wants["type"])
	}
	fields, ok := fieldsOf()[typ]
	if !ok {
		return bad("", "unknown request type %q (want %s)", typ, typeNames)
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !fields[k] {
			var own []string
			for _, f := range slices.Sorted(maps.Keys(fields)) {
				if f != "id" && f != "type" {
					own = append(own, f)
				}
			}
			a := "a"
			if typ == TypeInput {
				a = "an"
			}
			return bad(typ, "unknown field %q in %s %s request (its fields: id, type, %s)", k, a, typ, strings.Join(own, ", "))
		}
	}
	m := Message{ID: id, Type: typ}
	if raw, ok := obj["target"]; ok && typ != TypeAbort && typ != TypeHello {
		// Null is left out; which targets the server allows is its own to say when it serves the request.
		if json.Unmarshal(raw, &m.Target) != nil {
			return bad(typ, "target: want %s, got %s", wants["target"], raw)
		}
	}
	if typ == TypeBash || typ == TypeStart {
		// A sandbox (the request's, or the one another agentbash settled) is read in words first:
		// encoding/json's error would speak Go, or name only the key inside it.
		if err := checkSandbox(obj["sandbox"], ""); err != nil {
			return bad(typ, "%s", err)
		}
		var resolved map[string]json.RawMessage
		if json.Unmarshal(obj["resolved"], &resolved) == nil {
			if err := checkSandbox(resolved["sandbox"], "resolved."); err != nil {
				return bad(typ, "%s", err)
			}
		}
	}
	var err error
	switch typ {
	case TypeBash:
		w := bashWire{Command: defaults.Clone()}
		if err = unmarshal(line, &w); err == nil {
			b := &Bash{Command: w.Command, Background: w.Background, Stream: w.Stream}
			if w.Yield != nil {
				b.Yield = *w.Yield
			}
			m.Bash, err = b, checkBash(b)
		}
	case TypeStart:
		w := startWire{Command: defaults.Clone()}
		if err = unmarshal(line, &w); err == nil {
			m.Bash = &Bash{Command: w.Command, Background: true}
			err = checkBash(m.Bash)
		}
	case TypeAbort:
		var w abortWire
		if err = unmarshal(line, &w); err == nil {
			m.Abort = &Abort{KillGrace: w.KillGrace}
			if g := w.KillGrace; g != nil && !(*g >= 0 && *g <= request.MaxKillGrace) {
				err = fmt.Errorf("killGrace: want seconds from 0 to %v, got %v", request.MaxKillGrace, *g)
				break
			}
			raw, ok := obj["target"]
			if alias, given := obj["request"]; given {
				if ok {
					err = errTwoTargets
					break
				}
				raw, ok = alias, true
			}
			if ok {
				m.Abort.Target = Canonical(raw)
				if bytes.Equal(m.Abort.Target, null) {
					err = errNullTarget
				}
			}
		}
	case TypeOutput:
		var w outputWire
		if err = unmarshal(line, &w); err == nil {
			o := &Output{TaskID: w.TaskID, Reader: tasks.DefaultReader}
			if w.Reader != nil {
				o.Reader = *w.Reader
			}
			if w.Wait != nil {
				o.Wait = *w.Wait
			}
			m.Output = o
			err = errors.Join(checkTaskID(o.TaskID), seconds("wait", o.Wait))
			if !tasks.ValidReader(o.Reader) {
				err = errors.Join(err, fmt.Errorf("reader: %w", tasks.ErrBadReader))
			}
		}
	case TypeInput:
		var w inputWire
		if err = unmarshal(line, &w); err == nil {
			m.Input, err = decodeInput(w)
		}
	case TypeKill:
		var w killWire
		if err = unmarshal(line, &w); err == nil {
			k := &Kill{TaskID: w.TaskID, Signal: syscall.SIGTERM}
			m.Kill = k
			err = checkTaskID(k.TaskID)
			if w.Signal != nil {
				s, serr := tasks.ParseSignal(*w.Signal)
				if serr != nil {
					serr = fmt.Errorf("signal: %w", serr)
				}
				k.Signal, err = s, errors.Join(err, serr)
			}
		}
	case TypeWait:
		var w waitWire
		if err = unmarshal(line, &w); err == nil {
			m.Wait = &Wait{TaskID: w.TaskID}
			if w.Timeout != nil {
				m.Wait.Timeout = *w.Timeout
			}
			err = errors.Join(checkTaskID(w.TaskID), seconds("timeout", m.Wait.Timeout))
		}
	case TypeTasks:
		var w tasksWire
		if err = unmarshal(line, &w); err == nil {
			m.Tasks = &Tasks{All: w.All}
		}
	case TypeTasksPrune, TypeArtifactPrune:
		var w pruneWire
		if err = unmarshal(line, &w); err == nil {
			m.Store = &Store{Op: typ, OlderThan: w.OlderThan}
			err = seconds("olderThan", w.OlderThan)
		}
	case TypeSessionList, TypeArtifactList:
		var w listWire
		if err = unmarshal(line, &w); err == nil {
			m.Store = &Store{Op: typ}
		}
	case TypeSessionShow, TypeSessionRemove:
		var w sessionWire
		if err = unmarshal(line, &w); err == nil {
			m.Store = &Store{Op: typ, Name: w.Name, Values: w.Values}
			if !session.Valid(w.Name) {
				err = fmt.Errorf("name %q: %s", w.Name, session.NameRule)
			}
		}
	case TypeArtifact, TypeArtifactPath:
		var w artifactWire
		if err = unmarshal(line, &w); err == nil {
			m.Store = &Store{Op: typ, ArtifactID: w.ArtifactID, Raw: w.Raw, Offset: w.Offset, Limit: w.Limit}
			if w.ArtifactID == "" {
				err = errors.New("artifactId: required, " + wants["artifactId"])
			}
			if w.Offset < 0 || w.Limit < 0 {
				err = errors.Join(err, errors.New("offset and limit: want byte counts ≥ 0"))
			}
		}
	case TypeHello:
		m.Hello, err = decodeHello(line)
	}
	if err != nil {
		return bad(typ, "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return m, nil
}

// unmarshal decodes line into v and says an ill-typed field in words: `timeout: want a number of seconds`.
func unmarshal(line []byte, v any) error {
	err := json.Unmarshal(line, v)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		field := te.Field
		if i := strings.Index(field, "Command."); i == 0 {
			field = field[len("Command."):] // the embedded request.Command
		}
		name, _, _ := strings.Cut(field, ".")
		want := wants[name]
		if want == "" {
			want = "another kind of value"
		}
		return fmt.Errorf("%s: want %s, got %s", field, want, te.Value)
	}
	if err != nil {
		return fmt.Errorf("bad JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkSandbox says what is wrong with a sandbox field's JSON (raw; nil when left out), its fields named
// after prefix ("resolved."), each error on one line.
func checkSandbox(raw json.RawMessage, prefix string) error {
	if raw == nil {
		return nil
	}
	if _, err := request.ParseSandbox(raw); err != nil {
		return errors.New(prefix + strings.ReplaceAll(err.Error(), "\n", "; "+prefix))
	}
	return nil
}

// errNullTarget refuses an abort_bash whose target is null: null is the id of every request sent
// without one, so it could only mean "all of those" or be taken for "all"; leaving target out aborts all.
var errNullTarget = errors.New("target: null names no request (requests sent without an id have no id to " +
	"target); give the id of the request to abort, or leave target out to abort every running command")

// errTwoTargets refuses an abort_bash that gives both names of the request to abort.
var errTwoTargets = errors.New("target and request are two names of the request to abort: give one")

// checkBash checks what JSON types cannot say about a bash or start request: the command's own checks
// (request.Command.Validate), then how it runs.
func checkBash(b *Bash) error {
	errs := []error{b.Validate(session.Valid, session.NameRule)}
	if b.Resolved != nil {
		errs = append(errs, b.Resolved.Validate())
	}
	if b.Yield < 0 {
		errs = append(errs, fmt.Errorf("yield: want %s > 0, got %s", wants["yield"], result.FormatSeconds(b.Yield)))
	}
	if b.Background && b.Yield > 0 {
		errs = append(errs, errors.New("background and yield do not go together"))
	}
	return errors.Join(errs...)
}

// decodeInput checks an input request and makes it: its keys are names screen.Keys knows (an unknown
// one is refused by name, before anything is written), its wait ≥ 0 (default service.DefaultInputWait), its size
// 2 to 1000 (whether the task has a terminal to resize is the task's to say).
func decodeInput(w inputWire) (*Input, error) {
	in := &Input{TaskID: w.TaskID, Wait: service.DefaultInputWait,
		In: console.Request{EOF: w.EOF, Cols: w.Cols, Rows: w.Rows}}
	if w.Text != "" {
		in.In.Text = []byte(w.Text)
	}
	if w.Wait != nil {
		in.Wait = *w.Wait
	}
	keys, ok, kerr := request.ParseKeys(w.Keys)
	switch {
	case !ok:
		kerr = fmt.Errorf("keys: want %s, got %s", wants["keys"], request.ShownJSON(w.Keys))
	case kerr != nil:
		kerr = fmt.Errorf("keys: %w", kerr)
	}
	in.In.Keys = keys
	var size error
	if err := console.CheckSize(w.Cols, w.Rows); err != nil {
		size = errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return in, errors.Join(checkTaskID(w.TaskID), kerr, seconds("wait", in.Wait), size)
}

// checkTaskID checks that a task request names a task. Whether the name is a task id is the store's to
// say: a malformed id ("07") is answered as an unknown one is, with the error result the CLI prints.
func checkTaskID(id string) error {
	if id == "" {
		return errors.New("taskId: required, " + wants["taskId"])
	}
	return nil
}

// seconds checks a duration field: a number of seconds ≥ 0.
func seconds(name string, s float64) error {
	if s < 0 {
		return fmt.Errorf("%s: want %s ≥ 0, got %s", name, wants[name], result.FormatSeconds(s))
	}
	return nil
}

// Canonical is raw in canonical form: compact, object keys sorted, strings re-escaped, numbers as
// written (1 and 1.0 stay different ids). Two ids are equal as JSON (reference §7.2) when their canonical forms
// are equal bytes. Invalid JSON is returned compacted as far as it goes (it cannot come from Decode).
func Canonical(raw json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return slices.Clone(raw)
	}
	b, err := marshal(v)
	if err != nil {
		return slices.Clone(raw)
	}
	return b
}

// marshal is v as one line of JSON without HTML escaping and without the newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
