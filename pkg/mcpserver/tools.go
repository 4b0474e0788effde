package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/sandbox"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// BashArgs are the arguments of the bash tool. Seconds may be fractional.
type BashArgs struct {
	Command string   `json:"command" jsonschema:"the shell command to run, as you would type it into bash (pipes, &&, heredocs and multi-line scripts work)"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"the directory to run it in (absolute, or ~/…); by default where the previous command of this connection ended"` // replaced by cwdOn or cwdOff
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"seconds before the command and everything it started are killed (1 to 3600; values outside are clamped; default the server's, see the tool's description). For run_in_background: the task's own limit (default none)"`
	Head    *int     `json:"head,omitempty" jsonschema:"show only the first N lines of the output (the full output is kept in the artifact file)"`
	Tail    *int     `json:"tail,omitempty" jsonschema:"show only the last N lines of the output (the full output is kept in the artifact file)"`
	// RunInBackground starts the command as a task (reference §8).
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema:"start the command as a background task and return at once with its task id: for dev servers, watchers and anything that does not end by itself"`
	// YieldSeconds runs in the foreground for up to that long, then hands a command still running over
	// to a task (run --yield).
	YieldSeconds *float64 `json:"yield_seconds,omitempty" jsonschema:"wait up to this many seconds for the command; if it is still running then, it goes on as a background task and you get what it printed so far and its task id"`
	Target       string   `json:"target,omitempty" jsonschema:"where to run the command"` // replaced by targetDescription
	// Sandbox confines the command (reference §13); it can only tighten the server's sandbox.
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"` // its schema is sandboxSchema
	// TTY runs the command in a terminal of Cols×Rows; Stdin "pipe" gives a task a stdin pipe (reference §14).
	TTY   bool   `json:"tty,omitempty" jsonschema:"run the command in a terminal (a pseudo-terminal), for a REPL, a prompt, git add -p, vi: with yield_seconds it goes on as a task you answer with bash_input, and results add the screen"`
	Cols  *int   `json:"cols,omitempty" jsonschema:"with tty: the terminal's width in columns (default 120)"`
	Rows  *int   `json:"rows,omitempty" jsonschema:"with tty: the terminal's height in rows (default 40)"`
	Stdin string `json:"stdin,omitempty" jsonschema:"\"pipe\": with run_in_background or yield_seconds, give the task a plain pipe as its stdin that bash_input writes to (no terminal: Enter is \"\\n\")"`
}

// sandboxDescription is what the sandbox argument says to the model; %s is the server's own sandbox.
const sandboxDescription = `confine this command (for one you do not fully trust): "workspace-write" lets it write only in its working directory when that is inside the server's starting directory, a private /tmp, and the server's writable paths and tool caches; "read-only" only in a private /tmp (in a session, a stricter command's changes such as cd are not kept). In both it has no network unless network is "proxy" (only the server's allowHosts, over HTTP(S) through a proxy that HTTP_PROXY points at; a refused host is named in a [Sandbox: blocked network access to HOST:PORT] line: ask the user to allow it) or "on", cannot read ~/.ssh and other credentials, and cannot signal processes outside; a failed command's result ends with a [Sandbox: …] line when the sandbox refused something. Give a mode, or an object {"mode", "network", "writable", "denyRead", "cacheDirs", "allowHosts"} to say more. It can only make the server's own sandbox stricter: a looser one is refused. Left out, the server's own: %s`

// serverSandbox says the server's own sandbox in words, for the sandbox argument's description.
func serverSandbox(p sandbox.Policy) string {
	if !p.On() {
		return "none"
	}
	network := p.Network
	if network == "" {
		network = sandbox.NetworkOff
	}
	if network == sandbox.NetworkProxy {
		hosts := "none: nothing is reachable"
		if len(p.AllowHosts) > 0 {
			hosts = strings.Join(p.AllowHosts, ", ")
		}
		return fmt.Sprintf("%s, network proxy (allowHosts: %s)", p.Mode, hosts)
	}
	return fmt.Sprintf("%s, network %s", p.Mode, network)
}

