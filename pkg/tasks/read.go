package tasks

import (
	"bytes"
	"errors"
	"fmt"

	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/texts"
)

// PollInterval is how often waits look at a task's record and artifact.
const PollInterval = 50 * time.Millisecond

// Read is one incremental read of a task's output by one reader.
type Read struct {
	Record  Record
	Text    string // sanitized text since the reader's previous read ("" when nothing new)
	Lossy   bool   // more arrived than maxBytes: only the newest part is in Text
	Skipped int64  // raw bytes of the stream left out of Text
	// Partial: the artifact was capped (artifacts.maxBytes), so it does not hold all the task printed;
	// reads past the cap come from the task's live tail.
	Partial bool
}

// ReadOutput returns what task id printed since reader's previous read and moves the reader past it
// (reference §8): never twice, never skipped silently. At most about maxBytes are read: when more arrived, the
// newest part is kept (from a line start when one is in it) and the rest counted in Skipped. While the
// task runs, the read stops before a character or escape sequence cut at the end, so none is mangled
// between reads. wait > 0
// blocks until there is something new, the task ended, or wait passed.
func (s Store) ReadOutput(id, reader string, maxBytes int, wait time.Duration) (Read, error) {
	return s.ReadOutputTo(id, reader, maxBytes, wait, nil)
}

// ReadOutputTo is ReadOutput that hands the read to deliver (when not nil) before it moves the reader
// past it, and moves it only when deliver returns nil: a read whose result could not be written (a
// closed stdout) is given again by the next read instead of being lost. Other reads by the same reader
// wait meanwhile. The error is deliver's, or the read's own.
func (s Store) ReadOutputTo(id, reader string, maxBytes int, wait time.Duration, deliver func(Read) error) (Read, error) {
	if !ValidReader(reader) {
		return Read{}, fmt.Errorf("reader %q: %w", reader, ErrBadReader)
	}
	if maxBytes <= 0 {
		maxBytes = sink.DefaultMaxBytes
	}
	deadline := time.Now().Add(wait)
	for {
		rec, err := s.Load(id) // first the record, then the file: an ended task's artifact is complete
		if err != nil {
			return Read{}, err
		}
		unlock, err := s.lockReader(id, reader)
		if err != nil {
			return Read{}, err
		}
		off := s.offset(id, reader)
		ps := s.pieces(rec)
		if streamEnd(ps) > off || !rec.Running() || !time.Now().Before(deadline) {
			rd, next, err := s.read(rec, off, ps, maxBytes)
			if err == nil && deliver != nil {
				err = deliver(rd)
			}
			if err == nil && next != off {
				err = s.setOffset(rec.TaskID, reader, next)
			}
			unlock()
			return rd, err
		}
		unlock()
		time.Sleep(min(PollInterval, time.Until(deadline)))
	}
}

// read reads from raw offset off of rec's stream, and returns the offset after the read.
func (s Store) read(rec Record, off int64, ps []piece, maxBytes int) (rd Read, next int64, err error) {
	rd = Read{Record: rec}
	size := streamEnd(ps)
	if size <= off {
		return rd, off, nil
	}
	// Read the newest window only: memory stays bounded whatever arrived. Past the artifact cap the
	// window comes from the tail segments; what they no longer hold is skipped, and counted.
	lo, buf, err := readRange(ps, max(off, size-int64(maxBytes)), size)
	if err != nil {
		return rd, off, fmt.Errorf("task %s: output: %w", rec.TaskID, err)
	}
	rd.Partial = len(ps) > 1
	end := len(buf)
	if rec.Running() {
		end = safeEnd(buf)
	}
	start := 0
	if lo > off {
		// Something was skipped: start at the next line start, if the window holds one.
		if i := bytes.IndexByte(buf[:end], '\n'); i >= 0 && i+1 < end {
			start = i + 1
		}
		rd.Lossy, rd.Skipped = true, lo-off+int64(start)
	}
	var text bytes.Buffer
	z := sanitize.NewWriter(&text)
	_, _ = z.Write(buf[start:end])
	_ = z.Close()
	t := text.Bytes()
	if len(t) > maxBytes { // invalid bytes became U+FFFD: keep the end on a character boundary
		cut := len(t) - maxBytes
		for cut < len(t) && !utf8.RuneStart(t[cut]) {
			cut++
		}
		t = t[cut:]
		rd.Lossy = true
	}
	rd.Text = string(t)
	return rd, lo + int64(end), nil
}

