package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/raw"
	"github.com/agentbash/agentbash/pkg/run"
)

// The protocol's messages are written and read here by hand, as encoding/json writes and reads them (tests
// hold the two equal): a reused supervisor's later runs and its client's (a long-lived rpc or mcp server)
// paid a tenth of their CPU to encoding/json's reflection on each request and event (docs/architecture.md,
// "Protocol"). What the readers do not take — anything this package never writes, a sandbox's spec, a
// terminal's screen — goes to encoding/json, so every message still reads as encoding/json reads it.

// lines reads the protocol's messages: one JSON object a line, as json.Encoder and the appendJSON methods
// write them (a newline after each).
type lines struct {
	r *bufio.Reader
}

// linesBuffer is the size of a lines' buffer: a start request with an agent's environment (a few KiB) fits,
// as does a done event with a short text.
const linesBuffer = 16 << 10

func newLines(r io.Reader) *lines { return &lines{r: bufio.NewReaderSize(r, linesBuffer)} }

// next returns the next line without its newline, valid until the following call; a last line without a
// newline is a line, and io.EOF comes after it. As with json.Decoder, a line is as long as it is: a
// longer one than the buffer is gathered into a slice of its own.
func (l *lines) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

// appendString appends s as json.Encoder writes a string: HTML characters, U+2028 and U+2029 escaped,
// bytes that are not UTF-8 written as U+FFFD (encoding/json's appendString, escapeHTML set).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

const hexDigits = "0123456789abcdef"

// fields appends the fields of one JSON object to b, a comma between two, leaving out zero values as
// `omitempty` does.
type fields struct {
	b     []byte
	comma bool
}

func (f *fields) key(name string) {
	if f.comma {
		f.b = append(f.b, ',')
	}
	f.comma = true
	f.b = append(append(append(f.b, '"'), name...), '"', ':')
}

func (f *fields) str(name, s string) {
	if s != "" {
		f.key(name)
		f.b = appendString(f.b, s)
	}
}

func (f *fields) int(name string, n int64) {
	if n != 0 {
		f.key(name)
		f.b = strconv.AppendInt(f.b, n, 10)
	}
}

func (f *fields) flag(name string, v bool) {
	if v {
		f.key(name)
		f.b = append(f.b, "true"...)
	}
}

func (f *fields) strs(name string, l []string) {
	if len(l) > 0 {
		f.key(name)
		sep := byte('[')
		for _, s := range l {
			f.b = appendString(append(f.b, sep), s)
			sep = ','
		}
		f.b = append(f.b, ']')
	}
}

func (f *fields) ints(name string, l []int) {
	if len(l) > 0 {
		f.key(name)
		sep := byte('[')
		for _, n := range l {
			f.b = strconv.AppendInt(append(f.b, sep), int64(n), 10)
			sep = ','
		}
		f.b = append(f.b, ']')
	}
}

// decodeLine reads line into a zero T by hand with read (a parser's method), or, when read does not take
// it, by encoding/json: the two give the same value for every line read takes (tests and fuzzing).
func decodeLine[T any](line []byte, read func(*parser, *T) bool) (T, error) {
	var v T
	if read(&parser{data: line}, &v) {
		return v, nil
	}
	var zero T
	err := json.Unmarshal(line, &zero)
	return zero, err
}

// parser reads a message as this package writes it (the fields in their order, no blanks, strings with
// only the escapes encoding/json writes); each method reports whether what it wanted came next, and
// consumes it. Whatever it takes is valid JSON that encoding/json reads to the same values.
type parser struct {
	data  []byte
	first bool // just inside an object: its first key has no comma before it
}

func (p *parser) lit(s string) bool {
	if !bytes.HasPrefix(p.data, []byte(s)) {
		return false
	}
	p.data = p.data[len(s):]
	return true
}

func (p *parser) open() bool {
	p.first = true
	return p.lit("{")
}

func (p *parser) close() bool {
	p.first = false
	return p.lit("}")
}

// key reads the key name when it comes next (after a comma, unless it is the object's first).
func (p *parser) key(name string) bool {
	d := p.data
	if !p.first {
		if len(d) == 0 || d[0] != ',' {
			return false
		}
		d = d[1:]
	}
	if len(d) < len(name)+3 || d[0] != '"' || string(d[1:1+len(name)]) != name || d[1+len(name)] != '"' || d[2+len(name)] != ':' {
		return false
	}
	p.data, p.first = d[len(name)+3:], false
	return true
}

// str reads a string as raw.ParseString does.
func (p *parser) str(s *string) bool {
	t, rest, ok := raw.ParseString(p.data)
	if ok {
		*s, p.data = string(t), rest
	}
	return ok
}

// text reads the field name's string when it comes next; absent, v keeps its value.
func (p *parser) text(name string, v *string) bool {
	return !p.key(name) || p.str(v)
}

// flag reads the field name's true when it comes next (encoding/json leaves a false out).
func (p *parser) flag(name string, v *bool) bool {
	if !p.key(name) {
		return true
	}
	*v = true
	return p.lit("true")
}

// number reads the field name's whole number, one that fits v, when it comes next.
func number[T ~int | ~int64](p *parser, name string, v *T) bool {
	return !p.key(name) || parseNumber(p, v)
}

func parseNumber[T ~int | ~int64](p *parser, v *T) bool {
	n, rest, ok := run.ParseInt(p.data)
	if !ok || int64(T(n)) != n {
		return false
	}
	*v, p.data = T(n), rest
	return true
}

// list reads the field name's array when it comes next, each element with elem; an empty one is left to
// encoding/json (encoding/json leaves it out).
func list[T any](p *parser, name string, v *[]T, elem func(*T) bool) bool {
	if !p.key(name) {
		return true
	}
	if !p.lit("[") {
		return false
	}
	var l []T
	for {
		var e T
		if !elem(&e) {
			return false
		}
		l = append(l, e)
		if p.lit("]") {
			*v = l
			return true
		}
		if !p.lit(",") {
			return false
		}
	}
}