// sandboxSchema is the input schema of the sandbox argument: a mode, or an object of the config's keys.
func sandboxSchema(own sandbox.Policy) *jsonschema.Schema {
	modes := []any{string(sandbox.ModeOff), string(sandbox.ModeWorkspaceWrite), string(sandbox.ModeReadOnly)}
	paths := func(d string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: d}
	}
	return &jsonschema.Schema{
		Description: fmt.Sprintf(sandboxDescription, serverSandbox(own)),
		OneOf: []*jsonschema.Schema{
			{Type: "string", Enum: modes},
			{
				Type: "object",
				Properties: map[string]*jsonschema.Schema{
					"mode": {Type: "string", Enum: modes},
					"network": {Type: "string", Enum: []any{string(sandbox.NetworkOff), string(sandbox.NetworkProxy), string(sandbox.NetworkOn)},
						Description: "off: only the command's own loopback; proxy: only allowHosts, over HTTP(S) through a proxy; on: the host's network"},
					"writable":   paths("paths it may write besides its working directory (absolute or ~/…), within the server's"),
					"denyRead":   paths("more paths it sees as absent or empty"),
					"cacheDirs":  paths("tool caches it may write, within the server's"),
					"allowHosts": paths("with network proxy: the host:port entries it may reach (github.com:443, *.npmjs.org:443, 127.0.0.1:8080), each within the server's"),
				},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			},
		},
	}
}

// OutputArgs are the arguments of bash_output.
type OutputArgs struct {
	TaskID      string   `json:"task_id" jsonschema:"the task id that bash returned (its digits, e.g. \"7\"; the number 7 works too)"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for new output or the task's end (default 0: return at once)"`
	Target      string   `json:"target,omitempty" jsonschema:"the target the task was started on"`
}

// InputArgs are the arguments of bash_input.
type InputArgs struct {
	TaskID      string   `json:"task_id" jsonschema:"the task id that bash returned (its digits, e.g. \"7\"; the number 7 works too)"`
	Text        string   `json:"text,omitempty" jsonschema:"text to type, written as given: in a terminal Enter is \"\\r\" (\"6*7\\r\"), in a pipe \"\\n\""`
	Keys        []string `json:"keys,omitempty" jsonschema:"keys to press after text, in order, e.g. [\"Enter\"], [\"C-c\"], [\"Down\", \"Enter\"]: Enter, Tab, S-Tab, Esc, Space, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, C-a to C-z, F1-F12, M-x, Comma, or one character (the string \"Enter,C-c\" works too)"`
	EOF         bool     `json:"eof,omitempty" jsonschema:"then end the input: close the pipe, or send the terminal's end-of-file (C-d)"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for the answer (default 0.5); it returns once the output goes quiet, so more costs nothing when the answer is quick"`
	Cols        *int     `json:"cols,omitempty" jsonschema:"resize the task's terminal to this many columns"`
	Rows        *int     `json:"rows,omitempty" jsonschema:"resize the task's terminal to this many rows"`
	Target      string   `json:"target,omitempty" jsonschema:"the target the task was started on"`
}

// KillArgs are the arguments of bash_kill.
type KillArgs struct {
	TaskID string `json:"task_id" jsonschema:"the task id that bash returned (its digits, e.g. \"7\"; the number 7 works too)"`
	Target string `json:"target,omitempty" jsonschema:"the target the task was started on"`
}

// TasksArgs are the arguments of bash_tasks.
type TasksArgs struct {
	All    bool   `json:"all,omitempty" jsonschema:"list every task kept, not only the running ones and those that ended in the last 24 hours"`
	Target string `json:"target,omitempty" jsonschema:"the target whose tasks to list"`
}

