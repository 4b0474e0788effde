package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentbash/agentbash/pkg/proxy"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/sink"
)

// oddStrings need escaping, or unescaping, each its own way: HTML characters, U+2028 and U+2029, control
// characters, bytes that are not UTF-8, quotes and backslashes, DEL, and characters past ASCII.
var oddStrings = []string{"a <b> & c", "x\u2028y\u2029z", "\x00\x01\b\f\n\r\t\x1f", "\xff\xfe caf\xe9 \xc3",
	`"quoted" \back\slash/`, "\x7f", "é ü 日本 🙂", "\ufffd", "\u00e9\u0301", ""}

// everyEvent is a done event with every field of the event, its outcome and its summary set; it fails t
// when one of them is not, so a field added to any of the three is written (and compared) here.
func everyEvent(t testing.TB) Event {
	var o run.Outcome
	var s sink.Summary
	fill(t, reflect.ValueOf(&o))
	fill(t, reflect.ValueOf(&s))
	o.LeftoverPids, o.Duration = []int{12, -3}, -5*time.Millisecond
	o.Screen = &screen.Screen{Text: "top <&>\nbottom", Rows: 24, Cols: 80, Cursor: screen.Cursor{Row: 2, Col: 7}}
	o.ProxyDenied = []proxy.Denial{{Host: "example.com", Port: 443, Count: 2}}
	o.Summary = s
	o.Summary.Text = "inner\n"
	ev := Event{Op: OpDone, Pid: 7, Text: "t", TotalBytes: 1, TotalLines: 2, Skipped: 3, Outcome: &o, Summary: &s,
		Error: "e", Kind: "k", Reusable: true}
	for _, v := range []reflect.Value{reflect.ValueOf(ev), reflect.ValueOf(o), reflect.ValueOf(s)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("every field: %s.%s is not set", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}
	return ev
}

// eventTable is a table of events: every field set and each unset, a run's typical ones, odd strings in every
// string field, big and negative numbers.
func eventTable(t testing.TB) map[string]Event {
	every := everyEvent(t)
	plain := *every.Outcome
	plain.Screen, plain.ProxyDenied = nil, nil
	table := map[string]Event{
		"every field":       every,
		"every plain field": {Op: OpDone, Outcome: &plain, Summary: every.Summary, Reusable: true},
		"true":              {Op: OpDone, Outcome: &run.Outcome{Duration: 1234567}, Summary: &sink.Summary{}, Reusable: true},
		"nothing to say":    {Op: OpDone, Outcome: &run.Outcome{}, Summary: &sink.Summary{}},
		"echo": {Op: OpDone, Outcome: &run.Outcome{Duration: 2 * time.Millisecond}, Summary: &sink.Summary{
			Text: "hi\n", TotalLines: 1, TotalBytes: 3, OutputLines: 1, OutputBytes: 3, ShownStart: 1, ShownEnd: 1}},
		"killed": {Op: OpDone, Outcome: &run.Outcome{ExitCode: -1, Signal: "SIGKILL", SignalNumber: 9, TimedOut: true,
			Warnings: []string{"w1", ""}}, Summary: &sink.Summary{Warnings: []string{}}},
		"empty lists":   {Op: OpDone, Outcome: &run.Outcome{LeftoverPids: []int{}, Warnings: []string{}, Summary: sink.Summary{Warnings: []string{}}}},
		"big numbers":   {Op: OpOutput, Pid: math.MaxInt, TotalBytes: math.MaxInt64, TotalLines: math.MinInt64, Skipped: -1},
		"started":       {Op: OpStarted, Pid: 4242},
		"output":        {Op: OpOutput, Text: "line 1\nline 2\n", TotalBytes: 14, TotalLines: 2},
		"retired":       {Op: OpDone, Kind: kindRetired, Error: "supervisor retired: it started without the sandbox's proxy"},
		"screen only":   {Op: OpDone, Outcome: &run.Outcome{Screen: &screen.Screen{}}},
		"denials only":  {Op: OpDone, Outcome: &run.Outcome{ProxyDenied: []proxy.Denial{{}}}},
		"no op":         {},
		"odd op":        {Op: "x\"<y>\xff"},
		"long duration": {Op: OpDone, Outcome: &run.Outcome{Duration: math.MinInt64}},
	}
	for i, s := range oddStrings {
		o := run.Outcome{Signal: s, Warnings: []string{s, s}, Summary: sink.Summary{Text: s, TruncatedBy: s}}
		table["odd string "+string(rune('a'+i))] = Event{Op: s, Text: s, Outcome: &o,
			Summary: &sink.Summary{Text: s, TruncatedBy: s, ArtifactID: s, Warnings: []string{s}}, Error: s, Kind: s}
	}
	return table
}

// encodeEvent is what a json.Encoder writes for ev.
func encodeEvent(t testing.TB, ev Event) []byte {
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(ev); err != nil {
		t.Fatal(err)
	}
	return want.Bytes()
}

// TestEventAppendJSON: an event as appendJSON writes it is a json.Encoder's encoding, byte for byte.
func TestEventAppendJSON(t *testing.T) {
	for name, ev := range eventTable(t) {
		got, err := ev.appendJSON([]byte{0})
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeEvent(t, ev); !bytes.Equal(got, append([]byte{0}, want...)) {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got[1:], want)
		}
	}
}

