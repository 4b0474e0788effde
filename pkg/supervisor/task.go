package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// detached is the supervisor's side of a background task (reference §8): it writes the task's record when the
// shell runs, with what the sandbox's proxy refused while it runs, and once more when the run ended. mu
// guards rec once the shell runs: the proxy's refusals come from goroutines of their own.
type detached struct {
	store tasks.Store
	id    string
	mu    sync.Mutex
	rec   tasks.Record
	// saving is set while a save of the proxy's refusals is due (proxyDenied).
	saving bool
}

func newDetached(t *run.Task) (*detached, error) {
	d := &detached{store: tasks.Store{Dir: string(t.Dir)}, id: t.ID}
	rec, err := d.store.Load(t.ID)
	if err != nil {
		return nil, err
	}
	// The supervisor owns the record from here: once its pid is in it, a starter that goes away leaves
	// a task that is found and finished by this process.
	rec.SupervisorPid = os.Getpid()
	rec.SupervisorStart, _ = tasks.StartTime(rec.SupervisorPid)
	d.rec = rec
	if err := d.store.Save(rec); err != nil {
		return nil, err
	}
	return d, nil
}

// started records the running task: the shell's pid, the supervisor's pid and start time, the artifact.
func (d *detached) started(pid int, out *output) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rec.Status = tasks.StatusRunning
	d.rec.Pid, d.rec.SupervisorPid = pid, os.Getpid()
	d.rec.SupervisorStart, _ = tasks.StartTime(os.Getpid())
	if out.created != "" {
		d.rec.ArtifactID = out.created
		d.rec.ArtifactPath, _ = artifact.Store{Dir: string(out.o.ArtifactDir)}.Path(out.created)
	}
	d.rec.ArtifactCap = out.o.ArtifactMaxBytes
	if d.rec.ArtifactCap <= 0 {
		d.rec.ArtifactCap = sink.DefaultArtifactMaxBytes
	}
	d.rec.Error = ""
	return d.store.Save(d.rec)
}

// finished records how the run ended: exactly once, by this process.
func (d *detached) finished(ctx context.Context, outcome run.Outcome, summary sink.Summary, runErr error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.rec.EndedAt = &now
	switch {
	case runErr != nil:
		d.rec.Status, d.rec.Error = tasks.StatusError, runErr.Error()
	case outcome.Cancelled && isClientCancel(context.Cause(ctx)):
		d.rec.Status = tasks.StatusCancelled
	case outcome.Cancelled:
		d.rec.Status = tasks.StatusKilled
		d.rec.KillSignal = int(unix.SIGTERM)
		if c, ok := errors.AsType[cancelled](context.Cause(ctx)); ok && c.kill != 0 {
			d.rec.KillSignal = int(c.kill)
		}
	case outcome.TimedOut && d.lifetimeBound():
		d.rec.Status, d.rec.LifetimeExceeded = tasks.StatusKilled, true
		d.rec.KillSignal = int(unix.SIGTERM)
	case outcome.TimedOut:
		d.rec.Status = tasks.StatusTimedOut
	case outcome.SignalNumber > 0:
		d.rec.Status = tasks.StatusSignaled
	default:
		d.rec.Status = tasks.StatusExited
	}
	if d.rec.KillSignal != 0 && outcome.SignalNumber > 0 {
		// The signal that ended it: SIGKILL when the command outlived the grace of the one asked for.
		d.rec.KillSignal = outcome.SignalNumber
	}
	if runErr == nil {
		d.rec.Leftovers = len(outcome.LeftoverPids)
		if len(outcome.LeftoverPids) > 0 {
			// A task keeps what its shell left (ownLeftovers): say so, and how to end them.
			outcome.Warnings = append(outcome.Warnings, fmt.Sprintf(texts.TaskLeftoversKept,
				len(outcome.LeftoverPids), run.PidsText(outcome.LeftoverPids), d.id))
		}
		d.rec.Outcome, d.rec.Summary = &outcome, &summary
		if summary.ArtifactID != "" {
			d.rec.ArtifactID = summary.ArtifactID
		}
	}
	_ = d.store.Save(d.rec) // nobody to tell if this fails: the record then reads as lost (status error)
}