// safeEnd is where a read of a running task's bytes stops: at the end of b, or before an incomplete
// UTF-8 character or an escape sequence not yet ended there (the next read starts with it whole). A line
// still being written is read as far as it goes (a prompt, a progress line).
func safeEnd(b []byte) int {
	end := len(b)
	if i := bytes.LastIndexByte(b, 0x1b); i >= 0 && len(b)-i <= sanitize.MaxEscapeBytes && !escapeEnded(b[i:]) {
		end = i
	}
	// Back off over an incomplete character at the end.
	for k := 1; k <= utf8.UTFMax && k <= end; k++ {
		c := b[end-k]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[end-k : end]) {
				end -= k
			}
			break
		}
	}
	return end
}

// escapeEnded reports whether the escape sequence at the start of b (b[0] is ESC) has ended within b.
func escapeEnded(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	for _, c := range b[1:] {
		if c < 0x20 { // BEL ends a string sequence; any other C0 control aborts a sequence
			return true
		}
	}
	switch b[1] {
	case '[':
		for _, c := range b[2:] {
			if c >= 0x40 && c <= 0x7e {
				return true
			}
		}
		return false
	case ']', 'P', 'X', '^', '_':
		return bytes.IndexByte(b, 0x07) >= 0 || bytes.Contains(b[1:], []byte{0x1b, '\\'})
	}
	for _, c := range b[1:] {
		if c >= 0x30 && c <= 0x7e {
			return true
		}
	}
	return false
}