// sameEvent fails t unless decodeEvent reads line as encoding/json does: the same event, or an error both
// times.
func sameEvent(t testing.TB, line []byte) {
	got, gotErr := decodeEvent(line)
	var want Event
	wantErr := json.Unmarshal(line, &want)
	if (gotErr == nil) != (wantErr == nil) || wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\ngot  %+v (%v)\nwant %+v (%v)", line, got, gotErr, want, wantErr)
	}
}

// TestDecodeEvent: decodeEvent reads what appendJSON writes as encoding/json does, by hand unless there
// is a screen or a proxy's refusal in it (so a field added to an event, an outcome or a summary that the
// parser does not know fails here), and texts this package never writes as encoding/json does.
func TestDecodeEvent(t *testing.T) {
	for name, ev := range eventTable(t) {
		line, err := ev.appendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		sameEvent(t, line)
		rare := ev.Outcome != nil && (ev.Outcome.Screen != nil || ev.Outcome.ProxyDenied != nil)
		if p := (parser{data: line}); !rare && !p.event(new(Event)) {
			t.Errorf("%s: the parser does not read %s", name, line)
		}
	}
	plain, _ := eventTable(t)["every plain field"].appendJSON(nil)
	plainText := string(bytes.TrimSuffix(plain, []byte("\n")))
	texts := []string{"", "null", "{}", "[]", `"x"`, `{"op":"done"}x`, `{"op":"done"} `, ` {"op":"done"}`,
		`{"op":"done"}{"op":"done"}`, `{"op":"done","pid":01}`, `{"op":"done","pid":-0}`, `{"op":"done","pid":1.0}`,
		`{"op":"done","pid":1e3}`, `{"op":"done","pid":99999999999999999999}`, `{"op":"done","pid":"1"}`,
		`{"op":"done","pid":null}`, `{"op":"done","reusable":false}`, `{"op":"done","reusable":true,"reusable":false}`,
		`{"op":"done","Reusable":true}`, `{"OP":"done"}`, `{"op":"done","nosuch":1}`, `{"pid":1,"op":"done"}`,
		`{ "op" : "done" }`, `{"op":"d\/one"}`, `{"op":"\ud83d\ude00"}`, `{"op":"\ud83d"}`, `{"op":"\u00E9"}`,
		`{"op":"\u12"}`, `{"op":"\x"}`, `{"op":"a` + "\x01" + `"}`, `{"op":"a` + "\xff" + `"}`, `{"op":"a\` + "\n" + `"}`,
		`{"op":"done","outcome":null}`, `{"op":"done","outcome":{}}`, `{"op":"done","outcome":{,"ExitCode":1}}`,
		`{"op":"done","outcome":{"ExitCode":1"Signal":"x"}}`, `{"op":"done","outcome":{"LeftoverPids":[]}}`,
		`{"op":"done","outcome":{"LeftoverPids":[1,]}}`, `{"op":"done","outcome":{"LeftoverPids":[1 ,2]}}`,
		`{"op":"done","outcome":{"Warnings":["a",1]}}`, `{"op":"done","outcome":{"Summary":{}}}`,
		`{"op":"done","outcome":{"Summary":null}}`, `{"op":"done","summary":{"Text":"x","Text":"y"}}`,
		`{"op":"done","outcome":{"ExitCode":2147483648}}`, `{"op":"done","outcome":{"Duration":-9223372036854775809}}`,
		`{"op":"done"`, `{"op":"done",}`, `{"op":`, `{"op"`, `{`,
	}
	for _, edit := range [][2]string{
		{`"ExitCode":`, `"exitcode":`},
		{`"Duration":`, `"Duration":-`},
		{`"Text":"xText"`, `"Text":"x\nText"`},
		{`"Text":"xText"`, `"Text":"x\u2028\u003c"`},
		{`"summary":{`, `"summary":{"screen":null,`},
		{`"reusable":true`, `"reusable":true,"op":"x"`},
	} {
		if !strings.Contains(plainText, edit[0]) {
			t.Fatalf("%s does not hold %s", plainText, edit[0])
		}
		texts = append(texts, strings.Replace(plainText, edit[0], edit[1], 1))
	}
	for _, text := range texts {
		sameEvent(t, []byte(text))
	}
}