// isClientCancel reports whether cause is a "cancel" request of the client (an attached task's Ctrl-C),
// not a signal to the supervisor (`kill`, `tasks kill --all`).
func isClientCancel(cause error) bool {
	c, ok := errors.AsType[cancelled](cause)
	return ok && c.signal == 0 && c.kill == 0
}

// lifetimeBound reports whether the run's timer was tasks.maxLifetime rather than the task's own timeout.
func (d *detached) lifetimeBound() bool {
	return d.rec.MaxLifetime > 0 && (d.rec.TimeoutSeconds == 0 || d.rec.MaxLifetime < d.rec.TimeoutSeconds)
}

// killSignal is the signal a `kill` of this task asked for (SIGTERM by default).
func (d *detached) killSignal() unix.Signal { return d.store.KillSignal(d.id) }

// leftoverLook is how often ownLeftovers counts the processes it owns when none of its children ended
// (one that forks changes the count without a sign).
const leftoverLook = time.Second

// ownLeftovers keeps the processes the task's shell left running to the end (README "Background
// tasks"): this process stays their subreaper, collects them as they end and keeps the record's count of
// them (Leftovers) up to date, until none is left. A cancel of ctx (a signal to the supervisor: `kill`,
// with the signal its cause names) or tasks.maxLifetime, counted from the task's start, ends them as a
// kill ends a tree (the signal, grace, SIGKILL), and the record says how many that ended (LeftoverKilled;
// the lifetime also as a warning). The record's status stays what it was when the shell ended.
func (d *detached) ownLeftovers(ctx context.Context, grace time.Duration) {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, unix.SIGCHLD)
	defer signal.Stop(chld)
	look := time.NewTicker(leftoverLook)
	defer look.Stop()
	var lifetime <-chan time.Time
	if d.rec.MaxLifetime > 0 {
		t := time.NewTimer(time.Until(d.rec.StartedAt.Add(run.Seconds(d.rec.MaxLifetime))))
		defer t.Stop()
		lifetime = t.C
	}
	for {
		live := run.Leftovers()
		d.mu.Lock()
		if len(live) != d.rec.Leftovers {
			d.rec.Leftovers = len(live)
			_ = d.store.Save(d.rec) // a record that cannot be written reads as before; kill still reaches them
		}
		d.mu.Unlock()
		if len(live) == 0 {
			return
		}
		select {
		case <-chld:
		case <-look.C:
		case <-ctx.Done():
			sig := unix.SIGTERM
			if k, ok := errors.AsType[run.KillSignalCause](context.Cause(ctx)); ok {
				sig = k.KillSignal()
			}
			d.endLeftovers(sig, grace, false)
			return
		case <-lifetime:
			d.endLeftovers(unix.SIGTERM, grace, true)
			return
		}
	}
}

// endLeftovers ends every process the task still owns and records how many that were; lifetime says
// tasks.maxLifetime did.
func (d *detached) endLeftovers(sig unix.Signal, grace time.Duration, lifetime bool) {
	n := run.EndLeftovers(sig, grace)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rec.Leftovers, d.rec.LeftoverKilled = 0, n
	if lifetime {
		d.rec.Warnings = append(d.rec.Warnings, fmt.Sprintf(texts.TaskLeftoversLifetime,
			result.FormatSeconds(d.rec.MaxLifetime), tasks.Processes(n)))
	}
	_ = d.store.Save(d.rec)
}

// deniedSaveEvery is how often at most a running task's record is saved for what its proxy refused.
const deniedSaveEvery = 250 * time.Millisecond

// proxyDenied keeps what the task's proxy refused so far in its record (details.sandbox.denied, and a
// line each in `output` while it runs), saved at most every deniedSaveEvery: a command that is refused a
// thousand times does not write the record a thousand times. Once the run ended its outcome has them.
func (d *detached) proxyDenied(denied []proxy.Denial) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rec.Sandbox == nil || d.rec.Outcome != nil {
		return
	}
	sb := *d.rec.Sandbox
	sb.Denied = denied
	d.rec.Sandbox = &sb
	if !d.saving {
		d.saving = true
		time.AfterFunc(deniedSaveEvery, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.saving = false
			if d.rec.Outcome == nil && d.rec.EndedAt == nil {
				_ = d.store.Save(d.rec)
			}
		})
	}
}

// warn adds a warning to the task's record (saved with it next).
func (d *detached) warn(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rec.Warnings = append(d.rec.Warnings, msg)
}