// Structured is the structuredContent of bash, bash_output and bash_kill (README "MCP server"): the
// result's details, the text of its content as output (clients that show a model only structuredContent
// then show it the output), and the truncation notice the text ends with, if any.
type Structured struct {
	result.Details
	Output     string      `json:"output" jsonschema:"the same text as content: the output, then the status line and the truncation notice, if any"`
	Truncation *Truncation `json:"truncation,omitempty" jsonschema:"present when the output shown is a part: the notice that says which, and for a command's own output the facts of the cut (as details.meta.truncation)"`
}

// Truncation is the truncation notice of a result's text (`[Showing lines 2001-3000 of 3000 (20.0KB
// limit). Full: artifact://17]`, or a bash_output read's `[Skipped 1.2MB since the last read. …]`), with
// the facts of the cut when it is a command's own output.
type Truncation struct {
	Notice string `json:"notice"`
	*result.Truncation
}

// TaskList is bash_tasks' structuredContent: the rows of `agentbash tasks --json`, in an object (MCP's
// structuredContent is an object), and the text of its content as output; error says why the list
// could not be given.
type TaskList struct {
	Tasks  []tasks.Row `json:"tasks"`
	Output string      `json:"output" jsonschema:"the same text as content: the table of tasks, or why there is none"`
	Error  string      `json:"error,omitempty"`
}

const bashDescription = `Run a shell command with bash and get its output (stdout and stderr together), as a terminal shows it.
The command's stdin is empty (unless tty or stdin is set: see Interactive below): nothing may wait for input, and pagers and prompts are off.

Results:
- The text is the output, then, when the command failed, a status line ("Command exited with code 2", "Command killed by signal SIGSEGV", or a first line "[Command timed out after %[2]s seconds]"; the default timeout is %[2]s seconds). A non-zero exit is reported in the result, with isError set and structuredContent.exitCode; it is not a failure of this tool: read the output to see what went wrong.
- Long output is cut to its last %[3]s (or to the lines head/tail choose; a trailing "| tail -20" or "| head -5" in the command is taken the same way) and ends with a notice such as "[Showing lines 2001-3000 of 3000 (%[3]s limit). Full: artifact://17]", which structuredContent.truncation.notice repeats. The whole output is in the file structuredContent.artifactPath, which a later command also finds as "$ARTIFACTS/17.log" (17 the id in the notice): grep or read that file (grep -n error "$ARTIFACTS/17.log") instead of running the command again.
- On a timeout the command and everything it started are killed; you still get what it printed.

%[1]s

Background tasks: for a command that does not end by itself or runs for minutes (a dev server, a watcher, a long build or test run), set run_in_background: it returns at once with "Started task 7 (pid 4242): …" and structuredContent.taskId, and the command keeps running after this call (it has no timeout unless you give one). Read what it prints with bash_output, stop it with bash_kill, list tasks with bash_tasks. Or set yield_seconds: the command runs as usual, but if it is still running after that many seconds it goes on as a task and you get what it printed so far.

Interactive programs (a REPL, a prompt, git add -p, a full-screen program such as vi): set tty: true and yield_seconds (2 reaches a prompt). The command runs in a terminal and goes on as a task; the text shows the terminal's screen under "--- screen ---" when a prompt or full-screen program waits. Answer with bash_input (text "6*7\r": in a terminal Enter is \r; or keys ["Enter"], ["C-c"]), read more with bash_output, end with bash_kill or keys ["C-d"]. The call's timeout (300 s unless you give one) still ends it: give a longer timeout for a long session. stdin: "pipe" gives a plain pipe instead of a terminal.`

const sessionOn = `State carries over between bash calls of this connection, as in one terminal: cd, exported variables, functions and aliases stay for the next call. cwd works as a cd before the command: the next calls start where this one ended, not where they were before. A command that timed out or was cancelled leaves the state as it was. A call with run_in_background or yield_seconds starts from the state but does not change it (a cd or export in it stays in that command). Calls of this connection run one after another.`