// FuzzEvent: for any line, decodeEvent reads it as encoding/json does, and what encoding/json reads from
// it appendJSON writes as a json.Encoder does.
func FuzzEvent(f *testing.F) {
	for _, ev := range eventTable(f) {
		line, _ := ev.appendJSON(nil)
		f.Add(bytes.TrimSuffix(line, []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		sameEvent(t, line)
		var ev Event
		if json.Unmarshal(line, &ev) != nil {
			return
		}
		got, err := ev.appendJSON(nil)
		if want := encodeEvent(t, ev); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: got\n%s (%v)\nwant\n%s", ev, got, err, want)
		}
	})
}

// FuzzEventStrings: events whose strings and numbers are anything are written as a json.Encoder writes
// them and read back as encoding/json reads them.
func FuzzEventStrings(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, s, int64(len(s)))
	}
	f.Add("", "x", int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		ev := Event{Op: a, Text: b, TotalBytes: n, Outcome: &run.Outcome{Signal: b, Duration: time.Duration(n),
			Warnings: []string{a, b}}, Summary: &sink.Summary{Text: a, ArtifactID: b, ShownEnd: n}, Error: b, Kind: a}
		got, err := ev.appendJSON(nil)
		if want := encodeEvent(t, ev); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: got\n%s (%v)\nwant\n%s", ev, got, err, want)
		}
		sameEvent(t, bytes.TrimSuffix(got, []byte("\n")))
	})
}

// requestTable is a table of requests: every field set, each operation, specs the parser reads and ones it
// leaves to encoding/json.
func requestTable(t testing.TB) map[string]Request {
	grace, negative := 250*time.Millisecond, time.Duration(math.MinInt64)
	plain := run.Spec{Command: "true", Shell: "/usr/bin/bash", Dir: "/tmp", Env: run.RawList{"A=1", "PATH=/bin"},
		Timeout: time.Second, KillGrace: 3 * time.Second, Output: run.Output{MaxBytes: 51200, Head: -1, Tail: -1,
			ArtifactDir: "/s/a", ArtifactMaxBytes: 1 << 30, Command: "true", Cwd: "/tmp"}}
	task := plain
	task.Task, task.Wrapper, task.Output.Keep = &run.Task{Dir: "/s/t", ID: "t1", Attached: true}, run.RawList{"nice"}, true
	odd := plain
	odd.Command, odd.Dir, odd.Env = "a <b> & c\u2028\xff", "/t&mp", run.RawList{"X=<\u2029>"}
	every := Request{Op: OpStart, Spec: &plain, Stdin: true, Live: true, Reuse: true, Quiet: true, KillGrace: &grace}
	// A field added to Request must be set in every, and so be read by the parser, or TestDecodeRequest fails.
	for i, v := 0, reflect.ValueOf(every); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("every: Request.%s is not set", v.Type().Field(i).Name)
		}
	}
	return map[string]Request{
		"every field":  every,
		"start":        {Op: OpStart, Spec: &plain, Reuse: true, Quiet: true},
		"task":         {Op: OpStart, Spec: &task, Live: true},
		"odd strings":  {Op: OpStart, Spec: &odd},
		"cancel":       {Op: OpCancel, KillGrace: &grace},
		"cancel, min":  {Op: OpCancel, KillGrace: &negative},
		"plain cancel": {Op: OpCancel},
		"detach":       {Op: OpDetach},
		"odd op":       {Op: "x\"<y>\xff"},
		"nothing":      {},
	}
}

