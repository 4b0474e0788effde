package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbash/agentbash/pkg/normalize"
	"github.com/agentbash/agentbash/pkg/pipeline"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// BashArgs are the arguments of the bash tool. Seconds may be fractional.
type BashArgs struct {
	Command string   `json:"command" jsonschema:"the shell command to run, as you would type it into bash (pipes, &&, heredocs and multi-line scripts work)"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"the directory to run it in (absolute, or ~/…); by default where the previous command of this connection ended"`
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"seconds before the command and everything it started are killed (1 to 3600; values outside are clamped; default the server's, see the tool's description). For run_in_background: the task's own limit (default none)"`
	Head    *int     `json:"head,omitempty" jsonschema:"show only the first N lines of the output (the full output is kept in the artifact file)"`
	Tail    *int     `json:"tail,omitempty" jsonschema:"show only the last N lines of the output (the full output is kept in the artifact file)"`
	// RunInBackground starts the command as a task (SPEC §8).
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema:"start the command as a background task and return at once with its task id: for dev servers, watchers and anything that does not end by itself"`
	// YieldSeconds runs in the foreground for up to that long, then hands a command still running over
	// to a task (run --yield).
	YieldSeconds *float64 `json:"yield_seconds,omitempty" jsonschema:"wait up to this many seconds for the command; if it is still running then, it goes on as a background task and you get what it printed so far and its task id"`
}

// OutputArgs are the arguments of bash_output.
type OutputArgs struct {
	TaskID      string   `json:"task_id" jsonschema:"the task id that bash returned (a string of digits, e.g. \"7\")"`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds for new output or the task's end (default 0: return at once)"`
}

// KillArgs are the arguments of bash_kill.
type KillArgs struct {
	TaskID string `json:"task_id" jsonschema:"the task id that bash returned (a string of digits, e.g. \"7\")"`
}

// TasksArgs are the arguments of bash_tasks.
type TasksArgs struct {
	All bool `json:"all,omitempty" jsonschema:"list every task kept, not only the running ones and those that ended in the last 24 hours"`
}

// TaskList is bash_tasks' structuredContent: the rows of `agentbash tasks --json`, in an object (MCP's
// structuredContent is an object).
type TaskList struct {
	Tasks []tasks.Row `json:"tasks"`
}

const bashDescription = `Run a shell command with bash and get its output (stdout and stderr together), as a terminal shows it.
The command's stdin is empty: nothing may wait for input, and pagers and prompts are off.

Results:
- The text is the output, then, when the command failed, a status line ("Command exited with code 2", "Command killed by signal SIGSEGV", or a first line "[Command timed out after %[2]s seconds]"; the default timeout is %[2]s seconds). A non-zero exit is reported in the result, with isError set and structuredContent.exitCode; it is not a failure of this tool: read the output to see what went wrong.
- Long output is cut to its last 50 KB (or to the lines head/tail choose; a trailing "| tail -20" or "| head -5" in the command is taken the same way) and ends with a notice such as "[Showing lines 2001-3000 of 3000 (50.0KB limit). Full: artifact://17]". The whole output is in the file structuredContent.artifactPath, which a later command also finds as "$ARTIFACTS/17.log" (17 the id in the notice): grep or read that file (grep -n error "$ARTIFACTS/17.log") instead of running the command again.
- On a timeout the command and everything it started are killed; you still get what it printed.

%[1]s

Background tasks: for a command that does not end by itself or runs for minutes (a dev server, a watcher, a long build or test run), set run_in_background: it returns at once with "Started task 7 (pid 4242): …" and structuredContent.taskId, and the command keeps running after this call (it has no timeout unless you give one). Read what it prints with bash_output, stop it with bash_kill, list tasks with bash_tasks. Or set yield_seconds: the command runs as usual, but if it is still running after that many seconds it goes on as a task and you get what it printed so far.`

const sessionOn = `State carries over between bash calls of this connection, as in one terminal: cd, exported variables, functions and aliases stay for the next call (cwd runs a single call elsewhere). A command that timed out or was cancelled leaves the state as it was. A call with run_in_background or yield_seconds starts from the state but does not change it (a cd or export in it stays in that command). Calls of this connection run one after another.`

