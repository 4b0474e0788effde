package supervisor

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// appendJSON appends r as a json.Encoder writes it (HTML escaped, a newline after it), byte for byte (a
// test holds the two equal), without encoding/json: a start request is the first thing a run's client
// encodes, on its way to the supervisor, and encoding/json's first use of a type (even with the spec's
// own run.Spec.MarshalJSON) was a tenth of a millisecond of it.
func (r Request) appendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, `{"op":`...)
	b, err := run.AppendString(b, r.Op) // HTML-escaped with the rest, below
	if err != nil {
		return nil, err
	}
	if r.Spec != nil {
		spec, err := r.Spec.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"spec":`...), spec...)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"stdin", r.Stdin}, {"live", r.Live}, {"reuse", r.Reuse}, {"quiet", r.Quiet}} {
		if f.set {
			b = append(append(append(b, ',', '"'), f.name...), `":true`...)
		}
	}
	if r.KillGrace != nil {
		b = strconv.AppendInt(append(b, `,"killGrace":`...), int64(*r.KillGrace), 10)
	}
	b = append(b, '}')
	if htmlEscapes(b[start:]) { // inside strings: escaped as encoding/json does
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, b[start:])
		b = append(b[:start], escaped.Bytes()...)
	}
	return append(b, '\n'), nil
}

// htmlEscapes reports whether b holds a character json.HTMLEscape escapes: <, >, &, U+2028 or U+2029.
// One vectorized pass a character: bytes.ContainsAny with the two characters past ASCII in its set decodes
// b a character at a time and looks each up in the set, 10 µs of a start request's 2 KB (0.2 µs here).
func htmlEscapes(b []byte) bool {
	return bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 ||
		bytes.Contains(b, []byte("\u2028")) || bytes.Contains(b, []byte("\u2029"))
}

// decodeRequest reads one request line as encoding/json reads it into a zero Request: by hand when it is
// as appendJSON writes one with a spec run.ParseSpec reads (every plain run's), else by encoding/json —
// a reused supervisor reads each later run's request here, on the run's way to its shell (see codec.go).
func decodeRequest(line []byte) (Request, error) { return decodeLine(line, (*parser).request) }

func (p *parser) request(r *Request) bool {
	if !(p.open() && p.key("op") && p.str(&r.Op)) {
		return false
	}
	if p.key("spec") {
		spec, rest, ok := run.ParseSpec(p.data)
		if !ok {
			return false
		}
		r.Spec, p.data = &spec, rest
	}
	if !(p.flag("stdin", &r.Stdin) && p.flag("live", &r.Live) && p.flag("reuse", &r.Reuse) && p.flag("quiet", &r.Quiet)) {
		return false
	}
	if p.key("killGrace") {
		var grace time.Duration
		if !parseNumber(p, &grace) {
			return false
		}
		r.KillGrace = &grace
	}
	return p.close() && len(p.data) == 0
}