const sessionOff = `Every call starts afresh in the server's directory (or cwd): cd and export do not carry over to the next call, so chain dependent steps with && in one command. Calls run in parallel.`

const outputDescription = `Read what a background task (started by bash with run_in_background or yield_seconds) printed since your previous read of it: reads never repeat output and never skip it silently.
"(no new output)" means nothing arrived. If more than %s arrived since the last read, you get the newest part and a notice saying how much was skipped; the file structuredContent.artifactPath holds everything.
wait_seconds waits up to that long for new output or the task's end (use it instead of sleep). While the task runs, structuredContent.status is "running"; once it ended, the result carries its exit code and status line as a bash result does (a non-zero exit sets isError).`

const inputDescription = `Type into a running interactive task (a REPL, a prompt waiting for an answer, git add -p, vi) that bash started with tty: true (or stdin: "pipe") and yield_seconds or run_in_background. Writes text as given, then keys, then with eof the end of input, and returns what the task printed in answer (since your last read, as bash_output does) once its output settled. In a terminal Enter is "\r" (text "6*7\r", or keys ["Enter"]); C-c interrupts, C-d ends a REPL. The terminal's screen is in structuredContent.screen and, when a prompt or full-screen program shows, in the text under "--- screen ---". An ended task takes no input.`

const killDescription = `Stop a background task: its whole process tree gets SIGTERM, then SIGKILL after a grace period, and the call returns once nothing of it is left. structuredContent.killed is false when the task had already ended.`

const tasksDescription = `List background tasks: the running ones and those that ended in the last 24 hours (all: every task kept), with id, status, pid, age and command. structuredContent.tasks holds the rows ({taskId, status, pid, command, cwd, startedAt, endedAt, exitCode}).`

// cwd's description with and without a session.
const (
	cwdOn  = "the directory to run the command in (absolute, or ~/…), as a cd before it: later calls start where it ended. Default: where the previous command ended"
	cwdOff = "the directory to run the command in (absolute, or ~/…); default the server's directory"
)

// addTools registers the five tools. Each declares its input schema (from the argument structs) and its
// output schema (from the structuredContent types); the handlers read the arguments themselves
// (args.go), so a broken one gets a sentence a model can act on, not the SDK's schema-validator text.
func (s *Server) addTools() {
	session, cwd := sessionOn, cwdOn
	if s.o.NoSession {
		session, cwd = sessionOff, cwdOff
	}
	window := sink.FormatSize(int64(s.window()))
	yes := true
	bashInput := schema[BashArgs](map[string]float64{"timeout": 0, "head": 0, "tail": 0, "yield_seconds": 0})
	bashInput.Properties["cwd"].Description = cwd
	bashInput.Properties["target"].Description = s.targetDescription("where to run the command")
	bashInput.Properties["sandbox"] = sandboxSchema(s.o.Service.Sandbox())
	sizes(bashInput)
	bashInput.Properties["stdin"].Enum = []any{request.StdinPipe}
	outputInput := taskIDSchema(schema[OutputArgs](map[string]float64{"wait_seconds": 0}))
	inputInput := sizes(taskIDSchema(schema[InputArgs](map[string]float64{"wait_seconds": 0})))
	killInput := taskIDSchema(schema[KillArgs](nil))
	tasksInput := schema[TasksArgs](nil)
	for _, sc := range []*jsonschema.Schema{outputInput, inputInput, killInput} {
		sc.Properties["target"].Description = s.targetDescription("the target the task was started on (task ids are per target)")
	}
	tasksInput.Properties["target"].Description = s.targetDescription("the target whose tasks to list")
	structured := raw(outputSchema[Structured]())
	s.mcp.AddTool(&mcp.Tool{
		Name: "bash", Title: "Run a shell command",
		Description:  fmt.Sprintf(bashDescription, session, result.FormatSeconds(s.timeout()), window),
		InputSchema:  raw(bashInput),
		OutputSchema: structured,
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes},
	}, s.bash)
	s.mcp.AddTool(&mcp.Tool{
		Name: "bash_output", Title: "Read a background task's output",
		Description:  fmt.Sprintf(outputDescription, window),
		InputSchema:  raw(outputInput),
		OutputSchema: structured,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.output)
	s.mcp.AddTool(&mcp.Tool{
		Name: "bash_input", Title: "Type into an interactive task",
		Description:  inputDescription,
		InputSchema:  raw(inputInput),
		OutputSchema: structured,
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &yes},
	}, s.input)
	s.mcp.AddTool(&mcp.Tool{
		Name: "bash_kill", Title: "Stop a background task",
		Description:  killDescription,
		InputSchema:  raw(killInput),
		OutputSchema: structured,
		Annotations:  &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true},
	}, s.kill)
	s.mcp.AddTool(&mcp.Tool{
		Name: "bash_tasks", Title: "List background tasks",
		Description:  tasksDescription,
		InputSchema:  raw(tasksInput),
		OutputSchema: raw(outputSchema[TaskList]()),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.tasks)
}

