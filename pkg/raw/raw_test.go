package raw

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"
)

// A String and a List come back from JSON byte for byte, whatever their encoding; valid UTF-8 stays a plain
// JSON string.
func TestRawRoundTrip(t *testing.T) {
	for _, s := range []string{"", "rm -v café.txt", "rm -v caf\xe9.txt", "\xff\xfe{\"base64\":1}", "{not json", "a\x00b",
		"/usr/bin/bash", `a<b&c>d`, `say "hi"`, `back\slash`, "tab\there", "del\x7f", "line\nbreak", "\u2028"} {
		b, err := json.Marshal(String(s))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var got String
		if err := json.Unmarshal(b, &got); err != nil || string(got) != s {
			t.Errorf("%q: travelled as %s, came back %q (%v)", s, b, got, err)
		}
		if plain, _ := json.Marshal(s); json.Valid(b) && string(b) != string(plain) && validUTF8(s) {
			t.Errorf("%q: valid UTF-8 travelled as %s, want the plain string %s", s, b, plain)
		}
	}
	for _, l := range []List{nil, {}, {"A=1", "B=café"}, {"A=1", "B=caf\xe9", "C={x}"}, {"{", "}"}, {""}, {"", ""},
		{"PWD=/tmp/x", "A=<&>"}, {`Q="x"`, `B=\`}, {"a,b", "[c]"}} {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		var got List
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

// What another writer may send is read as encoding/json reads it: spaces, escapes, and what is not a
// list of strings at all (an error).
func TestRawReadsAnyJSON(t *testing.T) {
	for in, want := range map[string]string{`"abc"`: "abc", `"a\u0041"`: "aA", `"a\"b"`: `a"b`, `null`: "", `"caf\u00e9"`: "café"} {
		var got String
		if err := json.Unmarshal([]byte(in), &got); err != nil || string(got) != want {
			t.Errorf("%s: read %q (%v), want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]List{`[ "a" , "b" ]`: {"a", "b"}, `["a\"b","c"]`: {`a"b`, "c"}, `[]`: {},
		`["x"]`: {"x"}, `["a\\",""]`: {`a\`, ""}} {
		var got List
		if err := json.Unmarshal([]byte(in), &got); err != nil || !slices.Equal(got, want) || got == nil {
			t.Errorf("%s: read %q (%v), want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`["a",]`, `["a""b"]`, `[,"a"]`, `["a",1]`, `[1]`} {
		var got List
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("%s: read %q, want an error", in, got)
		}
	}
}

// ParseList reads an array as encoding/json does or not at all, and reads every array of strings that
// encoding/json writes of valid UTF-8.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{`[]`, `["a"]`, `["a","b\"c","é","\u0026"]`, `["a",]`, `[,"a"]`, `["a" ]`, `["a"`,
		`[1]`, `["a"]rest`, `[""]`, `["\ud83d"]`, `["a","\n"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		list, rest, ok := ParseList(data)
		if ok {
			consumed := data[:len(data)-len(rest)]
			var want []string
			if err := json.Unmarshal(consumed, &want); err != nil || want == nil || !slices.Equal([]string(list), want) {
				t.Fatalf("ParseList read %q from %q; encoding/json %q (%v)", list, consumed, want, err)
			}
		} else if !bytes.Equal(rest, data) {
			t.Fatalf("ParseList failed on %q but consumed it", data)
		}
		var strs []string
		if json.Unmarshal(data, &strs) == nil && strs != nil && !slices.ContainsFunc(strs, func(s string) bool { return !utf8.ValidString(s) }) {
			written, _ := json.Marshal(strs)
			if list, rest, ok := ParseList(written); !ok || len(rest) > 0 || !slices.Equal([]string(list), strs) {
				t.Fatalf("ParseList of %s: %q, rest %q, ok %v", written, list, rest, ok)
			}
		}
	})
}

// ParseString reads a string as encoding/json does or not at all: what it reads, encoding/json reads to
// the same text, with nothing replaced; and every string encoding/json writes (HTML escaped or not) of valid
// UTF-8 it reads, to the string written.
func FuzzParseString(f *testing.F) {
	for _, s := range []string{`"a"`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u00E9"`, `"\ud83d\ude42"`, `"\ud83d"`,
		`"\ude42\ud83d"`, `"\ud83d\u0041"`, `"\u12"`, `"\'"`, `"é🙂"`, "\"\xff\"", "\"\x01\"", `"a`, `"a\`, `x"`,
		`"a"rest`, `"\u0026\u003c\u003e\u2028"`, `"\uFFFD"`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text, rest, ok := ParseString(data)
		if ok {
			consumed := data[:len(data)-len(rest)]
			var want string
			if err := json.Unmarshal(consumed, &want); err != nil {
				t.Fatalf("ParseString read %q from %q, which encoding/json refuses: %v", text, consumed, err)
			}
			if string(text) != want || !utf8.Valid(text) {
				t.Fatalf("ParseString read %q from %q, encoding/json %q", text, consumed, want)
			}
		} else if !bytes.Equal(rest, data) {
			t.Fatalf("ParseString failed on %q but consumed it", data)
		}
		if s := string(data); utf8.ValidString(s) {
			for _, escapeHTML := range []bool{true, false} {
				written := bytes.TrimSuffix(encode(t, s, escapeHTML), []byte("\n"))
				text, rest, ok := ParseString(written)
				if !ok || len(rest) != 0 || string(text) != s {
					t.Fatalf("ParseString of %q (encoding/json's of %q): %q, rest %q, ok %v", written, s, text, rest, ok)
				}
			}
		}
	})
}

// encode is encoding/json's encoding of v, HTML-escaped or not.
func encode(t *testing.T, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
