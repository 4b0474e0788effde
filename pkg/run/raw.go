package run

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// Raw is a string that crosses JSON byte for byte: a command, a path or an environment entry, which may
// hold any bytes (a Latin-1 file name in a command removes that file: README "A 30-second tour").
// encoding/json replaces invalid UTF-8 in a plain string with U+FFFD, so a Raw that is valid UTF-8
// travels as a JSON string and any other as {"base64": "…"}; both decode back to the same bytes.
type Raw string

// RawList is a list of [Raw] strings (an environment, a wrapper's argv); it converts from and to a
// []string for free.
type RawList []string

// rawBytes is how a Raw that is not valid UTF-8 travels.
type rawBytes struct {
	Base64 []byte `json:"base64"`
}

// MarshalJSON writes r as a JSON string when it is valid UTF-8, else as {"base64": …}.
func (r Raw) MarshalJSON() ([]byte, error) {
	if plain(string(r)) {
		return append(append(append(make([]byte, 0, len(r)+2), '"'), r...), '"'), nil
	}
	if utf8.ValidString(string(r)) {
		return json.Marshal(string(r))
	}
	return json.Marshal(rawBytes{Base64: []byte(r)})
}

// plain reports whether s is printable ASCII without a quote or a backslash: its JSON string is s
// between quotes, with nothing to escape (encoding/json still escapes <, > and & of what a MarshalJSON
// returns) and nothing to unescape. Every start request carries a few such strings (the shell, paths),
// which then skip encoding/json's own reflection and validation.
func plain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// UnmarshalJSON reads either form MarshalJSON writes.
func (r *Raw) UnmarshalJSON(data []byte) error {
	if n := len(data); n >= 2 && data[0] == '"' && data[n-1] == '"' && plain(data[1:n-1]) {
		*r = Raw(data[1 : n-1])
		return nil
	}
	if len(data) > 0 && data[0] == '{' {
		var b rawBytes
		if err := json.Unmarshal(data, &b); err != nil {
			return err
		}
		*r = Raw(b.Base64)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*r = Raw(s)
	return nil
}

// MarshalJSON writes l as a JSON array of [Raw] strings (null when nil).
func (l RawList) MarshalJSON() ([]byte, error) {
	if l != nil && !slices.ContainsFunc(l, func(s string) bool { return !plain(s) }) {
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
	raws := make([]Raw, len(l))
	for i, s := range l {
		raws[i] = Raw(s)
	}
	return json.Marshal(raws)
}

// UnmarshalJSON reads an array of [Raw] strings.
func (l *RawList) UnmarshalJSON(data []byte) error {
	if list, rest, ok := parseList(data); ok && len(rest) == 0 {
		*l = list
		return nil
	}
	if !bytes.Contains(data, []byte("{")) {
		return json.Unmarshal(data, (*[]string)(l))
	}
	var raws []Raw
	if err := json.Unmarshal(data, &raws); err != nil {
		return err
	}
	if raws == nil {
		*l = nil
		return nil
	}
	*l = make(RawList, len(raws))
	for i, r := range raws {
		(*l)[i] = string(r)
	}
	return nil
}

// parseList reads the JSON array of strings at the start of data when encoding/json reads each as it is
// written (ParseString) and the array has no blanks, as MarshalJSON writes one, and returns it with the
// rest of data; ok is false for anything else, which encoding/json then reads. The strings with nothing
// escaped share one allocation (an environment's thirty entries were thirty).
func parseList(data []byte) (list RawList, rest []byte, ok bool) {
	// First the array's extent and length, then its strings.
	n, end := 0, 0
	for rest = data; ; n++ {
		if len(rest) == 0 || rest[0] != "[,"[min(n, 1)] {
			return nil, data, false
		}
		if n == 0 && len(rest) > 1 && rest[1] == ']' {
			return RawList{}, rest[2:], true
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
	list = make(RawList, 0, n)
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