// sameRequest fails t unless decodeRequest reads line as encoding/json does: the same request, or an
// error both times.
func sameRequest(t testing.TB, line []byte) {
	got, gotErr := decodeRequest(line)
	var want requestFields
	wantErr := json.Unmarshal(line, &want)
	if (gotErr == nil) != (wantErr == nil) || wantErr == nil && !reflect.DeepEqual(got, Request(want)) {
		t.Fatalf("%q:\ngot  %+v (%v)\nwant %+v (%v)", line, got, gotErr, want, wantErr)
	}
}

// TestDecodeRequest: decodeRequest reads what appendJSON writes as encoding/json does, by hand unless
// its spec has something to unescape (so a field added to Request that the parser does not know fails
// here), and texts a client never writes as encoding/json does.
func TestDecodeRequest(t *testing.T) {
	var plainText string
	for name, req := range requestTable(t) {
		line, err := req.appendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		sameRequest(t, line)
		if p := (parser{data: line}); name != "odd strings" && name != "odd op" && !p.request(new(Request)) {
			t.Errorf("%s: the parser does not read %s", name, line)
		}
		if name == "every field" {
			plainText = string(line)
		}
	}
	texts := []string{"", "null", "{}", `{"op":"start","spec":null}`, `{"op":"start","spec":{}}`,
		`{"op":"cancel","killGrace":null}`, `{"op":"cancel","killGrace":1.5}`, `{"op":"cancel","killGrace":01}`,
		`{"op":"cancel","killGrace":9223372036854775808}`, `{"op":"cancel"}x`, `{"op":"cancel"}{}`}
	for _, edit := range [][2]string{
		{`"stdin":true`, `"stdin":false`},
		{`"stdin":true`, `"Stdin":true`},
		{`"stdin":true,"live":true`, `"live":true,"stdin":true`},
		{`"timeout":1000000000`, `"timeout":01000000000`},
		{`"timeout":1000000000`, `"timeout":1e9`},
		{`"command":"true"`, `"command":"tr\u0075e"`},
		{`"cwd":"/tmp"}}`, `"cwd":"/tmp"}} `},
		{`"cwd":"/tmp"}}`, `"cwd":"/tmp"},"nosuch":1}`},
		{`"cwd":"/tmp"}}`, `"cwd":"/tmp"}`},
		{`"killGrace":250000000}`, `"killGrace":250000000,"op":"cancel"}`},
	} {
		if !strings.Contains(plainText, edit[0]) {
			t.Fatalf("%s does not hold %s", plainText, edit[0])
		}
		texts = append(texts, strings.Replace(plainText, edit[0], edit[1], 1))
	}
	for _, text := range texts {
		sameRequest(t, []byte(text))
	}
}

// FuzzDecodeRequest: for any line, decodeRequest reads it as encoding/json does.
func FuzzDecodeRequest(f *testing.F) {
	for _, req := range requestTable(f) {
		line, _ := req.appendJSON(nil)
		f.Add(bytes.TrimSuffix(line, []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, line []byte) { sameRequest(t, line) })
}

// TestLines: lines reads each line without its newline, however the stream comes (a byte at a time),
// one longer than its buffer whole, and a last line without a newline before io.EOF.
func TestLines(t *testing.T) {
	long := strings.Repeat("x", 2*linesBuffer+100)
	for _, r := range []func(string) io.Reader{
		func(s string) io.Reader { return strings.NewReader(s) },
		func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	} {
		l := newLines(r("a\n\n" + long + "\nlast"))
		for _, want := range []string{"a", "", long, "last"} {
			got, err := l.next()
			if err != nil || string(got) != want {
				t.Fatalf("got %.20q (%v), want %.20q", got, err, want)
			}
		}
		if _, err := l.next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last line: %v, want EOF", err)
		}
	}
}