func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// lockReader takes the lock of (task id, reader) — flock on <id>.lock.<name> — so that processes
// reading as the same reader take turns over the read and the offset's update, and never repeat data.
func (s Store) lockReader(id, reader string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, id+".lock."+reader), os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("task %s: reader lock: %w", id, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("task %s: reader lock: %w", id, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// offset is reader's offset into task id's artifact, raw bytes (0 when it never read).
func (s Store) offset(id, reader string) int64 {
	b, err := os.ReadFile(s.readerPath(id, reader))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return max(n, 0)
}

// SetOffset records that reader has been shown task id's output up to raw byte off.
func (s Store) setOffset(id, reader string, off int64) error {
	return s.replace(s.readerPath(id, reader), []byte(strconv.FormatInt(off, 10)+"\n"))
}

// MarkRead records that reader has been shown the task's output up to its current end (a yielded run's
// view, reference §8), and returns the offset.
func (s Store) MarkRead(id, reader string, off int64) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock, err := s.lockReader(id, reader)
	if err != nil {
		return err
	}
	defer unlock()
	return s.setOffset(id, reader, off)
}

// Wait polls task id's record until the task ended or timeout passed (timeout <= 0: it looks once, as
// ReadOutputTo's wait does; a caller that waits with no limit loops on it), and returns the last record
// read.
func (s Store) Wait(id string, timeout time.Duration) (Record, error) {
	deadline := time.Now().Add(timeout)
	for {
		rec, err := s.Load(id)
		if err != nil || !rec.Running() || !time.Now().Before(deadline) {
			return rec, err
		}
		time.Sleep(min(PollInterval, time.Until(deadline)))
	}
}

// Kill stops task id (README "Background tasks"): sig goes to its supervisor, which kills the task's group
// and every descendant as a timeout does (sig, then SIGKILL after the kill grace) and records the end.
// Kill returns once the record says the task ended (or after limit), with killed false when it had already
// ended. A task whose shell ended while processes it started run on still owns them (see [Store]): the
// kill goes to its supervisor the same way, which ends them, records how many (LeftoverKilled) and exits;
// Kill returns once it is gone, with killed true when it ended any.
func (s Store) Kill(id string, sig syscall.Signal, limit time.Duration) (rec Record, killed bool, err error) {
	rec, err = s.Load(id)
	if err != nil || !rec.Running() && rec.Leftovers == 0 {
		return rec, false, err
	}
	if rec.SupervisorPid == 0 { // still starting: wait for the supervisor to report
		if rec, err = s.waitStarted(id, 5*time.Second); err != nil || !rec.Running() || rec.SupervisorPid == 0 {
			return rec, false, err
		}
	}
	if err := s.setKillSignal(rec, sig); err != nil {
		return rec, false, err
	}
	if err := unix.Kill(rec.SupervisorPid, unix.SIGTERM); err != nil {
		if errors.Is(err, unix.ESRCH) {
			rec, err = s.Load(id)
			return rec, false, err
		}
		return rec, false, fmt.Errorf("task %s: kill supervisor %d: %w", id, rec.SupervisorPid, err)
	}
	deadline := time.Now().Add(limit)
	if rec.Running() {
		if rec, err = s.Wait(id, limit); err != nil || rec.Running() || rec.Status == StatusKilled || rec.Leftovers == 0 {
			return rec, err == nil && rec.Status == StatusKilled, err
		}
		// The shell ended by itself meanwhile and left processes running: the signal reaches them.
	}
	// The supervisor exits once nothing of the task is left.
	for Alive(rec.SupervisorPid, rec.SupervisorStart) && time.Now().Before(deadline) {
		time.Sleep(PollInterval)
	}
	rec, err = s.Load(id)
	return rec, err == nil && rec.LeftoverKilled > 0, err
}

func (s Store) waitStarted(id string, limit time.Duration) (Record, error) {
	deadline := time.Now().Add(limit)
	for {
		rec, err := s.Load(id)
		if err != nil || rec.SupervisorPid != 0 || !rec.Running() || time.Now().After(deadline) {
			return rec, err
		}
		time.Sleep(PollInterval)
	}
}

// killPath holds the signal a kill asks for, for the supervisor to send to the tree.
func (s Store) killPath(id string) string { return s.recordPath(id) + ".kill" }

func (s Store) setKillSignal(rec Record, sig syscall.Signal) error {
	return s.replace(s.killPath(rec.TaskID), []byte(strconv.Itoa(int(sig))+"\n"))
}

// KillSignal is the signal a kill of task id asked for (SIGTERM when none was named), and removes the
// request.
func (s Store) KillSignal(id string) syscall.Signal {
	b, err := os.ReadFile(s.killPath(id))
	if err != nil {
		return syscall.SIGTERM
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return syscall.SIGTERM
	}
	return syscall.Signal(n)
}

// Result is task rec's result (reference §8): while it runs, its running status (text `Started task …` when
// started is set, else `Task … is running …`); once it ended, the result a run of it would have printed,
// with the task's fields.
func Result(rec Record, started bool) result.Result {
	var r result.Result
	if rec.Running() {
		d := result.Details{Status: result.StatusRunning, Command: rec.Command, Cwd: rec.Cwd, Shell: rec.Shell,
			TimeoutSeconds: rec.TimeoutSeconds, ArtifactID: rec.ArtifactID, ArtifactPath: rec.ArtifactPath,
			Warnings: rec.Warnings, Sandbox: rec.Sandbox}
		if rec.NormalizedCommand != rec.Command {
			d.NormalizedCommand = rec.NormalizedCommand
		}
		d.DurationMs = time.Since(rec.StartedAt).Milliseconds()
		format := texts.TaskRunning
		if started {
			format = texts.TaskStarted
		}
		r = result.Result{Details: d}
		r.Output = fmt.Sprintf(format, rec.TaskID, rec.Pid, rec.Command)
	} else {
		in := result.Input{Command: rec.Command, NormalizedCommand: rec.NormalizedCommand, Cwd: rec.Cwd,
			Shell: rec.Shell, TimeoutSeconds: rec.TimeoutSeconds, Head: rec.Head, Tail: rec.Tail,
			MaxBytes: rec.MaxBytes, NonZeroExit: rec.NonZeroExit, Warnings: rec.Warnings,
			ArtifactPath: rec.ArtifactPath, Sandbox: rec.Sandbox}
		switch {
		case rec.Outcome != nil:
			o := *rec.Outcome
			in.Outcome, in.Summary, in.Duration = &o, rec.Summary, o.Duration
			if rec.KillSignal > 0 {
				in.KillSignal = syscall.Signal(rec.KillSignal)
				in.Killed = fmt.Sprintf(texts.TaskKilledBy, unix.SignalName(in.KillSignal))
				if rec.LifetimeExceeded {
					in.Killed = fmt.Sprintf(texts.TaskLifetime, result.FormatSeconds(rec.MaxLifetime))
				}
			}
		default:
			msg := rec.Error
			if msg == "" {
				msg = "the task ended without a result"
			}
			in.Err = errors.New(msg)
		}
		r = result.Build(in)
		r.Details.Error = rec.Error
		if rec.ArtifactID != "" && r.Details.ArtifactID == "" {
			r.Details.ArtifactID, r.Details.ArtifactPath = rec.ArtifactID, rec.ArtifactPath
		}
		if rec.EndedAt != nil {
			r.Details.EndedAt = rec.EndedAt.Format(time.RFC3339Nano)
		}
	}
	r.Details.TaskID, r.Details.Pid, r.Details.SupervisorPid = rec.TaskID, rec.Pid, rec.SupervisorPid
	if !rec.StartedAt.IsZero() {
		r.Details.StartedAt = rec.StartedAt.Format(time.RFC3339Nano)
	}
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// ReadResult is the result of an `output` read (reference §8): the text read (or "(no new output)"), then, once
// the task ended, the status line of its run, and a notice naming the artifact when the read skipped.
func ReadResult(rd Read) result.Result {
	r := Result(rd.Record, false)
	body := strings.TrimSuffix(rd.Text, "\n")
	if body == "" {
		body = texts.NoNewOutput
	}
	var footer []string
	if !rd.Record.Running() {
		// The run's own status line (and the timeout's or kill's first line) after what was read.
		final := Result(rd.Record, false)
		if first, _, ok := strings.Cut(final.Output, "\n"); ok && strings.HasPrefix(first, "[") && strings.HasSuffix(first, "]") {
			body = first + "\n" + body
		}
		for _, f := range final.Footer {
			// Status lines and the sandbox's; the run's own truncation notice is about its view.
			if !strings.HasPrefix(f, "[") || strings.HasPrefix(f, "[Sandbox: ") {
				footer = append(footer, f)
			}
		}
		if final.Details.Status == result.StatusError {
			footer = append(footer, final.Output)
		}
	} else if sb := rd.Record.Sandbox; sb != nil {
		if lines := result.DeniedLines(sb.Denied); lines != nil { // refused so far (the supervisor keeps them)
			footer = append(footer, strings.Join(lines, "\n"))
		}
	}
	if rd.Lossy {
		skipped := texts.ReadSkipped
		if rd.Partial {
			skipped = texts.ReadSkippedPartial
		}
		footer = append(footer, fmt.Sprintf(skipped, sink.FormatSize(rd.Skipped), rd.Record.ArtifactID))
		r.Details.Lossy, r.Details.SkippedBytes = true, rd.Skipped
	}
	r.Output, r.Footer = body, footer
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	if o := rd.Record.Outcome; o != nil && !rd.Record.Running() {
		r.Details.Screen = o.Screen // the terminal's last screen; nothing waits on it any more: not in the text
	}
	return r
}

// StreamEnd is how many raw bytes task rec has printed so far, as its readers see the stream (the artifact
// and the tail segments past its cap).
func (s Store) StreamEnd(rec Record) int64 { return streamEnd(s.pieces(rec)) }

// FinalResult is task rec's result as `wait` prints it: [Result], and for a task that ended without a
// result (its supervisor died) the newest output it had left in its artifact (at most rec.MaxBytes
// bytes; what lies before is counted as skipped) ahead of the reason.
func (s Store) FinalResult(rec Record) result.Result {
	r := Result(rec, false)
	if rec.Running() || rec.Outcome != nil {
		return r
	}
	ps := s.pieces(rec)
	size := streamEnd(ps)
	maxBytes := rec.MaxBytes
	if maxBytes <= 0 {
		maxBytes = sink.DefaultMaxBytes
	}
	lo, buf, err := readRange(ps, max(0, size-int64(maxBytes)), size)
	if err != nil || len(buf) == 0 {
		return r
	}
	var text bytes.Buffer
	z := sanitize.NewWriter(&text)
	_, _ = z.Write(buf)
	_ = z.Close()
	if body := strings.TrimSuffix(text.String(), "\n"); body != "" {
		r.Output = body + "\n\n" + r.Output
	}
	if lo > 0 {
		skipped := texts.ReadSkipped
		if len(ps) > 1 {
			skipped = texts.ReadSkippedPartial
		}
		r.Footer = append(r.Footer, fmt.Sprintf(skipped, sink.FormatSize(lo), rec.ArtifactID))
		r.Details.Lossy, r.Details.SkippedBytes = true, lo
	}
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// ErrorResult is the result of a task command that could not read task id (unknown, malformed): status
// error, the message as its text and in details.error.
func ErrorResult(id string, err error) result.Result {
	r := result.Result{IsError: true, Output: err.Error()}
	r.Details.Status, r.Details.Error = result.StatusError, err.Error()
	if ValidID(id) {
		r.Details.TaskID = id
	}
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// KillResult is the result of `kill` (README "Background tasks"): the task's status after the kill and
// details.killed; for a task whose shell had ended before, killed says whether the kill ended processes it
// left running, and details.leftoverKilled how many.
func KillResult(rec Record, killed bool) result.Result {
	r := Result(rec, false)
	r.Details.Killed = &killed
	switch {
	case killed && rec.LeftoverKilled > 0:
		r.Details.LeftoverKilled = rec.LeftoverKilled
		r.Output = fmt.Sprintf(texts.TaskKillLeftovers, Processes(rec.LeftoverKilled), rec.TaskID, r.Details.Status, rec.Command)
	case killed:
		r.Output = fmt.Sprintf(texts.TaskKill, rec.TaskID, rec.Pid, rec.Command)
	case rec.Running():
		r.Output = fmt.Sprintf(texts.TaskKillPending, rec.TaskID, rec.Status)
	default:
		r.Output = fmt.Sprintf(texts.TaskNothingKill, rec.TaskID, r.Details.Status)
	}
	r.Footer = nil
	r.IsError = false
	r.Content = []result.Content{{Type: "text", Text: r.Text()}}
	return r
}

// ParseSignal parses the signal a kill asks for: a name with or without SIG (TERM, SIGTERM, any case) or
// a number from 1 to 64 (15).
func ParseSignal(s string) (syscall.Signal, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if n := unix.SignalNum(name); n != 0 {
		return n, nil
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 && n < 65 && strconv.Itoa(n) == strings.TrimSpace(s) {
		return syscall.Signal(n), nil
	}
	return 0, fmt.Errorf("unknown signal %q (want a name such as TERM or a number such as 15)", s)
}
