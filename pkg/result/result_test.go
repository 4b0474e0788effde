package result

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

func base() Input {
	return Input{Command: "cmd", Cwd: "/w", Shell: "/bin/bash", TimeoutSeconds: 300, Head: -1, Tail: -1,
		MaxBytes: 51200, NonZeroExit: NonZeroError}
}

func TestBuild(t *testing.T) {
	exited := func(code int) *run.Outcome { return &run.Outcome{ExitCode: code} }
	for _, tc := range []struct {
		name    string
		in      func(*Input)
		text    string
		status  string
		isError bool
		exit    int
	}{
		{"ok", func(in *Input) { in.Outcome, in.Summary = exited(0), &sink.Summary{Text: "hello\n"} },
			"hello", StatusExited, false, 0},
		{"no output", func(in *Input) { in.Outcome = exited(0) }, "(no output)", StatusExited, false, 0},
		{"only newline dropped once", func(in *Input) { in.Outcome, in.Summary = exited(0), &sink.Summary{Text: "a\n\n"} },
			"a\n", StatusExited, false, 0},
		{"non-zero", func(in *Input) { in.Outcome, in.Summary = exited(3), &sink.Summary{Text: "out\nerr\n"} },
			"out\nerr\n\nCommand exited with code 3", StatusExited, true, 3},
		{"non-zero reported", func(in *Input) { in.Outcome, in.NonZeroExit = exited(3), NonZeroReport },
			"(no output)\n\nCommand exited with code 3", StatusExited, false, 3},
		{"timeout", func(in *Input) {
			in.TimeoutSeconds = 1.5
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, TimedOut: true}
			in.Summary = &sink.Summary{Text: "partial\n"}
		}, "[Command timed out after 1.5 seconds]\npartial", StatusTimedOut, true, 124},
		{"cancel", func(in *Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
			in.CancelSignal = 2
		}, "[Command cancelled]\n(no output)", StatusCancelled, true, 130},
		{"signal", func(in *Input) { in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGSEGV", SignalNumber: 11} },
			"(no output)\n\nCommand killed by signal SIGSEGV", StatusSignaled, true, 139},
		{"missing status", func(in *Input) { in.Outcome = &run.Outcome{ExitCode: -1} },
			"(no output)\n\nCommand failed: missing exit status", StatusExited, true, 125},
		{"blocked", func(in *Input) {
			in.Command = "cat x"
			in.Blocked = &intercept.Block{Tool: "read", Message: "Use read.", Pattern: "^cat"}
		}, "Blocked: Use read.\n\nOriginal command: cat x", StatusBlocked, true, 126},
		{"error", func(in *Input) { in.Err = errors.New("Working directory does not exist: /x") },
			"Working directory does not exist: /x", StatusError, true, 125},
		{"bytes notice", func(in *Input) {
			in.Outcome = exited(0)
			in.Summary = &sink.Summary{Text: "9\n10\n", Truncated: true, TruncatedBy: "bytes", TotalLines: 10,
				ShownStart: 9, ShownEnd: 10, OutputLines: 2, ArtifactID: "7"}
		}, "9\n10\n\n[Showing lines 9-10 of 10 (50.0KB limit). Full: artifact://7]", StatusExited, false, 0},
		{"lines notice without artifact, on error", func(in *Input) {
			in.Outcome, in.Tail = exited(1), 2
			in.Summary = &sink.Summary{Text: "9\n10\n", Truncated: true, TruncatedBy: "lines", TotalLines: 10,
				ShownStart: 9, ShownEnd: 10, OutputLines: 2}
		}, "9\n10\n\nCommand exited with code 1\n\n[Showing lines 9-10 of 10]", StatusExited, true, 1},
		{"empty range", func(in *Input) {
			in.Outcome, in.Head = exited(0), 0
			in.Summary = &sink.Summary{Truncated: true, TruncatedBy: "lines", TotalLines: 5, ArtifactID: "1"}
		}, "(no output)\n\n[Showing 0 of 5 lines. Full: artifact://1]", StatusExited, false, 0},
		{"head closed the pipe", func(in *Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13, OutputClosed: true}
			in.Head = 1
			in.Summary = &sink.Summary{Text: "y\n", HeadLimitReached: true}
		}, "y", StatusExited, false, 0},
	} {
		in := base()
		tc.in(&in)
		r := Build(in)
		if got := r.Content[0].Text; got != tc.text {
			t.Errorf("%s: text %q, want %q", tc.name, got, tc.text)
		}
		if r.Details.Status != tc.status || r.IsError != tc.isError || r.Exit != tc.exit {
			t.Errorf("%s: status %s isError %v exit %d; want %s %v %d", tc.name, r.Details.Status, r.IsError, r.Exit,
				tc.status, tc.isError, tc.exit)
		}
	}
}

