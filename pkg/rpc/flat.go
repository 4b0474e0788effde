package rpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentbash/agentbash/pkg/raw"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/run"
)

// decodeFlat decodes the common request line in one pass: a bash or start request that is a flat JSON
// object — each key once, each value a string, number, true, false or null — of the fields such a request
// has apart from env, tools, sandbox and resolved. It makes exactly the Message and the error decodeJSON
// makes of the line (FuzzDecodeFlat holds the two equal); ok is false for any other line, which Decode
// then gives to decodeJSON: what is wrong with a line is said in words only there.
//
// Every request of an agent's harness is such a line (`{"id":7,"type":"bash","command":"…"}`, docs/reference.md
// §7.2), and decodeJSON reads each line twice through encoding/json (a map to check the keys, then the
// type's wire form) and the id a third time: that was an eighth of the server's CPU per request, on each
// request's way to its command (docs/architecture.md, "`agentbash rpc`").
func decodeFlat(line []byte, defaults request.Command) (m Message, err error, ok bool) {
	var f flatFields
	if !f.read(line) {
		return Message{}, nil, false
	}
	typ := f.vals[fType]
	switch {
	case typ.kind != '"':
		return Message{}, nil, false
	case string(typ.text) == TypeBash:
		m.Type = TypeBash
	case string(typ.text) == TypeStart && f.seen&(1<<fBackground|1<<fYield|1<<fStream) == 0:
		m.Type = TypeStart
	default:
		return Message{}, nil, false // another type, or a start with a field only bash has
	}
	if !f.id(&m.ID) {
		return Message{}, nil, false
	}
	b := &Bash{Command: defaults.Clone(), Background: m.Type == TypeStart}
	c := &b.Command
	// Each value is stored as encoding/json stores it in the wire form (bashWire, startWire): null leaves
	// a string, a number or a bool as it is and sets a pointer to nil.
	var yield *float64
	if !(f.str(fTarget, &m.Target) && f.str(fCommand, &c.Command) && f.str(fCwd, &c.Cwd) &&
		f.str(fSession, &c.Session) && f.str(fStdin, &c.StdinMode) &&
		f.float(fTimeout, &c.Timeout) && f.int(fHead, &c.Head) && f.int(fTail, &c.Tail) &&
		f.boolean(fNoNormalize, &c.NoNormalize) && f.boolean(fTTY, &c.TTY) && f.flag(fIntercept, &c.Intercept) &&
		f.count(fCols, &c.Cols) && f.count(fRows, &c.Rows) &&
		f.boolean(fBackground, &b.Background) && f.boolean(fStream, &b.Stream) && f.float(fYield, &yield)) {
		return Message{}, nil, false
	}
	if yield != nil {
		b.Yield = *yield
	}
	if err := checkBash(b); err != nil {
		return Message{}, &DecodeError{ID: m.ID, Type: m.Type, Msg: strings.ReplaceAll(err.Error(), "\n", "; ")}, true
	}
	m.Bash = b
	return m, nil, true
}

// The fields decodeFlat reads, by their index in flatFields.
const (
	fID = iota
	fType
	fTarget
	fCommand
	fCwd
	fTimeout
	fHead
	fTail
	fNoNormalize
	fIntercept
	fSession
	fStdin
	fTTY
	fCols
	fRows
	fBackground
	fYield
	fStream
	nFlat
)

// flatField is the index of the field named key, -1 for a key decodeFlat leaves to decodeJSON.
func flatField(key []byte) int {
	switch string(key) {
	case "id":
		return fID
	case "type":
		return fType
	case "target":
		return fTarget
	case "command":
		return fCommand
	case "cwd":
		return fCwd
	case "timeout":
		return fTimeout
	case "head":
		return fHead
	case "tail":
		return fTail
	case "noNormalize":
		return fNoNormalize
	case "intercept":
		return fIntercept
	case "session":
		return fSession
	case "stdin":
		return fStdin
	case "tty":
		return fTTY
	case "cols":
		return fCols
	case "rows":
		return fRows
	case "background":
		return fBackground
	case "yield":
		return fYield
	case "stream":
		return fStream
	}
	return -1
}

// flatFields is the values of a flat line's fields: seen has bit i set when field i was there.
type flatFields struct {
	seen uint32
	vals [nFlat]flatValue
}

// flatValue is one value: kind '"' a string (text is its bytes, unescaped), '0' a number (text is as
// written), 't' true, 'f' false, 'n' null.
type flatValue struct {
	kind byte
	text []byte
}

// read reads line, a JSON object with nothing but blanks around it. It is false for anything decodeFlat
// leaves to decodeJSON: another key, a key twice, an array or an object as a value, a string raw.ParseString
// leaves to encoding/json (bytes that are not UTF-8, a lone surrogate), or anything that is not JSON.
func (f *flatFields) read(line []byte) bool {
	s := flatScanner{data: line}
	s.blanks()
	if !s.next('{') {
		return false
	}
	for {
		s.blanks()
		key, ok := s.string()
		if !ok {
			return false // also `{}`, which has no type
		}
		i := flatField(key)
		if i < 0 || f.seen&(1<<i) != 0 {
			return false
		}
		f.seen |= 1 << i
		s.blanks()
		if !s.next(':') {
			return false
		}
		s.blanks()
		if f.vals[i], ok = s.value(); !ok {
			return false
		}
		s.blanks()
		if s.next('}') {
			break
		}
		if !s.next(',') {
			return false
		}
	}
	s.blanks()
	return s.i == len(s.data)
}