// targetDescription is the description of a tool's target argument: what it is (what), that it must be one
// the server allows, which those are, and the default.
func (s *Server) targetDescription(what string) string {
	d := what + ": a target URI this server allows"
	var allowed []string
	for _, t := range s.o.Targets {
		if !strings.HasPrefix(t, "cmd://") { // never from a call
			allowed = append(allowed, t)
		}
	}
	if len(allowed) > 0 {
		d += " (" + strings.Join(allowed, ", ") + "; ssh://HOST allows that host with any user, port or directory)"
	} else {
		d += " (it allows none besides its own)"
	}
	return d + "; by default the server's own place. Tasks, sessions and files are per target"
}

// service is the service of a call's target: the server's own for "", else Options.For's.
func (s *Server) service(target string) (*service.Service, error) {
	switch {
	case target == "":
		return s.o.Service, nil
	case s.o.For == nil:
		return nil, fmt.Errorf("target %q: this server runs its commands in one place and takes no target", target)
	}
	return s.o.For(target)
}

// window is the output window of every call, bytes: the Runner's.
func (s *Server) window() int { return s.o.Service.MaxBytes() }

// timeout is the default timeout of a bash call, seconds.
func (s *Server) timeout() float64 {
	t, _ := request.ClampTimeout(s.o.Service.Timeout())
	return t
}

// schema is the input schema of T (jsonschema-go: fields without omitempty are required, no other
// properties allowed), with an optional field's type plain ("number", not ["null", "number"]: some
// clients take only one type) and each property named in minimum bounded below.
func schema[T any](minimum map[string]float64) *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err)) // a bug in the argument structs
	}
	for name, p := range sc.Properties {
		if len(p.Types) > 0 {
			var kept []string
			for _, t := range p.Types {
				if t != "null" {
					kept = append(kept, t)
				}
			}
			if len(kept) == 1 {
				p.Type, p.Types = kept[0], nil
			}
		}
		if m, ok := minimum[name]; ok {
			p.Minimum = &m
		}
	}
	return sc
}

// sizes is sc with its cols and rows bounded as a terminal's size is (2 to 1000).
func sizes(sc *jsonschema.Schema) *jsonschema.Schema {
	low, high := float64(screen.MinSize), float64(screen.MaxSize)
	for _, name := range []string{"cols", "rows"} {
		sc.Properties[name].Minimum, sc.Properties[name].Maximum = &low, &high
	}
	return sc
}

// taskIDSchema is sc with task_id a string or an integer: a model may write 7 for "7".
func taskIDSchema(sc *jsonschema.Schema) *jsonschema.Schema {
	p := sc.Properties["task_id"]
	p.Type, p.Types = "", []string{"string", "integer"}
	return sc
}

