package run

import (
	"bytes"
	"encoding/json"
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
	if utf8.ValidString(string(r)) {
		return json.Marshal(string(r))
	}
	return json.Marshal(rawBytes{Base64: []byte(r)})
}

// UnmarshalJSON reads either form MarshalJSON writes.
func (r *Raw) UnmarshalJSON(data []byte) error {
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
