package result

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/agentbash/agentbash/pkg/screen"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
	"github.com/agentbash/agentbash/pkg/texts"
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
	}{
		{"ok", func(in *Input) { in.Outcome, in.Summary = exited(0), &sink.Summary{Text: "hello\n"} },
			"hello", StatusExited, false},
		{"no output", func(in *Input) { in.Outcome = exited(0) }, "(no output)", StatusExited, false},
		{"only newline dropped once", func(in *Input) { in.Outcome, in.Summary = exited(0), &sink.Summary{Text: "a\n\n"} },
			"a\n", StatusExited, false},
		{"non-zero", func(in *Input) { in.Outcome, in.Summary = exited(3), &sink.Summary{Text: "out\nerr\n"} },
			"out\nerr\n\nCommand exited with code 3", StatusExited, true},
		{"non-zero reported", func(in *Input) { in.Outcome, in.NonZeroExit = exited(3), NonZeroReport },
			"(no output)\n\nCommand exited with code 3", StatusExited, false},
		{"timeout", func(in *Input) {
			in.TimeoutSeconds = 1.5
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, TimedOut: true}
			in.Summary = &sink.Summary{Text: "partial\n"}
		}, "[Command timed out after 1.5 seconds]\npartial", StatusTimedOut, true},
		{"cancel", func(in *Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGTERM", SignalNumber: 15, Cancelled: true}
			in.CancelSignal = 2
		}, "[Command cancelled]\n(no output)", StatusCancelled, true},
		{"signal", func(in *Input) { in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGSEGV", SignalNumber: 11} },
			"(no output)\n\nCommand killed by signal SIGSEGV", StatusSignaled, true},
		{"missing status", func(in *Input) { in.Outcome = &run.Outcome{ExitCode: -1} },
			"(no output)\n\nCommand failed: missing exit status", StatusExited, true},
		{"blocked", func(in *Input) {
			in.Command = "cat x"
			in.Blocked = &intercept.Block{Tool: "read", Message: "Use read.", Pattern: "^cat"}
		}, "Blocked: Use read.\n\nOriginal command: cat x", StatusBlocked, true},
		{"error", func(in *Input) { in.Err = errors.New("Working directory does not exist: /x") },
			"Working directory does not exist: /x", StatusError, true},
		{"bytes notice", func(in *Input) {
			in.Outcome = exited(0)
			in.Summary = &sink.Summary{Text: "9\n10\n", Truncated: true, TruncatedBy: "bytes", TotalLines: 10,
				ShownStart: 9, ShownEnd: 10, OutputLines: 2, ArtifactID: "7"}
		}, "9\n10\n\n[Showing lines 9-10 of 10 (50.0KB limit). Full: artifact://7]", StatusExited, false},
		{"lines notice without artifact, on error", func(in *Input) {
			in.Outcome, in.Tail = exited(1), 2
			in.Summary = &sink.Summary{Text: "9\n10\n", Truncated: true, TruncatedBy: "lines", TotalLines: 10,
				ShownStart: 9, ShownEnd: 10, OutputLines: 2}
		}, "9\n10\n\nCommand exited with code 1\n\n[Showing lines 9-10 of 10]", StatusExited, true},
		{"empty range", func(in *Input) {
			in.Outcome, in.Head = exited(0), 0
			in.Summary = &sink.Summary{Truncated: true, TruncatedBy: "lines", TotalLines: 5, ArtifactID: "1"}
		}, "(no output)\n\n[Showing 0 of 5 lines. Full: artifact://1]", StatusExited, false},
		{"binary, read to its end", func(in *Input) {
			in.Outcome = exited(0)
			in.Summary = &sink.Summary{Text: "[binary output: 20000 bytes]", Binary: true, TotalBytes: 20000, ArtifactID: "4"}
		}, "[binary output: 20000 bytes]\n\n[Raw bytes: artifact://4]", StatusExited, false},
		{"binary behind a head limit, closed early", func(in *Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13, OutputClosed: true, OutputIncomplete: true}
			in.Head = 5
			in.Summary = &sink.Summary{Text: "[binary output: 8421376 bytes]", Binary: true, TotalBytes: 8421376,
				ArtifactID: "4", HeadLimitReached: true, Stopped: true}
		}, "[binary output: at least 8421376 bytes]\n\n[Raw bytes: artifact://4]", StatusExited, false},
		{"head closed the pipe", func(in *Input) {
			in.Outcome = &run.Outcome{ExitCode: -1, Signal: "SIGPIPE", SignalNumber: 13, OutputClosed: true, OutputIncomplete: true}
			in.Head = 1
			in.Summary = &sink.Summary{Text: "y\n", HeadLimitReached: true}
		}, "y", StatusExited, false},
	} {
		in := base()
		tc.in(&in)
		r := Build(in)
		if got := r.Content[0].Text; got != tc.text {
			t.Errorf("%s: text %q, want %q", tc.name, got, tc.text)
		}
		if r.Details.Status != tc.status || r.IsError != tc.isError {
			t.Errorf("%s: status %s isError %v; want %s %v", tc.name, r.Details.Status, r.IsError, tc.status, tc.isError)
		}
	}
}

