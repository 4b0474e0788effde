package rpc

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
)

// flatDefaults are the server defaults the flat decoder is checked with: none, and one of each kind (a
// pointer a null clears, a string a null keeps, a map and a list the line cannot give).
func flatDefaults() []request.Command {
	head, timeout, on := 5, 9.0, true
	return []request.Command{{}, {Cwd: "/d", Head: &head, Timeout: &timeout, Intercept: &on, Tools: []string{"read"},
		Env: map[string]string{"D": "1"}, Session: "dflt", StartCwd: "/start", NoNormalize: true}}
}

// flatLines are request lines with whether decodeFlat reads them itself (flat) or leaves them to decodeJSON.
// Either way Decode must make of them what decodeJSON makes.
var flatLines = []struct {
	line string
	flat bool
}{
	{`{"id":1,"type":"bash","command":"true"}`, true},
	{`{"type":"bash","command":"true"}`, true},
	{"\t\r\n {\n\"id\" : 7 ,\t\"type\" :\"bash\" , \"command\" : \"ls\" }\r\n ", true},
	{`{"command":"ls","type":"bash","id":2}`, true},
	{`{"id":3,"type":"start","command":"sleep 9"}`, true},
	{`{"id":4,"type":"bash","target":"ssh://build","command":"x","cwd":"/r","timeout":5.5,"head":3,"tail":0,` +
		`"noNormalize":true,"intercept":false,"session":"s1","stdin":"pipe","background":true,"stream":true}`, true},
	{`{"id":5,"type":"bash","command":"python3","tty":true,"cols":80,"rows":24,"yield":2}`, true},
	{`{"id":6,"type":"start","command":"x","target":null,"cwd":null,"timeout":null,"head":null,"tail":null,` +
		`"noNormalize":null,"intercept":null,"session":null,"stdin":null,"tty":null,"cols":null,"rows":null}`, true},
	{`{"id":7,"type":"bash","command":"x","yield":null,"background":null,"stream":null,"intercept":true}`, true},
	{`{"id":8,"type":"bash","command":null}`, true}, // the default command, if any
	{`{"id":9,"type":"bash","command":"x","background":false,"stream":false,"tty":false,"yield":0}`, true},

	// Ids: numbers as written, strings, literals.
	{`{"id":-0,"type":"bash","command":"x"}`, true},
	{`{"id":1.0,"type":"bash","command":"x"}`, true},
	{`{"id":1e3,"type":"bash","command":"x"}`, true},
	{`{"id":-1.25E-7,"type":"bash","command":"x"}`, true},
	{`{"id":123456789012345678901234567890,"type":"bash","command":"x"}`, true},
	{`{"id":1e999,"type":"bash","command":"x"}`, true},
	{`{"id":"a","type":"bash","command":"x"}`, true},
	{`{"id":"","type":"bash","command":"x"}`, true},
	{`{"id":"<&>","type":"bash","command":"x"}`, true},
	{`{"id":"a\"b\\c\/d\n\t\r\b\f","type":"bash","command":"x"}`, true},
	{`{"id":"é☃😀","type":"bash","command":"x"}`, true},
	{"{\"id\":\"\u2028\u2029\x7f\",\"type\":\"bash\",\"command\":\"x\"}", true},
	{`{"id":null,"type":"bash","command":"x"}`, true},
	{`{"id":true,"type":"bash","command":"x"}`, true},
	{`{"id":false,"type":"bash","command":"x"}`, true},
	{`{"id":"\u0041","type":"bash","command":"x"}`, true},
	{`{"id":{"b":1,"a":2},"type":"bash","command":"x"}`, false},
	{`{"id":[1,2],"type":"bash","command":"x"}`, false},
	{`{"id":01,"type":"bash","command":"x"}`, false},
	{`{"id":1.,"type":"bash","command":"x"}`, false},
	{`{"id":.5,"type":"bash","command":"x"}`, false},
	{`{"id":+1,"type":"bash","command":"x"}`, false},
	{`{"id":1e,"type":"bash","command":"x"}`, false},
	{`{"id":-,"type":"bash","command":"x"}`, false},
	{`{"id":NaN,"type":"bash","command":"x"}`, false},

	// Strings: escapes, unicode, bytes that are not UTF-8, control characters.
	{`{"id":1,"type":"bash","command":"grep -n \"a\\b\" f\nls\t/"}`, true},
	{`{"id":1,"type":"bash","command":"echo é ☃ 😀"}`, true},
	{`{"id":1,"type":"bash","command":"\\"}`, true},
	{`{"id":1,"type":"bash","command":"echo \u00e9"}`, true},
	{`{"id":1,"type":"bash","command":"\ud83d\ude00"}`, true},
	{`{"id":1,"type":"bash","command":"echo \u0026\u003c\u003e \u00E9"}`, true},
	{`{"id":1,"type":"bash","command":"\ud83d"}`, false},
	{`{"id":1,"type":"bash","command":"\ude00\ud83d"}`, false},
	{`{"id":1,"type":"bash","command":"\ud83d\u0041"}`, false},
	{`{"id":1,"type":"bash","command":"\u00g1"}`, false},
	{"{\"id\":1,\"type\":\"bash\",\"command\":\"echo \xff\"}", false},
	{"{\"id\":1,\"type\":\"bash\",\"command\":\"echo \xe2\x98\"}", false},
	{"{\"id\":\"\xc3\",\"type\":\"bash\",\"command\":\"x\"}", false},
	{"{\"id\":1,\"type\":\"bash\",\"command\":\"a\tb\"}", false},
	{"{\"id\":1,\"type\":\"bash\",\"command\":\"a\x00b\"}", false},
	{`{"id":1,"type":"bash","command":"a\qb"}`, false},
	{`{"id":1,"type":"bash","command":"a\`, false},
	{`{"id":1,"type":"bash","command":"a`, false},

	// Errors the checks after the types find: the flat path says them as decodeJSON does.
	{`{"id":1,"type":"bash"}`, true},
	{`{"id":1,"type":"bash","command":"  \n "}`, true},
	{`{"id":"x","type":"bash","command":"x","session":"../x"}`, true},
	{`{"id":1,"type":"bash","command":"x","head":-1,"tail":-2}`, true},
	{`{"id":1,"type":"bash","command":"x","stdin":"y"}`, true},
	{`{"id":1,"type":"bash","command":"x","stdin":"pipe","tty":true}`, true},
	{`{"id":1,"type":"bash","command":"x","tty":true,"cols":1,"rows":1001}`, true},
	{`{"id":1,"type":"start","command":"x","cols":80}`, true},
	{`{"id":1,"type":"bash","command":"x","yield":-1}`, true},
	{`{"id":1,"type":"bash","command":"x","yield":2,"background":true}`, true},
	{`{"id":1,"type":"bash","command":"","session":"a b","yield":-0.5,"head":-3}`, true},

	// Wrong types, out of range: decodeJSON says what is wrong.
	{`{"id":1,"type":"bash","command":42}`, false},
	{`{"id":1,"type":"bash","command":true}`, false},
	{`{"id":1,"type":"bash","command":"x","target":5}`, false},
	{`{"id":1,"type":"bash","command":"x","timeout":"soon"}`, false},
	{`{"id":1,"type":"bash","command":"x","timeout":1e999}`, false},
	{`{"id":1,"type":"bash","command":"x","timeout":true}`, false},
	{`{"id":1,"type":"bash","command":"x","head":1.5}`, false},
	{`{"id":1,"type":"bash","command":"x","head":1e2}`, false},
	{`{"id":1,"type":"bash","command":"x","tail":99999999999999999999}`, false},
	{`{"id":1,"type":"bash","command":"x","cols":"wide"}`, false},
	{`{"id":1,"type":"bash","command":"x","tty":"yes"}`, false},
	{`{"id":1,"type":"bash","command":"x","tty":1}`, false},
	{`{"id":1,"type":"bash","command":"x","intercept":"no"}`, false},
	{`{"id":1,"type":"bash","command":"x","yield":"2"}`, false},
	{`{"id":1,"type":"bash","command":"x","stream":"yes"}`, false},
	{`{"id":1,"type":7}`, false},
	{`{"id":1,"type":null,"command":"x"}`, false},
	{`{"id":1,"type":"BASH","command":"x"}`, false},
	{`{"id":1,"type":"b\u0061sh","command":"x"}`, true},
	{`{"id":1,"type":"bash","command":"x","type":"start"}`, false},

	// Keys: another type's, unknown, twice, other spellings; nested values.
	{`{"id":1,"type":"start","command":"x","yield":1}`, false},
	{`{"id":1,"type":"start","command":"x","background":true}`, false},
	{`{"id":1,"type":"start","command":"x","stream":false}`, false},
	{`{"id":1,"type":"bash","command":"x","Command":"y"}`, false},
	{`{"id":1,"type":"bash","command":"x","frob":1}`, false},
	{`{"id":1,"type":"bash","command":"x","command":"y"}`, false},
	{`{"id":1,"id":2,"type":"bash","command":"x"}`, false},
	{`{"id":1,"type":"bash","comm\u0061nd":"x"}`, true},
	{`{"id":1,"type":"bash","comm\/and":"x"}`, false},
	{`{"id":1,"type":"bash","command":"x","env":{"A":"1"}}`, false},
	{`{"id":1,"type":"bash","command":"x","env":null}`, false},
	{`{"id":1,"type":"bash","command":"x","tools":["edit"]}`, false},
	{`{"id":1,"type":"bash","command":"x","sandbox":"read-only"}`, false},
	{`{"id":1,"type":"bash","command":"x","sandbox":null}`, false},
	{`{"id":1,"type":"bash","command":"x","resolved":null}`, false},
	{`{"id":1,"type":"bash","command":["x"]}`, false},
	{`{"id":1,"type":"tasks"}`, false},
	{`{"id":1,"type":"abort_bash"}`, false},

	// Not a JSON object.
	{``, false},
	{` `, false},
	{`{}`, false},
	{`{`, false},
	{`[]`, false},
	{`"bash"`, false},
	{`{"id":1,"type":"bash","command":"x"`, false},
	{`{"id":1,"type":"bash","command":"x",}`, false},
	{`{"id":1,"type":"bash","command":"x"} {"id":2}`, false},
	{`{"id":1,"type":"bash","command":"x"}}`, false},
	{`{"id":1 "type":"bash","command":"x"}`, false},
	{`{"id" 1,"type":"bash","command":"x"}`, false},
	{`{id:1,"type":"bash","command":"x"}`, false},
	{`{"id":1,"type":"bash","command":"x","tty":tru}`, false},
	{`{"id":1,"type":"bash","command":"x","tty":nul}`, false},
	{"\v{\"type\":\"bash\",\"command\":\"x\"}", false},
	{"{\"type\":\"bash\",\"command\":\"x\"}\u00a0", false},
}

// TestDecodeFlat: the flat decoder reads the lines it is for, leaves the others, and makes of each line it
// reads what decodeJSON makes, with every defaults.
func TestDecodeFlat(t *testing.T) {
	for _, tt := range flatLines {
		for _, defaults := range flatDefaults() {
			if flat := checkFlat(t, []byte(tt.line), defaults); flat != tt.flat {
				t.Errorf("decodeFlat(%s): read it %v, want %v", tt.line, flat, tt.flat)
			}
		}
	}
}

// FuzzDecodeFlat checks that for any line Decode makes what decodeJSON makes.
func FuzzDecodeFlat(f *testing.F) {
	for _, tt := range flatLines {
		f.Add(tt.line)
	}
	for _, tt := range decodeTests {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, defaults := range flatDefaults() {
			checkFlat(t, []byte(line), defaults)
		}
	})
}

// checkFlat checks that decodeFlat, when it reads line, and Decode make exactly what decodeJSON makes of it,
// and that none changes the defaults; flat says whether decodeFlat read it.
func checkFlat(t *testing.T, line []byte, defaults request.Command) (flat bool) {
	t.Helper()
	before := defaults.Clone()
	want, wantErr := decodeJSON(line, defaults)
	got, gotErr := Decode(line, defaults)
	same(t, "Decode", line, got, gotErr, want, wantErr)
	m, err, flat := decodeFlat(line, defaults)
	if flat {
		same(t, "decodeFlat", line, m, err, want, wantErr)
	}
	if !reflect.DeepEqual(defaults, before) {
		t.Errorf("decoding %s changed the defaults: %+v, were %+v", line, defaults, before)
	}
	return flat
}

func same(t *testing.T, name string, line []byte, got Message, gotErr error, want Message, wantErr error) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s(%q) = %+v; decodeJSON: %+v", name, line, got, want)
	}
	if got.Bash != nil && !reflect.DeepEqual(*got.Bash, *want.Bash) {
		t.Errorf("%s(%q): bash %+v; decodeJSON: %+v", name, line, *got.Bash, *want.Bash)
	}
	ge, _ := errors.AsType[*DecodeError](gotErr)
	we, _ := errors.AsType[*DecodeError](wantErr)
	if (gotErr == nil) != (wantErr == nil) || (ge == nil) != (we == nil) || ge != nil && !reflect.DeepEqual(*ge, *we) {
		t.Errorf("%s(%q): error %#v; decodeJSON: %#v", name, line, gotErr, wantErr)
	}
}