// raw is sc as the JSON a tool declares it. The SDK sends a schema as it is given, and a tree that
// jsonschema-go built stays live for the server's life (some 400 KiB for the five tools, most of the
// server's live heap) though it only ever goes out as this JSON.
func raw(sc *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(sc)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema: %v", err)) // a bug in the schemas built above
	}
	return b
}

// outputSchema is the output schema of a tool whose structuredContent is a T: jsonschema-go's, which
// requires the fields without omitempty, with other properties allowed at every level (a later version
// may add fields, and a client that cached the schema must still accept its results). A Truncation
// requires only its notice: a read's notice comes without the facts of a cut.
func outputSchema[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %T: %v", *new(T), err)) // a bug in the types
	}
	var open func(*jsonschema.Schema)
	open = func(sc *jsonschema.Schema) {
		if sc == nil {
			return
		}
		sc.AdditionalProperties = nil
		for _, p := range sc.Properties {
			open(p)
		}
		open(sc.Items)
	}
	open(sc)
	if t := sc.Properties["truncation"]; t != nil {
		t.Required = []string{"notice"}
	}
	return sc
}

// toolResult is r as an MCP tool result: its content (the model-visible text), details with that text
// and the truncation notice as structuredContent, isError.
func toolResult(r result.Result) *mcp.CallToolResult {
	text := r.Text()
	if len(r.Content) > 0 {
		var b strings.Builder
		for _, c := range r.Content {
			b.WriteString(c.Text)
		}
		text = b.String()
	}
	sc := Structured{Details: r.Details, Output: text}
	for _, f := range r.Footer {
		switch {
		case strings.HasPrefix(f, "[Showing ") && r.Details.Meta != nil:
			sc.Truncation = &Truncation{Notice: f, Truncation: &r.Details.Meta.Truncation}
		case strings.HasPrefix(f, "[Skipped "):
			sc.Truncation = &Truncation{Notice: f}
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: sc,
		IsError:           r.IsError,
	}
}

// arguments is the raw JSON of a call's arguments.
func arguments(req *mcp.CallToolRequest) json.RawMessage { return req.Params.Arguments }

// bashArgs reads the arguments of a bash call.
func bashArgs(raw json.RawMessage) (BashArgs, error) {
	a := readArgs("bash", raw, "command", "cwd", "timeout", "head", "tail", "run_in_background", "yield_seconds", "target", "sandbox",
		"tty", "cols", "rows", "stdin")
	b := BashArgs{ // the getters run in this order, so the first error is the first argument's
		Command:         a.string("command", true),
		Cwd:             a.string("cwd", false),
		Timeout:         a.seconds("timeout"),
		Head:            a.lines("head"),
		Tail:            a.lines("tail"),
		RunInBackground: a.flag("run_in_background"),
		YieldSeconds:    a.seconds("yield_seconds"),
		Target:          a.string("target", false),
		Sandbox:         a.sandbox("sandbox"),
		TTY:             a.flag("tty"),
		Cols:            a.size("cols"),
		Rows:            a.size("rows"),
		Stdin:           a.stdin("stdin"),
	}
	err := a.check()
	if err == nil && (b.Cols != nil || b.Rows != nil) && !b.TTY {
		err = errors.New("cols and rows size a terminal: they need tty: true")
	}
	return b, err
}

// callContext is the context of one call's run: cancelled when the call is (the client's cancel, the
// connection's end) or when the context Serve was given is, with its cause.
func callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	run, cancel := context.WithCancelCause(ctx)
	c := connOf(ctx)
	if c == nil {
		return run, func() { cancel(nil) }
	}
	stop := context.AfterFunc(c.ctx, func() { cancel(context.Cause(c.ctx)) })
	return run, func() { stop(); cancel(nil) }
}

