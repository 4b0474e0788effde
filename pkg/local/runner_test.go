package local

import (
	"context"
	"time"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// The tests of this package drive the executor the way the faces do: through the service, which settles
// the command's own half first. testConfig holds both halves' settings.
type testConfig struct {
	Timeout, KillGrace float64
	Shell, Prefix      string
	Env                []string // shell.env
	Snapshot           bool
	SnapshotDir        string
	MaxBytes           int
	ArtifactDir        string
	Intercept          bool
	Tools              []string
	Rules              []intercept.Rule
	DefaultRules       bool
	NonZeroExit        string
	SessionDir         string
	Supervisors        run.Starter // nil is a supervisor process per run
	Warnings           []string
	Warn               func(string)
	ArtifactMaxBytes   int64
	Wrapper            []string
	MaxLifetime        float64
	TaskDir            string
	KillLimit          time.Duration
}

type Request = request.Command

// Task is where a test's task is recorded.
type Task struct{ Store tasks.Store }

type runner struct {
	c   testConfig
	svc *service.Service
	exe *Executor
}

func newRunner(c testConfig) *runner {
	exe := New(Config{Shell: c.Shell, ShellEnv: c.Env, Snapshot: c.Snapshot, SnapshotDir: c.SnapshotDir,
		ArtifactDir: c.ArtifactDir, SessionDir: c.SessionDir, TaskDir: c.TaskDir, KillLimit: c.KillLimit,
		Supervisors: c.Supervisors})
	svc := service.New(service.Config{Timeout: c.Timeout, KillGrace: c.KillGrace, Prefix: c.Prefix,
		Wrapper: c.Wrapper, MaxBytes: c.MaxBytes, ArtifactMaxBytes: c.ArtifactMaxBytes, Intercept: c.Intercept,
		Tools: c.Tools, Rules: c.Rules, DefaultRules: c.DefaultRules, NonZeroExit: c.NonZeroExit,
		MaxLifetime: c.MaxLifetime, Warnings: c.Warnings, Warn: c.Warn}, exe)
	return &runner{c: c, svc: svc, exe: exe}
}

func (r *runner) Run(ctx context.Context, req Request, obs executor.Observer) result.Result {
	return r.svc.Run(ctx, req, obs)
}

// Start starts req as a task recorded in t's store.
func (r *runner) Start(ctx context.Context, req Request, t Task) result.Result {
	r.exe.c.TaskDir = t.Store.Dir
	return r.svc.Start(ctx, req)
}

func (r *runner) Cancelled(req Request) result.Result { return r.svc.Cancelled(req) }