const sessionOff = `Every call starts afresh in the server's directory (or cwd): cd and export do not carry over to the next call, so chain dependent steps with && in one command. Calls run in parallel.`

const outputDescription = `Read what a background task (started by bash with run_in_background or yield_seconds) printed since your previous read of it: reads never repeat output and never skip it silently.
"(no new output)" means nothing arrived. If more than 50 KB arrived since the last read, you get the newest part and a notice saying how much was skipped; the file structuredContent.artifactPath holds everything.
wait_seconds waits up to that long for new output or the task's end (use it instead of sleep). While the task runs, structuredContent.status is "running"; once it ended, the result carries its exit code and status line as a bash result does (a non-zero exit sets isError).`

const killDescription = `Stop a background task: its whole process tree gets SIGTERM, then SIGKILL after a grace period, and the call returns once nothing of it is left. structuredContent.killed is false when the task had already ended.`

const tasksDescription = `List background tasks: the running ones and those that ended in the last 24 hours (all: every task kept), with id, status, pid, age and command. structuredContent.tasks holds the rows ({taskId, status, pid, command, cwd, startedAt, endedAt, exitCode}).`

// addTools registers the four tools, with input schemas from the argument structs.
func (s *Server) addTools() {
	session := sessionOn
	if s.o.NoSession {
		session = sessionOff
	}
	yes := true
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "bash", Title: "Run a shell command",
		Description: fmt.Sprintf(bashDescription, session, result.FormatSeconds(s.timeout())),
		InputSchema: schema[BashArgs](map[string]float64{"timeout": 0, "head": 0, "tail": 0, "yield_seconds": 0}),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes},
	}, s.bash)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "bash_output", Title: "Read a background task's output",
		Description: outputDescription,
		InputSchema: schema[OutputArgs](map[string]float64{"wait_seconds": 0}),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.output)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "bash_kill", Title: "Stop a background task",
		Description: killDescription,
		InputSchema: schema[KillArgs](nil),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true},
	}, s.kill)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name: "bash_tasks", Title: "List background tasks",
		Description: tasksDescription,
		InputSchema: schema[TasksArgs](nil),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.tasks)
}

