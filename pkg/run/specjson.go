package run

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/agentbash/agentbash/pkg/raw"
)

// specFields is a Spec without its methods: what encoding/json makes of its fields by reflection.
type specFields Spec

// MarshalJSON is encoding/json's encoding of s, byte for byte (a test holds the two equal), written out:
// encoding/json builds an encoder for a type on its first use, for every type the type reaches, set or not
// (the sandbox's confinement, the console's options), and that was 0.3 to 0.4 ms of every run's client
// before it sent its start request. A sandbox and a terminal, when set, still go through encoding/json. Nothing here escapes HTML: the encoder that embeds the result does, or not, as it does
// for its own strings.
func (s Spec) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 512)
	var err error
	field := func(name string, v json.Marshaler) {
		if err == nil {
			b = append(append(append(b, ',', '"'), name...), '"', ':')
			var out []byte
			if out, err = v.MarshalJSON(); err == nil {
				b = append(b, out...)
			}
		}
	}
	value := func(name string, v any) {
		if err == nil {
			b = append(append(append(b, ',', '"'), name...), '"', ':')
			b, err = appendValue(b, v)
		}
	}
	number := func(name string, n int64) {
		b = strconv.AppendInt(append(append(append(b, ',', '"'), name...), '"', ':'), n, 10)
	}
	field("command", s.Command)
	b[0] = '{' // the first field's comma
	field("shell", s.Shell)
	field("dir", s.Dir)
	field("env", s.Env)
	if len(s.Wrapper) > 0 {
		field("wrapper", s.Wrapper)
	}
	number("timeout", int64(s.Timeout))
	number("killGrace", int64(s.KillGrace))
	o := s.Output
	b = append(b, `,"output":{"maxBytes":`...)
	b = strconv.AppendInt(b, int64(o.MaxBytes), 10)
	number("head", int64(o.Head))
	number("tail", int64(o.Tail))
	field("artifactDir", o.ArtifactDir)
	number("artifactMaxBytes", o.ArtifactMaxBytes)
	value("command", o.Command)
	value("cwd", o.Cwd)
	if o.Keep {
		b = append(b, `,"keep":true`...)
	}
	b = append(b, '}')
	if t := s.Task; t != nil && err == nil {
		b = append(b, `,"task":{"dir":`...)
		var dir []byte
		if dir, err = t.Dir.MarshalJSON(); err == nil {
			b = append(b, dir...)
			value("id", t.ID)
			if t.Attached {
				b = append(b, `,"attached":true`...)
			}
			b = append(b, '}')
		}
	}
	if s.Sandbox != nil {
		value("sandbox", s.Sandbox)
	}
	if s.Interactive != nil {
		value("interactive", s.Interactive)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// AppendString appends s as encoding/json writes a string, without HTML escaping: between quotes when it
// is plain (printable ASCII with nothing to escape), else through encoding/json.
func AppendString(b []byte, s string) ([]byte, error) { return appendValue(b, s) }

// appendValue appends encoding/json's encoding of v to b, without HTML escaping; a plain string (see
// raw.Plain) is itself between quotes.
func appendValue(b []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok && raw.Plain(s) {
		return append(append(append(b, '"'), s...), '"'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// UnmarshalJSON reads s as encoding/json would (a test holds the two equal): a spec as MarshalJSON writes
// one (its fields in their order, no blanks, strings that raw.ParseString reads, no sandbox or terminal:
// every plain run's and task's, whatever its command holds) is read here, anything else by encoding/json.
// Decoding a spec by reflection on a supervisor's first request was a quarter of a millisecond, cold, on
// the run's way to its shell, and 20 µs warm for a command with a quote in it. As with encoding/json, a
// field the text leaves out keeps its value.
func (s *Spec) UnmarshalJSON(data []byte) error {
	t := *s
	if p := (specParser{data: data}); p.spec(&t) && len(p.data) == 0 {
		*s = t
		return nil
	}
	return json.Unmarshal(data, (*specFields)(s))
}

// ParseSpec reads the spec at the start of data when it is one UnmarshalJSON reads itself, and returns it
// with the rest of data; ok is false for anything else, which the caller then gives to encoding/json. A
// spec it reads is valid JSON and decodes as encoding/json decodes it into a zero Spec: a supervisor reads
// the message a spec comes in by hand too (pkg/supervisor).
func ParseSpec(data []byte) (s Spec, rest []byte, ok bool) {
	p := specParser{data: data}
	if !p.spec(&s) {
		return Spec{}, data, false
	}
	return s, p.data, true
}

// specParser reads the text of a spec as MarshalJSON writes it; each method reports whether what it
// wanted came next, and consumes it.
type specParser struct{ data []byte }

// spec reads a spec into t, and leaves what follows it.
func (p *specParser) spec(t *Spec) bool {
	if !(p.lit(`{"command":`) && p.raw(&t.Command) && p.lit(`,"shell":`) && p.raw(&t.Shell) &&
		p.lit(`,"dir":`) && p.raw(&t.Dir) && p.lit(`,"env":`) && p.list(&t.Env)) {
		return false
	}
	if p.lit(`,"wrapper":`) && !p.list(&t.Wrapper) {
		return false
	}
	o := &t.Output
	var timeout, grace, maxBytes, head, tail int64
	if !(p.lit(`,"timeout":`) && p.int(&timeout) && p.lit(`,"killGrace":`) && p.int(&grace) &&
		p.lit(`,"output":{"maxBytes":`) && p.int(&maxBytes) && p.lit(`,"head":`) && p.int(&head) &&
		p.lit(`,"tail":`) && p.int(&tail) && p.lit(`,"artifactDir":`) && p.raw(&o.ArtifactDir) &&
		p.lit(`,"artifactMaxBytes":`) && p.int(&o.ArtifactMaxBytes) &&
		p.lit(`,"command":`) && p.str(&o.Command) && p.lit(`,"cwd":`) && p.str(&o.Cwd)) {
		return false
	}
	if p.lit(`,"keep":true`) {
		o.Keep = true
	}
	if !p.lit(`}`) {
		return false
	}
	if p.lit(`,"task":{"dir":`) {
		task := Task{}
		if t.Task != nil {
			task = *t.Task
		}
		if !(p.raw(&task.Dir) && p.lit(`,"id":`) && p.str(&task.ID)) {
			return false
		}
		if p.lit(`,"attached":true`) {
			task.Attached = true
		}
		if !p.lit(`}`) {
			return false
		}
		if t.Task != nil {
			*t.Task = task // decoded into, as encoding/json does
		} else {
			t.Task = &task
		}
	}
	if !p.lit(`}`) || !fits(maxBytes, head, tail) {
		return false
	}
	t.Timeout, t.KillGrace = time.Duration(timeout), time.Duration(grace)
	o.MaxBytes, o.Head, o.Tail = int(maxBytes), int(head), int(tail)
	return true
}

// fits reports whether every n fits an int.
func fits(ns ...int64) bool {
	for _, n := range ns {
		if int64(int(n)) != n {
			return false
		}
	}
	return true
}

func (p *specParser) lit(s string) bool {
	if !bytes.HasPrefix(p.data, []byte(s)) {
		return false
	}
	p.data = p.data[len(s):]
	return true
}

// text reads a JSON string as raw.ParseString does.
func (p *specParser) text() (string, bool) {
	t, rest, ok := raw.ParseString(p.data)
	if ok {
		p.data = rest
	}
	return string(t), ok
}

func (p *specParser) str(s *string) bool {
	v, ok := p.text()
	if ok {
		*s = v
	}
	return ok
}

func (p *specParser) raw(r *Raw) bool {
	v, ok := p.text()
	if ok {
		*r = Raw(v)
	}
	return ok
}

// list reads an array of strings as raw.ParseList does.
func (p *specParser) list(l *RawList) bool {
	list, rest, ok := raw.ParseList(p.data)
	if ok {
		*l, p.data = list, rest
	}
	return ok
}

// int reads a whole number without a fraction or an exponent.
func (p *specParser) int(n *int64) bool {
	v, rest, ok := ParseInt(p.data)
	if ok {
		*n, p.data = v, rest
	}
	return ok
}

// ParseInt reads the JSON number at the start of data when it is a whole one that fits an int64, written
// as JSON writes one (no fraction, exponent, plus sign or leading zero: strconv alone takes "007"), and
// returns it with the rest of data.
func ParseInt(data []byte) (n int64, rest []byte, ok bool) {
	end := 0
	if end < len(data) && data[end] == '-' {
		end++
	}
	digits := end
	for end < len(data) && data[end] >= '0' && data[end] <= '9' {
		end++
	}
	if end == digits || data[digits] == '0' && end > digits+1 ||
		end < len(data) && (data[end] == '.' || data[end] == 'e' || data[end] == 'E') {
		return 0, data, false
	}
	v, err := strconv.ParseInt(string(data[:end]), 10, 64)
	if err != nil {
		return 0, data, false
	}
	return v, data[end:], true
}
