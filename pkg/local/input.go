package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/tasks"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Settling (reference §14): after input, the output has settled once it grew and then stayed quiet for
// settleQuiet; the stream's size is looked at every settleLook.
const (
	settleQuiet = 100 * time.Millisecond
	settleLook  = 20 * time.Millisecond
)

// Input writes in to task id's input through its supervisor's socket, waits up to wait for the output to
// settle, and returns the default reader's read with the terminal's screen (reference §14).
func (t taskOps) Input(ctx context.Context, id string, in console.Request, wait time.Duration, maxBytes int) (result.Result, error) {
	store := t.e.taskStore()
	rec, err := store.Load(id)
	if err == nil {
		err = acceptsInput(rec, in)
	}
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	before := store.StreamEnd(rec)
	// The write itself is not cut by a caller that goes away meanwhile (an rpc whose input ended right after
	// the request): it is quick (Send's own limit bounds it), and half of it cannot be taken back.
	reply, err := console.Send(context.WithoutCancel(ctx), store.SocketPath(id), rec.SupervisorPid, in)
	switch {
	case errors.Is(err, console.ErrNoConsole):
		// Its shell ended since the record was read (the socket goes first), or its supervisor is gone.
		if now, lerr := store.Load(id); lerr == nil && !now.Running() {
			err = fmt.Errorf(texts.InputEnded, id, now.Status)
		} else {
			err = fmt.Errorf(texts.InputUnreachable, id, err)
		}
	case err != nil:
		err = fmt.Errorf(texts.InputUnreachable, id, err)
	case reply.Error != "":
		err = fmt.Errorf("task %s: %s", id, reply.Error)
	}
	if err != nil {
		return tasks.ErrorResult(id, err), err
	}
	settle(ctx, store, rec, before, wait)
	r, err := t.Output(ctx, id, tasks.DefaultReader, 0, maxBytes, nil)
	return r, err
}

// acceptsInput says why task rec cannot take in: it ended, it has no input, a resize of a pipe, unknown
// keys (their error lists the known names).
func acceptsInput(rec tasks.Record, in console.Request) error {
	switch {
	case !rec.Running():
		return fmt.Errorf(texts.InputEnded, rec.TaskID, rec.Status)
	case rec.Interactive == "":
		return fmt.Errorf(texts.InputNone, rec.TaskID)
	case len(in.Text)+len(in.Keys) > console.MaxPending:
		return fmt.Errorf("task %s: %d bytes of input is more than the 1 MiB that may wait for a command: nothing "+
			"was written (send it in parts as the command reads it)", rec.TaskID, len(in.Text))
	case (in.Cols != 0 || in.Rows != 0) && rec.Interactive != console.ModeTTY:
		return fmt.Errorf("task %s: %w", rec.TaskID, console.ErrNoTTY)
	}
	if err := console.CheckSize(in.Cols, in.Rows); err != nil {
		return err
	}
	if len(in.Keys) > 0 {
		if _, err := screen.Keys(in.Keys, screen.KeyMode{}); err != nil {
			return err
		}
	}
	return nil
}

// settle waits until task rec's stream grew past before and then stayed quiet for settleQuiet, the task
// ended, wait passed or ctx ended: the answer to what was typed is then in the stream. In a terminal, the
// echo of what was typed is output too, so there the quiet counts only once the screen waits again (a prompt
// at the cursor, or a full-screen program: screen.Screen.Showing): `time.sleep(1); 6*7` is answered after
// its second, not at its echo.
func settle(ctx context.Context, store tasks.Store, rec tasks.Record, before int64, wait time.Duration) {
	id, tty := rec.TaskID, rec.Interactive == console.ModeTTY
	deadline := time.Now().Add(wait)
	size, grew := before, time.Time{}
	for {
		step := min(settleLook, time.Until(deadline))
		if step <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(step):
		}
		var err error
		if rec, err = store.Load(id); err != nil {
			return
		}
		now := store.StreamEnd(rec)
		switch {
		case now != size:
			size, grew = now, time.Now()
		case !grew.IsZero() && time.Since(grew) >= settleQuiet:
			if !tty {
				return
			}
			// A terminal: done once it waits again; once its shell ended (the socket goes first), the
			// record says how in a moment (below).
			if waiting(ctx, store, rec) {
				return
			}
		}
		if !rec.Running() {
			return
		}
	}
}

// waiting asks task rec's supervisor whether its terminal shows a prompt at the cursor or a full-screen
// program. Nobody listening (its shell ended) is no; a screen that cannot be had for another reason is yes:
// the wait then ends as in pipe mode.
func waiting(ctx context.Context, store tasks.Store, rec tasks.Record) bool {
	reply, err := console.Send(ctx, store.SocketPath(rec.TaskID), rec.SupervisorPid, console.Request{})
	if errors.Is(err, console.ErrNoConsole) {
		return false
	}
	return err != nil || reply.Screen == nil || reply.Screen.Showing()
}

// withScreen adds to a read r of interactive task rec what a model needs to go on: while it runs, the
// screen of its terminal, asked of its supervisor (a screen that cannot be had leaves r as it is); once it
// ended, a line that says so, since a quiet task and an ended one read alike ("(no new output)").
func withScreen(ctx context.Context, store tasks.Store, rec tasks.Record, r *result.Result) {
	if rec.Interactive == "" {
		return
	}
	if !rec.Running() {
		end := r.Details.Status
		if c := r.Details.ExitCode; c != nil {
			end = fmt.Sprintf("%s, exit code %d", end, *c)
		}
		r.Footer = append(r.Footer, fmt.Sprintf(texts.TaskEnded, rec.TaskID, end))
		r.Retext()
		return
	}
	if rec.Interactive != console.ModeTTY {
		return
	}
	if reply, err := console.Send(ctx, store.SocketPath(rec.TaskID), rec.SupervisorPid, console.Request{}); err == nil {
		r.AddScreen(reply.Screen, rec.MaxBytes)
	}
}
