package terminal

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

func base() result.Input {
	return result.Input{Command: "cmd", Cwd: "/w", Shell: "/bin/bash", TimeoutSeconds: 300, Head: -1, Tail: -1,
		MaxBytes: 51200, NonZeroExit: result.NonZeroError}
}

func TestStatusWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   func(*result.Input)
		want string
	}{
		{"exit 0", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: 0} }, "exit 0"},
		{"exit 3", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: 3} }, "exit 3"},
		{"timeout", func(in *result.Input) {
			in.TimeoutSeconds = 5
			in.Outcome = &run.Outcome{TimedOut: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
		}, "timed out after 5s"},
		{"timeout fraction", func(in *result.Input) {
			in.TimeoutSeconds = 1.5
			in.Outcome = &run.Outcome{TimedOut: true, ExitCode: -1, Signal: "SIGKILL", SignalNumber: 9}
		}, "timed out after 1.5s"},
		{"ctrl-c", func(in *result.Input) {
			in.CancelSignal = 2
			in.Outcome = &run.Outcome{Cancelled: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
		}, "cancelled (SIGINT)"},
		{"hangup", func(in *result.Input) {
			in.CancelSignal = 1
			in.Outcome = &run.Outcome{Cancelled: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
		}, "cancelled (SIGHUP)"},
		{"cancelled, no signal known", func(in *result.Input) {
			in.Outcome = &run.Outcome{Cancelled: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
		}, "cancelled"},
		{"signal death", func(in *result.Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGKILL", SignalNumber: 9}
		}, "killed by SIGKILL"},
		{"missing status", func(in *result.Input) { in.Outcome = &run.Outcome{ExitCode: -1} }, "no exit status"},
		{"blocked", func(in *result.Input) {
			in.Blocked = &intercept.Block{Tool: "read", Message: "Use read.", Pattern: "^cat"}
		}, "blocked"},
		{"not run", func(in *result.Input) { in.Err = errors.New("Working directory does not exist: /x") }, "not run"},
		{"head closed the pipe", func(in *result.Input) {
			in.Head = 5
			in.Outcome = &run.Outcome{OutputClosed: true, ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13}
			in.Summary = &sink.Summary{Text: "y\n", HeadLimitReached: true}
		}, "exit 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.in(&in)
			if got := StatusWords(result.Build(in)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTerminalFooter checks the whole footer of a result printed once (nothing streamed), uncoloured.
func TestTerminalFooter(t *testing.T) {
	in := base()
	in.TimeoutSeconds = 5
	in.Outcome = &run.Outcome{TimedOut: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
	in.Summary = &sink.Summary{Text: "started\n"}
	in.Warnings = []string{"two\nlines"}
	var b bytes.Buffer
	if err := New(&b, Options{}).Finish(result.Build(in)); err != nil {
		t.Fatal(err)
	}
	want := "[Command timed out after 5 seconds]\nstarted\ntimed out after 5s · 0s\nwarning: two lines\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestTerminalCancelLine: after Ctrl-C the terminal has echoed ^C where the cursor was; the cancel line
// must start on a line of its own, with no blank line when the output had stopped mid-line.
func TestTerminalCancelLine(t *testing.T) {
	cancelled := func(sig syscall.Signal, text string) result.Result {
		in := base()
		in.CancelSignal = sig
		in.Outcome = &run.Outcome{Cancelled: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
		in.Summary = &sink.Summary{Text: text}
		r := result.Build(in)
		r.Streamed = true
		return r
	}
	for _, tc := range []struct {
		name     string
		streamed string // what the live view got; "-" for no live view
		sig      syscall.Signal
		want     string
	}{
		{"after a whole line", "started\n", 2, "started\n\n[Command cancelled]\ncancelled (SIGINT)"},
		{"mid-line", "started", 2, "started\n[Command cancelled]\ncancelled (SIGINT)"},
		{"nothing streamed", "", 2, "\n[Command cancelled]\ncancelled (SIGINT)"},
		{"no live view", "-", 2, "\n[Command cancelled]\n(no output)\ncancelled (SIGINT)"},
		{"SIGTERM echoes nothing", "started\n", 15, "started\n[Command cancelled]\ncancelled (SIGTERM)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			term := New(&b, Options{})
			r := cancelled(tc.sig, tc.streamed)
			if tc.streamed == "-" {
				r = cancelled(tc.sig, "")
				r.Streamed = false
			} else {
				term.Live().Write([]byte(tc.streamed))
			}
			term.Finish(r)
			if got, _, _ := strings.Cut(b.String(), " · "); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTerminalColourOnlyWhenAsked(t *testing.T) {
	in := base()
	in.Outcome = &run.Outcome{ExitCode: 3}
	var plain, colour bytes.Buffer
	New(&plain, Options{}).Finish(result.Build(in))
	New(&colour, Options{Color: true}).Finish(result.Build(in))
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("escape codes without colour: %q", plain.String())
	}
	if !strings.Contains(colour.String(), "\x1b[1;31mexit 3\x1b[0m") {
		t.Errorf("no red status: %q", colour.String())
	}
}

// TestTerminalPreviewKeepsFirstLine: a preview of a cancelled run keeps `[Command cancelled]` above the
// header and counts only output lines as hidden.
func TestTerminalPreviewKeepsFirstLine(t *testing.T) {
	in := base()
	in.CancelSignal = 15
	in.Outcome = &run.Outcome{Cancelled: true, ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15}
	in.Summary = &sink.Summary{Text: "1\n2\n3\n4\n5\n"}
	var b bytes.Buffer
	New(&b, Options{Preview: 2}).Finish(result.Build(in))
	want := "[Command cancelled]\n[3 earlier lines hidden; showing the last 2]\n4\n5\ncancelled (SIGTERM) · "
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got %q, want prefix %q", b.String(), want)
	}
}

func TestLineClamp(t *testing.T) {
	var b bytes.Buffer
	c := NewLineClamp(&b, 5)
	c.Write([]byte("abcdefgh\nxy"))
	c.Write([]byte("zéééé\nok"))
	c.Flush()
	want := "abcde… [3 chars omitted]\nxyzéé… [2 chars omitted]\nok\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestRollerFrame(t *testing.T) {
	var b bytes.Buffer
	r := newRoller(&b, RollOptions{Lines: 3, Cols: 6})
	for _, s := range []string{"1\n2\n3\n", "4\n5\nlong line\n", "pa", "rt"} {
		r.Write([]byte(s))
	}
	r.draw()
	want := "\x1b[?7l[4 earlier lines hidden]\n5\nlong \npart\n\x1b[?7h"
	if b.String() != want {
		t.Fatalf("first frame %q, want %q", b.String(), want)
	}
	b.Reset()
	r.draw() // nothing new: nothing drawn
	if b.Len() != 0 {
		t.Errorf("redrew an unchanged view: %q", b.String())
	}
	r.Write([]byte("\n6\n"))
	r.draw()
	want = "\r\x1b[4A\x1b[J\x1b[?7l[5 earlier lines hidden]\nlong \npart\n6\n\x1b[?7h"
	if b.String() != want {
		t.Errorf("second frame %q, want %q", b.String(), want)
	}
	b.Reset()
	if !r.Close() || b.String() != "\r\x1b[4A\x1b[J" {
		t.Errorf("Close erased %q", b.String())
	}
}

func TestRollerFitsTheScreen(t *testing.T) {
	var b bytes.Buffer
	r := newRoller(&b, RollOptions{Lines: 50, Rows: 5})
	for i := range 20 {
		r.Write([]byte(strings.Repeat("x", i) + "\n"))
	}
	r.draw()
	if rows := strings.Count(b.String(), "\n"); rows != 4 {
		t.Errorf("%d rows on a 5-row screen:\n%q", rows, b.String())
	}
	if r.Close(); strings.Count(b.String(), "\x1b[4A") != 1 {
		t.Errorf("erase: %q", b.String())
	}
}

func TestRollerNothingDrawnNothingErased(t *testing.T) {
	var b bytes.Buffer
	if NewRoller(&b, RollOptions{Lines: 3}).Close() || b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}