// timeout is the default timeout of a bash call, seconds.
func (s *Server) timeout() float64 {
	if s.o.Timeout > 0 {
		t, _ := pipeline.ClampTimeout(s.o.Timeout)
		return t
	}
	return pipeline.DefaultTimeout
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

// toolResult is r as an MCP tool result: its content (the model-visible text), details as
// structuredContent, isError.
func toolResult(r result.Result) *mcp.CallToolResult {
	content := make([]mcp.Content, 0, 1)
	for _, c := range r.Content {
		content = append(content, &mcp.TextContent{Text: c.Text})
	}
	if len(content) == 0 {
		content = append(content, &mcp.TextContent{Text: r.Text()})
	}
	return &mcp.CallToolResult{
		Content:           content,
		StructuredContent: r.Details,
		IsError:           r.IsError,
	}
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

func (s *Server) bash(ctx context.Context, req *mcp.CallToolRequest, a BashArgs) (*mcp.CallToolResult, any, error) {
	switch {
	case normalize.Trim(a.Command) == "":
		return toolResult(pipeline.Failed(a.Command, a.Cwd, errors.New(texts.MCPNoCommand))), nil, nil
	case a.RunInBackground && a.YieldSeconds != nil && *a.YieldSeconds > 0:
		return toolResult(pipeline.Failed(a.Command, a.Cwd, errors.New(texts.MCPBackgroundYield))), nil, nil
	}
	r := s.o.Defaults
	r.Command, r.Stdin, r.Session = a.Command, nil, ""
	if c := connOf(ctx); c != nil {
		r.Session = c.session
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
	ctx, cancel := callContext(ctx)
	defer cancel()
	task := pipeline.Task{Store: s.o.Tasks, MaxLifetime: s.o.MaxLifetime}
	switch {
	case a.RunInBackground:
		task.Timeout = a.Timeout // a task has no timeout unless the call gives one (SPEC §8)
		return toolResult(s.o.Runner.Start(ctx, r, task)), nil, nil
	case a.YieldSeconds != nil && *a.YieldSeconds > 0:
		res := s.o.Runner.Yield(ctx, r, task, seconds(*a.YieldSeconds))
		return toolResult(mcpYield(res)), nil, nil
	}
	var obs pipeline.Observer
	if token := req.Params.GetProgressToken(); token != nil {
		p := startProgress(ctx, req.Session, token)
		defer p.stop() // before the result goes out: no progress after it
		obs = p.observe
	}
	return toolResult(s.o.Runner.Run(ctx, r, obs)), nil, nil
}

// mcpYield rewords the last line of a yielded run that goes on as a task, which names the CLI's
// `agentbash output`, for a model that has bash_output.
func mcpYield(r result.Result) result.Result {
	d := r.Details
	if d.Status != result.StatusRunning || d.TaskID == "" || len(r.Footer) == 0 {
		return r
	}
	footer := append([]string(nil), r.Footer...)
	if last := len(footer) - 1; footer[last] == fmt.Sprintf(texts.TaskYielded, d.TaskID, d.Pid, d.TaskID) {
		footer[last] = fmt.Sprintf(texts.MCPTaskYielded, d.TaskID, d.Pid, d.TaskID)
	}
	r.Footer = footer
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// seconds is s seconds as a duration, bounded to a century.
func seconds(s float64) time.Duration {
	return time.Duration(min(s, 100*365*24*3600) * float64(time.Second))
}

// outputPoll is how long one wait of bash_output may block before it looks at its call's context again.
const outputPoll = 500 * time.Millisecond

func (s *Server) output(ctx context.Context, _ *mcp.CallToolRequest, a OutputArgs) (*mcp.CallToolResult, any, error) {
	if err := tasks.CheckID(a.TaskID); err != nil {
		return toolResult(tasks.ErrorResult(a.TaskID, err)), nil, nil
	}
	var wait time.Duration
	if a.WaitSeconds != nil {
		wait = seconds(*a.WaitSeconds)
	}
	deadline := time.Now().Add(wait)
	for {
		// The wait in slices, so a cancelled call (or a client gone) stops waiting.
		rd, err := s.o.Tasks.ReadOutput(a.TaskID, tasks.DefaultReader, s.o.MaxBytes, min(time.Until(deadline), outputPoll))
		if err != nil {
			return toolResult(tasks.ErrorResult(a.TaskID, err)), nil, nil
		}
		if rd.Text != "" || rd.Lossy || !rd.Record.Running() || !time.Now().Before(deadline) || ctx.Err() != nil {
			return toolResult(tasks.ReadResult(rd)), nil, nil
		}
	}
}

func (s *Server) kill(_ context.Context, _ *mcp.CallToolRequest, a KillArgs) (*mcp.CallToolResult, any, error) {
	if err := tasks.CheckID(a.TaskID); err != nil {
		return toolResult(tasks.ErrorResult(a.TaskID, err)), nil, nil
	}
	rec, killed, err := s.o.Tasks.Kill(a.TaskID, syscall.SIGTERM, s.o.KillWait)
	if err != nil {
		return toolResult(tasks.ErrorResult(a.TaskID, err)), nil, nil
	}
	return toolResult(tasks.KillResult(rec, killed)), nil, nil
}

func (s *Server) tasks(_ context.Context, _ *mcp.CallToolRequest, a TasksArgs) (*mcp.CallToolResult, any, error) {
	recs, err := s.o.Tasks.List()
	if err != nil {
		return toolResult(tasks.ErrorResult("", fmt.Errorf("list tasks: %w", err))), nil, nil
	}
	now := time.Now()
	rows := tasks.Rows(recs, a.All, now)
	text := texts.MCPNoTasks
	if a.All {
		text = texts.MCPNoTasksAll
	}
	if len(rows) > 0 {
		var b strings.Builder
		_ = tasks.Table(&b, rows, now)
		text = strings.TrimSuffix(b.String(), "\n")
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: TaskList{Tasks: rows},
	}, nil, nil
}
