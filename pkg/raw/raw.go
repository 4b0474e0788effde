// Package raw carries strings through JSON byte for byte — commands, paths and environment entries, which
// may hold any bytes (a Latin-1 file name in a command removes that file) — and reads JSON strings and
// arrays of them by hand as encoding/json reads them: the reader of every hand-written codec of agentbash
// (pkg/run's spec, pkg/supervisor's messages, pkg/rpc's flat requests) and of the sandbox's stage spec.
package raw

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// String is a string that crosses JSON byte for byte: a command, a path or an environment entry, which may
// hold any bytes (a Latin-1 file name in a command removes that file: README "A 30-second tour").
// encoding/json replaces invalid UTF-8 in a plain string with U+FFFD, so a String that is valid UTF-8
// travels as a JSON string and any other as {"base64": "…"}; both decode back to the same bytes.
type String string

// List is a list of [String] strings (an environment, a wrapper's argv); it converts from and to a
// []string for free.
type List []string

// rawBytes is how a String that is not valid UTF-8 travels.
type rawBytes struct {
	Base64 []byte `json:"base64"`
}

// MarshalJSON writes r as a JSON string when it is valid UTF-8, else as {"base64": …}.
func (r String) MarshalJSON() ([]byte, error) {
	if Plain(string(r)) {
		return append(append(append(make([]byte, 0, len(r)+2), '"'), r...), '"'), nil
	}
	if utf8.ValidString(string(r)) {
		return json.Marshal(string(r))
	}
	return json.Marshal(rawBytes{Base64: []byte(r)})
}

// Plain reports whether s is printable ASCII without a quote or a backslash: its JSON string is s
// between quotes, with nothing to escape (encoding/json still escapes <, > and & of what a MarshalJSON
// returns) and nothing to unescape. Every start request carries a few such strings (the shell, paths),
// which then skip encoding/json's own reflection and validation.
func Plain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// UnmarshalJSON reads either form MarshalJSON writes.
func (r *String) UnmarshalJSON(data []byte) error {
	if n := len(data); n >= 2 && data[0] == '"' && data[n-1] == '"' && Plain(data[1:n-1]) {
		*r = String(data[1 : n-1])
		return nil
	}
	if len(data) > 0 && data[0] == '{' {
		var b rawBytes
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		*r = String(b.Base64)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*r = String(s)
	return nil
}

// MarshalJSON writes l as a JSON array of [String] strings (null when nil).
func (l List) MarshalJSON() ([]byte, error) {
	if l != nil && !slices.ContainsFunc(l, func(s string) bool { return !Plain(s) }) {
		b := append(make([]byte, 0, 64), '[')
		for i, s := range l {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), s...), '"')
		}
		return append(b, ']'), nil
	}
	valid := true
	for _, s := range l {
		valid = valid && utf8.ValidString(s)
	}
	if valid {
		return json.Marshal([]string(l))
	}
	raws := make([]String, len(l))
	for i, s := range l {
		raws[i] = String(s)
	}
	return json.Marshal(raws)
}

// UnmarshalJSON reads an array of [String] strings.
func (l *List) UnmarshalJSON(data []byte) error {
	if list, rest, ok := ParseList(data); ok && len(rest) == 0 {
		*l = list
		return nil
	}
	if !bytes.Contains(data, []byte("{")) {
		return json.Unmarshal(data, (*[]string)(l))
	}
	var raws []String
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	if raws == nil {
		*l = nil
		return nil
	}
	*l = make(List, len(raws))
	for i, r := range raws {
		(*l)[i] = string(r)
	}
	return nil
}

// ParseList reads the JSON array of strings at the start of data when encoding/json reads each as it is
// written (ParseString) and the array has no blanks, as MarshalJSON writes one, and returns it with the
// rest of data; ok is false for anything else, which encoding/json then reads. The strings with nothing
// escaped share one allocation (an environment's thirty entries were thirty).
func ParseList(data []byte) (list List, rest []byte, ok bool) {
	// First the array's extent and length, then its strings.
	n, end := 0, 0
	for rest = data; ; n++ {
		if len(rest) == 0 || rest[0] != "[,"[min(n, 1)] {
			return nil, data, false
		}
		if n == 0 && len(rest) > 1 && rest[1] == ']' {
			return List{}, rest[2:], true
		}
		if _, rest, ok = ParseString(rest[1:]); !ok || len(rest) == 0 {
			return nil, data, false
		}
		if rest[0] == ']' {
			n++
			end = len(data) - len(rest)
			break
		}
	}
	whole := string(data[:end])
	list = make(List, 0, n)
	for i := 1; i < end; {
		text, after, _ := ParseString(data[i:end])
		next := end - len(after)
		if len(text) == next-i-2 { // nothing escaped: text is data[i+1 : next-1]
			list = append(list, whole[i+1:next-1])
		} else {
			list = append(list, string(text))
		}
		i = next + 1
	}
	return list, data[end+1:], true
}

// ParseString reads the JSON string at the start of data when encoding/json would read it as it is
// written: escapes as JSON has them (\uXXXX included, a surrogate pair as the one character it encodes)
// and UTF-8 between them. It returns the string's text — a part of data when nothing in it is escaped,
// else a new slice — and the rest of data. ok is false for anything else, and for what encoding/json
// reads only by replacing it with U+FFFD (bytes that are not UTF-8, a lone surrogate): the caller then
// gives the whole message to encoding/json, whose text and errors are the reference. It is the one
// string reader of the hand-written codecs (pkg/run's spec, pkg/supervisor's messages, pkg/rpc's flat
// requests); FuzzParseString holds it equal to encoding/json.
func ParseString(data []byte) (text, rest []byte, ok bool) {
	if len(data) == 0 || data[0] != '"' {
		return nil, data, false
	}
	ascii := true
	for i := 1; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			if !ascii && !utf8.Valid(data[1:i]) {
				return nil, data, false
			}
			return data[1:i], data[i+1:], true
		case c < 0x20:
			return nil, data, false
		case c == '\\':
			return unescapeString(data, i)
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, data, false
}

// unescapeString is ParseString from the first backslash, at data[i], on.
func unescapeString(data []byte, i int) (text, rest []byte, ok bool) {
	out := append(make([]byte, 0, len(data)), data[1:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, data, false
			}
			return out, data[i+1:], true
		case c < 0x20:
			return nil, data, false
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 == len(data) {
			return nil, data, false
		}
		switch e := data[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(data[i+2:])
			if !ok {
				return nil, data, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// Only a high surrogate with its low one after it is a character; encoding/json turns
				// anything else into U+FFFD, which is left to it.
				lo, ok := rune(0), false
				if len(data) > i+1 && data[i] == '\\' && data[i+1] == 'u' {
					lo, ok = hex4(data[i+2:])
				}
				if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
					return nil, data, false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, data, false
		}
		i += 2
	}
	return nil, data, false
}

// hex4 reads the four hexadecimal digits of a \u escape at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