// id stores the canonical id (see Canonical) in *id: null when the line has none.
func (f *flatFields) id(id *json.RawMessage) bool {
	v := f.vals[fID]
	switch {
	case f.seen&(1<<fID) == 0:
		*id = null
	case v.kind == '0':
		*id = bytes.Clone(v.text) // a number as written; the line's buffer is read into again
	case v.kind == '"':
		b, err := run.AppendString(nil, string(v.text))
		if err != nil {
			return false
		}
		*id = b
	case v.kind == 't':
		*id = []byte("true")
	case v.kind == 'f':
		*id = []byte("false")
	default:
		*id = []byte("null")
	}
	return true
}

// str stores field i in *s when it is a string. The methods below are false when field i has a value of
// another kind than theirs, which decodeJSON refuses.
func (f *flatFields) str(i int, s *string) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0 || v.kind == 'n':
	case v.kind == '"':
		*s = string(v.text)
	default:
		return false
	}
	return true
}

// boolean stores field i in *b when it is true or false.
func (f *flatFields) boolean(i int, b *bool) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0 || v.kind == 'n':
	case v.kind == 't' || v.kind == 'f':
		*b = v.kind == 't'
	default:
		return false
	}
	return true
}

// flag stores field i in *b as a pointer to it when it is true or false, nil when it is null.
func (f *flatFields) flag(i int, b **bool) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0:
	case v.kind == 'n':
		*b = nil
	case v.kind == 't' || v.kind == 'f':
		*b = new(v.kind == 't')
	default:
		return false
	}
	return true
}

// float stores field i in *n as a pointer to it when it is a number a float64 holds, nil when it is null.
func (f *flatFields) float(i int, n **float64) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0:
	case v.kind == 'n':
		*n = nil
	case v.kind == '0':
		x, err := strconv.ParseFloat(string(v.text), 64)
		if err != nil {
			return false
		}
		*n = &x
	default:
		return false
	}
	return true
}

// int stores field i in *n as a pointer to it when it is a whole number an int holds, nil when it is null.
func (f *flatFields) int(i int, n **int) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0:
	case v.kind == 'n':
		*n = nil
	default:
		var x int
		if !f.count(i, &x) {
			return false
		}
		*n = &x
	}
	return true
}

// count stores field i in *n when it is a whole number an int holds.
func (f *flatFields) count(i int, n *int) bool {
	switch v := f.vals[i]; {
	case f.seen&(1<<i) == 0 || v.kind == 'n':
	case v.kind == '0':
		x, err := strconv.ParseInt(string(v.text), 10, strconv.IntSize)
		if err != nil {
			return false
		}
		*n = int(x)
	default:
		return false
	}
	return true
}

// flatScanner reads JSON text from data[i:]; each method reports whether what it wanted came next, and
// consumes it.
type flatScanner struct {
	data []byte
	i    int
}

// blanks skips JSON's whitespace.
func (s *flatScanner) blanks() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *flatScanner) next(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *flatScanner) literal(word string) bool {
	if strings.HasPrefix(string(s.data[s.i:]), word) {
		s.i += len(word)
		return true
	}
	return false
}

// value reads a string, a number, true, false or null.
func (s *flatScanner) value() (flatValue, bool) {
	if s.i == len(s.data) {
		return flatValue{}, false
	}
	switch c := s.data[s.i]; {
	case c == '"':
		text, ok := s.string()
		return flatValue{kind: '"', text: text}, ok
	case c == '-' || c >= '0' && c <= '9':
		text, ok := s.number()
		return flatValue{kind: '0', text: text}, ok
	case c == 't':
		return flatValue{kind: 't'}, s.literal("true")
	case c == 'f':
		return flatValue{kind: 'f'}, s.literal("false")
	case c == 'n':
		return flatValue{kind: 'n'}, s.literal("null")
	}
	return flatValue{}, false
}

// string reads a JSON string as raw.ParseString does, and gives its bytes: a part of data when nothing
// in it is escaped, else a copy with the escapes undone.
func (s *flatScanner) string() ([]byte, bool) {
	text, rest, ok := raw.ParseString(s.data[s.i:])
	if ok {
		s.i = len(s.data) - len(rest)
	}
	return text, ok
}

// number reads a JSON number and gives its text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *flatScanner) number() ([]byte, bool) {
	start := s.i
	s.next('-')
	if !s.next('0') && !s.digits() {
		return nil, false
	}
	if s.next('.') && !s.digits() {
		return nil, false
	}
	if s.next('e') || s.next('E') {
		if !s.next('+') {
			s.next('-')
		}
		if !s.digits() {
			return nil, false
		}
	}
	return s.data[start:s.i], true
}

// digits reads one digit or more.
func (s *flatScanner) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