// The notice of reference §3.9, verbatim, for each kind of cut: whole lines, an empty range, a cut inside one
// line, and a stream that was not read to its end (lower bounds, a partial artifact).
func TestNotice(t *testing.T) {
	lines := func(start, end, total int64, by string, complete bool) Truncation {
		return Truncation{Direction: "tail", TruncatedBy: by, Complete: complete, TotalLines: total,
			ShownRange: Range{Start: start, End: end}, OutputLines: end - start + 1, ArtifactID: "7", MaxBytes: 51200}
	}
	inLine := func(dir string, line, total, shown int64, complete bool) Truncation {
		return Truncation{Direction: dir, TruncatedBy: "bytes", Complete: complete, TotalLines: total,
			ShownRange: Range{Start: line, End: line}, OutputLines: 1, OutputBytes: shown, ArtifactID: "7", MaxBytes: 51200}
	}
	noArtifact := lines(9, 10, 10, "lines", true)
	noArtifact.ArtifactID = ""
	capped := lines(1, 5, 400, "lines", true)
	capped.ArtifactCapped = true
	empty := lines(0, 0, 5, "lines", false)
	empty.OutputLines = 0
	headTail := lines(2, 3, 10, "lines", true)
	headTail.Head, headTail.Tail = new(3), new(2)
	headOne := lines(1, 1, 10, "lines", true)
	headOne.Head, headOne.Tail = new(1), new(2)
	for _, tc := range []struct {
		name string
		t    Truncation
		line LineCut
		want string
	}{
		{"bytes", lines(91468, 100000, 100000, "bytes", true), LineCut{},
			"[Showing lines 91468-100000 of 100000 (50.0KB limit). Full: artifact://7]"},
		{"grep | head -5, read to the end", lines(1, 5, 400, "lines", true), LineCut{},
			"[Showing lines 1-5 of 400. Full: artifact://7]"},
		{"yes | head -n 5, closed early", lines(1, 5, 4210688, "lines", false), LineCut{},
			"[Showing lines 1-5 of at least 4210688. Partial: artifact://7]"},
		{"bytes, incomplete", lines(1, 10384, 300000, "bytes", false), LineCut{},
			"[Showing lines 1-10384 of at least 300000 (50.0KB limit). Partial: artifact://7]"},
		{"no artifact", noArtifact, LineCut{}, "[Showing lines 9-10 of 10]"},
		{"--head 3 --tail 2: both said", headTail, LineCut{},
			"[Showing lines 2-3 of 10. Head then tail: the first 3 lines, then the last 2 of those. Full: artifact://7]"},
		{"--head 1 --tail 2", headOne, LineCut{},
			"[Showing lines 1-1 of 10. Head then tail: the first 1 line, then the last 2 of those. Full: artifact://7]"},
		{"empty range, incomplete", empty, LineCut{}, "[Showing 0 of at least 5 lines. Partial: artifact://7]"},
		{"capped", capped, LineCut{}, "[Showing lines 1-5 of 400. Artifact capped, 1.0KB left out of it. Partial: artifact://7]"},
		{"print(y*200000)", inLine("tail", 1, 1, 51200, true), LineCut{Bytes: 200001},
			"[Showing the last 50.0KB of line 1 (195.3KB). Full: artifact://7]"},
		{"head window of one long line", inLine("head", 1, 1, 51200, true), LineCut{Bytes: 200001},
			"[Showing the first 50.0KB of line 1 (195.3KB). Full: artifact://7]"},
		{"the last of eleven lines", inLine("tail", 11, 11, 51200, true), LineCut{Bytes: 300001},
			"[Showing the last 50.0KB of line 11 (293.0KB) of 11 lines. Full: artifact://7]"},
		{"the first of many, read to the end", inLine("head", 1, 400, 51199, true), LineCut{Bytes: 200001},
			"[Showing the first 50.0KB of line 1 (195.3KB) of 400 lines. Full: artifact://7]"},
		{"an endless line, closed early", inLine("head", 1, 1, 51200, false), LineCut{Bytes: 8421376, Open: true},
			"[Showing the first 50.0KB of line 1 (at least 8.0MB) of at least 1 line. Partial: artifact://7]"},
		{"an ended line, closed early", inLine("head", 1, 3, 51200, false), LineCut{Bytes: 200001},
			"[Showing the first 50.0KB of line 1 (195.3KB) of at least 3 lines. Partial: artifact://7]"},
	} {
		if got := Notice(tc.t, 1024, tc.line); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// meta.truncation always carries complete: true when the stream was read to its end, false when the
// runner stopped reading first (a head limit's early close, a drain cut short) or the sink refused more.
func TestTruncationComplete(t *testing.T) {
	cut := func() *sink.Summary {
		return &sink.Summary{Text: "1\n", Truncated: true, TruncatedBy: "lines", TotalLines: 9, ShownStart: 1,
			ShownEnd: 1, OutputLines: 1, ArtifactID: "2", HeadLimitReached: true}
	}
	for _, tc := range []struct {
		name     string
		o        run.Outcome
		stopped  bool
		complete bool
		notice   string
	}{
		{"read to the end", run.Outcome{}, false, true, "[Showing lines 1-1 of 9. Full: artifact://2]"},
		{"closed after the read-on time", run.Outcome{OutputClosed: true, OutputIncomplete: true, ExitCode: -1,
			Signal: "SIGPIPE", SignalNumber: 13}, false, false, "[Showing lines 1-1 of at least 9. Partial: artifact://2]"},
		{"the sink refused more", run.Outcome{OutputClosed: true, OutputIncomplete: true, ExitCode: -1, Signal: "SIGPIPE",
			SignalNumber: 13}, true, false, "[Showing lines 1-1 of at least 9. Partial: artifact://2]"},
		{"a leftover held the pipe", run.Outcome{OutputIncomplete: true}, false, false,
			"[Showing lines 1-1 of at least 9. Partial: artifact://2]"},
		{"a backend that only says the sink refused", run.Outcome{}, true, false,
			"[Showing lines 1-1 of at least 9. Partial: artifact://2]"},
	} {
		in := base()
		in.Head = 1
		in.Outcome, in.Summary = &tc.o, cut()
		in.Summary.Stopped = tc.stopped
		r := Build(in)
		m := r.Details.Meta
		if m == nil || m.Truncation.Complete != tc.complete || !strings.HasSuffix(r.Text(), "\n\n"+tc.notice) ||
			r.Details.Status != StatusExited || *r.Details.ExitCode != 0 {
			t.Errorf("%s: %+v\n%s", tc.name, m, r.Text())
		}
		var b bytes.Buffer
		r.WriteJSON(&b)
		if want := fmt.Sprintf(`"complete":%v`, tc.complete); !strings.Contains(b.String(), want) {
			t.Errorf("%s: no %s in %s", tc.name, want, b.String())
		}
	}
}

// The early-close exception (exit 0, the raw status in producerStatus) is only for a pipe agentbash
// closed: a head-limited command that ended by itself keeps its own status.
func TestHeadLimitEndedByItselfKeepsStatus(t *testing.T) {
	in := base()
	in.Head = 5
	in.Outcome = &run.Outcome{ExitCode: 2}
	in.Summary = &sink.Summary{Text: "a\n", HeadLimitReached: true}
	r := Build(in)
	if r.Details.ProducerStatus != nil || *r.Details.ExitCode != 2 || !r.IsError {
		t.Errorf("%+v", r.Details)
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

func TestWriteWarnings(t *testing.T) {
	var b bytes.Buffer
	WriteWarnings(&b, []string{"a", "b\nc\x1b[31m"})
	want := "agentbash: warning: a\nagentbash: warning: b c [31m\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestAddScreen: a screen joins the text when it shows a prompt, cut to the window from a line start and
// saying so; details.screen keeps it whole; a screen that shows nothing waiting stays out of the text.
func TestAddScreen(t *testing.T) {
	prompt := &screen.Screen{Text: "1\n2\n3\n4\nok? ", Rows: 10, Cols: 20, Cursor: screen.Cursor{Row: 5, Col: 5}}
	r := Result{Output: "out"}
	r.AddScreen(prompt, 0)
	if r.Text() != "out\n--- screen ---\n1\n2\n3\n4\nok? " || r.Details.Screen != prompt {
		t.Errorf("whole: %q", r.Text())
	}
	r = Result{Output: "out"}
	r.AddScreen(prompt, 7)
	if r.Text() != "out\n--- screen ---\n[3 rows above left out: the whole screen is in details.screen.text]\n4\nok? " {
		t.Errorf("cut: %q", r.Text())
	}
	done := &screen.Screen{Text: "bye", Rows: 10, Cols: 20, Cursor: screen.Cursor{Row: 2, Col: 1}}
	r = Result{Output: "bye"}
	r.AddScreen(done, 0)
	if r.Text() != "bye" || r.Details.Screen != done {
		t.Errorf("not waiting: %q", r.Text())
	}
}

// What the sandbox's proxy refused is in details.sandbox.denied (a copy of the input's Sandbox) and a line
// each in the text, five at most, then how many more; past the proxy's own list, the refusals it did not
// list are counted apart from the hosts.
func TestDenied(t *testing.T) {
	build := func(denied []proxy.Denial) (Result, *Sandbox) {
		in := base()
		sb := &Sandbox{Mode: "workspace-write", Network: "proxy", Enforced: []string{"proxy"}}
		in.Sandbox, in.Outcome = sb, &run.Outcome{ExitCode: 56, ProxyDenied: denied}
		return Build(in), sb
	}
	r, in := build([]proxy.Denial{{Host: "example.com", Port: 443, Count: 2}, {Host: "::1", Port: 80, Count: 1}})
	how := "\n" + texts.SandboxBlockedHow
	if !strings.HasSuffix(r.Text(), "Command exited with code 56\n\n[Sandbox: blocked network access to example.com:443]\n"+
		"[Sandbox: blocked network access to [::1]:80]"+how) {
		t.Errorf("text: %q", r.Text())
	}
	if d := r.Details.Sandbox.Denied; len(d) != 2 || d[0] != (SandboxDenied{Host: "example.com", Port: 443, Count: 2}) || in.Denied != nil {
		t.Errorf("denied %+v, the input's %+v", d, in.Denied)
	}
	var many []proxy.Denial
	for i := range 8 {
		many = append(many, proxy.Denial{Host: fmt.Sprintf("h%d.org", i), Port: 443, Count: 1})
	}
	r, _ = build(many)
	if strings.Count(r.Text(), "[Sandbox: blocked") != 6 || !strings.HasSuffix(r.Text(), "[Sandbox: blocked network access to 3 more hosts (details.sandbox.denied)]"+how) {
		t.Errorf("many: %q", r.Text())
	}
	r, _ = build(append(many, proxy.Denial{Host: proxy.OtherHosts, Count: 40}))
	if !strings.HasSuffix(r.Text(), "to 3 more hosts, and 40 more times to hosts not listed (details.sandbox.denied)]"+how) || len(r.Details.Sandbox.Denied) != 9 {
		t.Errorf("others: %q", r.Text())
	}
	in2 := base()
	in2.Outcome = &run.Outcome{ProxyDenied: many} // not sandboxed: nothing to say it in
	if r := Build(in2); strings.Contains(r.Text(), "Sandbox") {
		t.Errorf("unsandboxed: %q", r.Text())
	}
}