func TestHeadClosedKeepsProducerStatus(t *testing.T) {
	in := base()
	in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13, OutputClosed: true}
	in.Summary = &sink.Summary{Text: "y\n", HeadLimitReached: true}
	r := Build(in)
	if *r.Details.ExitCode != 0 || r.Details.Signal != "" || r.Details.ProducerStatus == nil ||
		r.Details.ProducerStatus.Signal != "SIGPIPE" || r.Details.ProducerStatus.ExitCode != nil {
		t.Errorf("details %+v producer %+v", r.Details, r.Details.ProducerStatus)
	}
}

func TestFormatSeconds(t *testing.T) {
	for in, want := range map[float64]string{1: "1", 1.5: "1.5", 300: "300", 0.25: "0.25", 3600: "3600"} {
		if got := FormatSeconds(in); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteJSONOneLineNoHTMLEscape(t *testing.T) {
	in := base()
	in.Outcome, in.Summary = &run.Outcome{ExitCode: 0}, &sink.Summary{Text: "<a> & \"b\"\n"}
	var b bytes.Buffer
	if err := Build(in).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Count(s, "\n") != 1 || !strings.Contains(s, `<a> & \"b\"`) || !strings.HasSuffix(s, "}\n") {
		t.Errorf("%s", s)
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

func TestWriteTextPreview(t *testing.T) {
	in := base()
	in.Outcome, in.Summary = &run.Outcome{ExitCode: 2}, &sink.Summary{Text: "1\n2\n3\n4\n"}
	var b bytes.Buffer
	WriteText(&b, Build(in), 2)
	want := "[2 earlier lines hidden; showing the last 2]\n3\n4\n\nCommand exited with code 2\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// slowWriter takes a while per write, like a terminal that cannot keep up.
type slowWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(2 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestAsyncWriterNeverBlocksAndSaysWhatItSkipped(t *testing.T) {
	var w slowWriter
	a := NewAsyncWriter(&w, 1000)
	line := []byte(strings.Repeat("x", 99) + "\n")
	for range 1000 {
		if n, err := a.Write(line); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	a.Close()
	out := w.b.String()
	if !strings.Contains(out, "live view skipped") || !strings.HasSuffix(out, "] …\n"+strings.Repeat(string(line), 10)) &&
		!strings.HasSuffix(out, string(line)) {
		t.Errorf("output %d bytes, no skip marker or the end is lost:\n%s", len(out), out[max(0, len(out)-300):])
	}
	if strings.Count(out, "\n") < 10 {
		t.Errorf("newest lines lost")
	}
	if n, _ := a.Write(line); n != len(line) {
		t.Errorf("Write after Close = %d", n)
	}
}

func TestAsyncWriterKeepsEverythingWhenFast(t *testing.T) {
	var b bytes.Buffer
	a := NewAsyncWriter(&b, 1<<20)
	for i := range 100 {
		fmt.Fprintf(a, "%d\n", i)
	}
	a.Close()
	if strings.Count(b.String(), "\n") != 100 || strings.Contains(b.String(), "skipped") {
		t.Errorf("got %q", b.String())
	}
}
