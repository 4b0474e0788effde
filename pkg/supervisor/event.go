package supervisor

import (
	"encoding/json"
	"reflect"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// appendJSON appends ev as a json.Encoder writes it (HTML escaped, a newline after it), byte for byte (a
// test holds the two equal), without encoding/json's reflection: a supervisor sends a done event for every
// run (see codec.go). A terminal's screen and the proxy's refusals, rare, still go through encoding/json.
func (ev Event) appendJSON(b []byte) ([]byte, error) {
	f := fields{b: append(b, '{')}
	f.key("op")
	f.b = appendString(f.b, ev.Op)
	f.int("pid", int64(ev.Pid))
	f.str("text", ev.Text)
	f.int("totalBytes", ev.TotalBytes)
	f.int("totalLines", ev.TotalLines)
	f.int("skipped", ev.Skipped)
	if o := ev.Outcome; o != nil {
		f.key("outcome")
		var err error
		if f.b, err = appendOutcome(f.b, o); err != nil {
			return nil, err
		}
	}
	if ev.Summary != nil {
		f.key("summary")
		f.b = appendSummary(f.b, ev.Summary)
	}
	f.str("error", ev.Error)
	f.str("kind", ev.Kind)
	f.flag("reusable", ev.Reusable)
	return append(f.b, '}', '\n'), nil
}

// appendOutcome appends o's object, as encoding/json writes it.
func appendOutcome(b []byte, o *run.Outcome) ([]byte, error) {
	f := fields{b: append(b, '{')}
	f.int("ExitCode", int64(o.ExitCode))
	f.str("Signal", o.Signal)
	f.int("SignalNumber", int64(o.SignalNumber))
	f.flag("TimedOut", o.TimedOut)
	f.flag("Cancelled", o.Cancelled)
	f.flag("OutputClosed", o.OutputClosed)
	f.flag("OutputIncomplete", o.OutputIncomplete)
	f.ints("LeftoverPids", o.LeftoverPids)
	f.int("Duration", int64(o.Duration))
	f.strs("Warnings", o.Warnings)
	for _, v := range []struct {
		name string
		set  bool
		v    any
	}{{"screen", o.Screen != nil, o.Screen}, {"proxyDenied", len(o.ProxyDenied) > 0, o.ProxyDenied}} {
		if v.set {
			value, err := json.Marshal(v.v)
			if err != nil {
				return nil, err
			}
			f.key(v.name)
			f.b = append(f.b, value...)
		}
	}
	if s := o.Summary; !reflect.ValueOf(s).IsZero() { // omitzero, as encoding/json decides it
		f.key("Summary")
		f.b = appendSummary(f.b, &s)
	}
	return append(f.b, '}'), nil
}

// appendSummary appends s's object, as encoding/json writes it.
func appendSummary(b []byte, s *sink.Summary) []byte {
	f := fields{b: append(b, '{')}
	f.str("Text", s.Text)
	f.int("TotalLines", s.TotalLines)
	f.int("TotalBytes", s.TotalBytes)
	f.int("OutputLines", s.OutputLines)
	f.int("OutputBytes", s.OutputBytes)
	f.flag("Truncated", s.Truncated)
	f.str("TruncatedBy", s.TruncatedBy)
	f.int("ShownStart", s.ShownStart)
	f.int("ShownEnd", s.ShownEnd)
	f.flag("PartialLine", s.PartialLine)
	f.int("LineBytes", s.LineBytes)
	f.flag("LineOpen", s.LineOpen)
	f.str("ArtifactID", s.ArtifactID)
	f.flag("ArtifactCapped", s.ArtifactCapped)
	f.int("ArtifactOmitted", s.ArtifactOmitted)
	f.flag("Binary", s.Binary)
	f.flag("HeadLimitReached", s.HeadLimitReached)
	f.flag("Stopped", s.Stopped)
	f.strs("Warnings", s.Warnings)
	return append(f.b, '}')
}

// decodeEvent reads one event line as encoding/json reads it into a zero Event: by hand when it is as
// appendJSON writes one without a screen or the proxy's refusals (see codec.go), else by encoding/json.
func decodeEvent(line []byte) (Event, error) { return decodeLine(line, (*parser).event) }

func (p *parser) event(ev *Event) bool {
	if !(p.open() && p.key("op") && p.str(&ev.Op) && number(p, "pid", &ev.Pid) && p.text("text", &ev.Text) &&
		number(p, "totalBytes", &ev.TotalBytes) && number(p, "totalLines", &ev.TotalLines) &&
		number(p, "skipped", &ev.Skipped)) {
		return false
	}
	if p.key("outcome") {
		ev.Outcome = new(run.Outcome)
		if !p.outcome(ev.Outcome) {
			return false
		}
	}
	if p.key("summary") {
		ev.Summary = new(sink.Summary)
		if !p.summary(ev.Summary) {
			return false
		}
	}
	return p.text("error", &ev.Error) && p.text("kind", &ev.Kind) && p.flag("reusable", &ev.Reusable) &&
		p.close() && len(p.data) == 0
}

// outcome reads an outcome as appendOutcome writes one without a screen or the proxy's refusals.
func (p *parser) outcome(o *run.Outcome) bool {
	if !(p.open() && number(p, "ExitCode", &o.ExitCode) && p.text("Signal", &o.Signal) &&
		number(p, "SignalNumber", &o.SignalNumber) && p.flag("TimedOut", &o.TimedOut) &&
		p.flag("Cancelled", &o.Cancelled) && p.flag("OutputClosed", &o.OutputClosed) &&
		p.flag("OutputIncomplete", &o.OutputIncomplete) &&
		list(p, "LeftoverPids", &o.LeftoverPids, func(n *int) bool { return parseNumber(p, n) }) &&
		number(p, "Duration", &o.Duration) && list(p, "Warnings", &o.Warnings, p.str)) {
		return false
	}
	if p.key("Summary") && !p.summary(&o.Summary) {
		return false
	}
	return p.close()
}

// summary reads a summary as appendSummary writes one.
func (p *parser) summary(s *sink.Summary) bool {
	return p.open() && p.text("Text", &s.Text) && number(p, "TotalLines", &s.TotalLines) &&
		number(p, "TotalBytes", &s.TotalBytes) && number(p, "OutputLines", &s.OutputLines) &&
		number(p, "OutputBytes", &s.OutputBytes) && p.flag("Truncated", &s.Truncated) &&
		p.text("TruncatedBy", &s.TruncatedBy) && number(p, "ShownStart", &s.ShownStart) &&
		number(p, "ShownEnd", &s.ShownEnd) && p.flag("PartialLine", &s.PartialLine) &&
		number(p, "LineBytes", &s.LineBytes) && p.flag("LineOpen", &s.LineOpen) &&
		p.text("ArtifactID", &s.ArtifactID) && p.flag("ArtifactCapped", &s.ArtifactCapped) &&
		number(p, "ArtifactOmitted", &s.ArtifactOmitted) && p.flag("Binary", &s.Binary) &&
		p.flag("HeadLimitReached", &s.HeadLimitReached) && p.flag("Stopped", &s.Stopped) &&
		list(p, "Warnings", &s.Warnings, p.str) && p.close()
}