func (s *Server) bash(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := bashArgs(arguments(req))
	switch {
	case err != nil:
		return toolResult(s.refuse(a.Command, a.Cwd, err)), nil
	case normalize.Trim(a.Command) == "":
		return toolResult(s.refuse(a.Command, a.Cwd, errors.New(texts.MCPNoCommand))), nil
	case a.RunInBackground && a.YieldSeconds != nil && *a.YieldSeconds > 0:
		return toolResult(s.refuse(a.Command, a.Cwd, errors.New(texts.MCPBackgroundYield))), nil
	}
	svc, err := s.service(a.Target)
	if err != nil {
		return toolResult(s.refuse(a.Command, a.Cwd, err)), nil
	}
	r := s.o.Defaults
	r.Command, r.Stdin, r.Session = a.Command, nil, ""
	if c := connOf(ctx); c != nil {
		r.Session = c.session
		c.used.Store(c.session != "")
	}
	if a.Cwd != "" {
		r.Cwd = a.Cwd
	}
	if a.Timeout != nil {
		r.Timeout = a.Timeout
	}
	if a.Head != nil {
		r.Head = a.Head
	}
	if a.Tail != nil {
		r.Tail = a.Tail
	}
	if a.Sandbox != nil {
		r.Sandbox = a.Sandbox
	}
	// The call's own input end: a stdin pipe (a task's only: the service refuses it on a plain run) or a
	// terminal.
	r.StdinMode, r.TTY, r.Cols, r.Rows = a.Stdin, a.TTY, 0, 0
	if a.Cols != nil {
		r.Cols = *a.Cols
	}
	if a.Rows != nil {
		r.Rows = *a.Rows
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	switch {
	case a.RunInBackground:
		// A task has no timeout unless the call gives one (reference §8).
		r.Timeout = a.Timeout
		return toolResult(svc.Start(ctx, r)), nil
	case a.YieldSeconds != nil && *a.YieldSeconds > 0:
		res := svc.Yield(ctx, r, *a.YieldSeconds)
		return toolResult(mcpYield(res)), nil
	}
	var obs executor.Observer
	if token := req.Params.GetProgressToken(); token != nil {
		p := startProgress(ctx, req.Session, token)
		defer p.stop() // before the result goes out: no progress after it
		obs = p.observe
	}
	return toolResult(svc.Run(ctx, r, obs)), nil
}

// refuse is the error result of a bash call that will not run because of err.
func (s *Server) refuse(command, cwd string, err error) result.Result {
	return s.o.Service.Refuse(request.Command{Command: command, Cwd: cwd}, err)
}

// mcpYield rewords the last line of a yielded run that goes on as a task, which names the CLI's
// `agentbash output`, for a model that has bash_output.
func mcpYield(r result.Result) result.Result {
	d := r.Details
	if d.Status != result.StatusRunning || d.TaskID == "" || len(r.Footer) == 0 {
		return r
	}
	footer := append([]string(nil), r.Footer...)
	last := len(footer) - 1
	// The CLI's hint for a task that takes input, up to its command (a target's names --target after it).
	inputHint := texts.TaskYieldedInput[:strings.Index(texts.TaskYieldedInput, "agentbash input")+len("agentbash input")]
	switch {
	case footer[last] == fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID):
		footer[last] = fmt.Sprintf(texts.MCPTaskYielded, d.TaskID, d.Pid, d.TaskID)
	case strings.HasPrefix(footer[last], fmt.Sprintf(inputHint, d.TaskID, d.Pid)) && d.Target == "":
		footer[last] = fmt.Sprintf(texts.MCPTaskYieldedInput, d.TaskID, d.Pid, d.TaskID)
	case strings.HasPrefix(footer[last], fmt.Sprintf(inputHint, d.TaskID, d.Pid)):
		footer[last] = fmt.Sprintf(texts.MCPTaskYieldedInputOn, d.TaskID, d.Pid, d.TaskID, d.Target)
	case d.Target != "" && strings.HasPrefix(footer[last], fmt.Sprintf(texts.TaskYielded[:strings.Index(texts.TaskYielded, "agentbash")], d.TaskID, d.Pid)):
		// A target's run: its CLI hint names --target; the tools take the target as an argument.
		footer[last] = fmt.Sprintf(texts.MCPTaskYieldedOn, d.TaskID, d.Pid, d.TaskID, d.Target)
	}
	r.Footer = footer
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// taskService is the service of a task call (bash_output, bash_kill) whose arguments in named task id on
// target, or the error result when an argument is bad or the target may not be named.
func (s *Server) taskService(in *args, id, target string) (*service.Service, *mcp.CallToolResult) {
	err := in.check()
	if err == nil {
		err = tasks.CheckID(id)
	}
	var svc *service.Service
	if err == nil {
		svc, err = s.service(target)
	}
	if err != nil {
		return nil, toolResult(tasks.ErrorResult(id, err))
	}
	return svc, nil
}

func (s *Server) output(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := readArgs("bash_output", arguments(req), "task_id", "wait_seconds", "target")
	id, waitSeconds, target := in.taskID("task_id"), in.seconds("wait_seconds"), in.string("target", false)
	svc, refused := s.taskService(in, id, target)
	if refused != nil {
		return refused, nil
	}
	var wait float64
	if waitSeconds != nil {
		wait = *waitSeconds
	}
	r, _ := svc.Output(ctx, id, tasks.DefaultReader, wait, nil)
	return toolResult(r), nil
}

func (s *Server) input(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := readArgs("bash_input", arguments(req), "task_id", "text", "keys", "eof", "wait_seconds", "cols", "rows", "target")
	id, text, keys, eof := in.taskID("task_id"), in.string("text", false), in.keys("keys"), in.flag("eof")
	waitSeconds, cols, rows, target := in.seconds("wait_seconds"), in.size("cols"), in.size("rows"), in.string("target", false)
	svc, refused := s.taskService(in, id, target)
	if refused != nil {
		return refused, nil
	}
	w := console.Request{Keys: keys, EOF: eof}
	if text != "" {
		w.Text = []byte(text)
	}
	if cols != nil {
		w.Cols = *cols
	}
	if rows != nil {
		w.Rows = *rows
	}
	wait := service.DefaultInputWait
	if waitSeconds != nil {
		wait = *waitSeconds
	}
	r, _ := svc.Input(ctx, id, w, wait)
	return toolResult(r), nil
}

func (s *Server) kill(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := readArgs("bash_kill", arguments(req), "task_id", "target")
	id, target := in.taskID("task_id"), in.string("target", false)
	svc, refused := s.taskService(in, id, target)
	if refused != nil {
		return refused, nil
	}
	r, _ := svc.Kill(ctx, id, syscall.SIGTERM)
	return toolResult(r), nil
}

func (s *Server) tasks(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := readArgs("bash_tasks", arguments(req), "all", "target")
	all, target := in.flag("all"), in.string("target", false)
	if err := in.check(); err != nil {
		return taskListError(err), nil
	}
	svc, err := s.service(target)
	if err != nil {
		return taskListError(err), nil
	}
	rows, err := svc.Tasks(ctx, all)
	if err != nil {
		return taskListError(fmt.Errorf("list tasks: %w", err)), nil
	}
	now := time.Now()
	text := texts.MCPNoTasks
	if all {
		text = texts.MCPNoTasksAll
	}
	if len(rows) > 0 {
		var b strings.Builder
		_ = tasks.Table(&b, rows, now)
		text = strings.TrimSuffix(b.String(), "\n")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: TaskList{Tasks: rows, Output: text},
	}, nil
}

// taskListError is bash_tasks' result when it could not list the tasks.
func taskListError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: err.Error()}},
		StructuredContent: TaskList{Tasks: []tasks.Row{}, Output: err.Error(), Error: err.Error()},
		IsError:           true,
	}
}
