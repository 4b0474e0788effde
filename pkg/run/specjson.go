package run

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// MarshalJSON is encoding/json's encoding of s, byte for byte (a test holds the two equal), written out:
// encoding/json builds an encoder for a type on its first use, for every type the type reaches, set or not
// (the sandbox's confinement, the console's options), and that was 0.3 to 0.4 ms of every run's client
// before it sent its start request. A task, a sandbox and a terminal, when set, still go through
// encoding/json. Nothing here escapes HTML: the encoder that embeds the result does, or not, as it does
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
	if s.Task != nil {
		value("task", s.Task)
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

// appendValue appends encoding/json's encoding of v to b, without HTML escaping; a plain string (see
// plain) is itself between quotes.
func appendValue(b []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok && plain(s) {
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
