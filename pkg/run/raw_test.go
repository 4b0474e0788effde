package run

import (
	"encoding/json"
	"slices"
	"testing"
)

// A Raw and a RawList come back from JSON byte for byte, whatever their encoding; valid UTF-8 stays a plain
// JSON string.
func TestRawRoundTrip(t *testing.T) {
	for _, s := range []string{"", "rm -v café.txt", "rm -v caf\xe9.txt", "\xff\xfe{\"base64\":1}", "{not json", "a\x00b"} {
		b, err := json.Marshal(Raw(s))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var got Raw
		if err := json.Unmarshal(b, &got); err != nil || string(got) != s {
			t.Errorf("%q: travelled as %s, came back %q (%v)", s, b, got, err)
		}
		if plain, _ := json.Marshal(s); json.Valid(b) && string(b) != string(plain) && validUTF8(s) {
			t.Errorf("%q: valid UTF-8 travelled as %s, want the plain string %s", s, b, plain)
		}
	}
	for _, l := range []RawList{nil, {}, {"A=1", "B=café"}, {"A=1", "B=caf\xe9", "C={x}"}, {"{", "}"}} {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		var got RawList
		if err := json.Unmarshal(b, &got); err != nil || !slices.Equal(got, l) || (got == nil) != (l == nil) {
			t.Errorf("%q: travelled as %s, came back %q (%v)", l, b, got, err)
		}
	}
}

func validUTF8(s string) bool {
	b, _ := json.Marshal(s)
	var back string
	_ = json.Unmarshal(b, &back)
	return back == s
}
