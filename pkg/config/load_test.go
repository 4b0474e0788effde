package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/intercept"
)

// goWords are what a person must never read in a config error: Go type names and library texts.
var goWords = regexp.MustCompile(`(?i)strconv|Parse(Float|Int|Bool|Duration)|float(32|64)|\bu?int(8|16|32|64)?\b|unconvertible|mapstructure|reflect\.|yaml\.Node|!!|json:|Go value`)

func writeFile(t *testing.T, text string) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	return f
}

// badValues are, for each kind of key, a value of the wrong type as a file would hold it and as an
// environment variable or flag would ("" where any text is valid for that kind).
func badValues(t *testing.T, key string) (yamlValue, text string) {
	f, _ := field(reflect.ValueOf(new(Default())).Elem(), key)
	switch f.Kind() {
	case reflect.Float64:
		return `"abc"`, "abc"
	case reflect.Int, reflect.Int64:
		return "1.5", "1.5"
	case reflect.Bool:
		return "maybe", "maybe"
	case reflect.String:
		return "[1, 2]", ""
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Struct {
			return "5", "[x"
		}
		return "read", ""
	case reflect.Map:
		return "5", "A"
	}
	t.Fatalf("key %s: the table knows no bad value for its type %s", key, f.Type())
	return "", ""
}

// yamlAt writes key: value as nested YAML.
func yamlAt(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	return b.String() + " " + value + "\n"
}

// TestBadValueNamesItsSource is the table of every key × file, environment: a value of the wrong type is
// an error naming where it came from and what was expected, in words. (Flags: cmd's TestBadFlagValues.)
func TestBadValueNamesItsSource(t *testing.T) {
	for _, key := range Keys() {
		yamlValue, text := badValues(t, key)
		want := "want " + Expected(key)
		t.Run(key+"/file", func(t *testing.T) {
			f := writeFile(t, yamlAt(key, yamlValue))
			_, err := f.Settings()
			check(t, err, f.Path+": "+key+": "+want, FromFile)
		})
		if text == "" {
			continue // any text is a valid value of this key
		}
		t.Run(key+"/env", func(t *testing.T) {
			_, _, err := Environ([]string{EnvName(key) + "=" + text})
			check(t, err, EnvName(key)+": want", FromEnv)
		})
	}
}

func check(t *testing.T, err error, prefix string, kind SourceKind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q…", prefix)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, ", got ") {
		t.Errorf("error %q, want it to start %q and say what it got", msg, prefix)
	}
	if goWords.MatchString(msg) {
		t.Errorf("error %q speaks Go", msg)
	}
	ve, ok := err.(interface{ Unwrap() []error }).Unwrap()[0].(*ValueError)
	if !ok || ve.Source.Kind != kind {
		t.Errorf("error %#v, want a *ValueError from source %d", err, kind)
	}
}

// TestOutOfRangeNamesItsSource: a value of the right type but out of range names its source too. (Flags,
// and a file's bad value under a flag that overrides it: cmd's TestFlagOutOfRange.)
func TestOutOfRangeNamesItsSource(t *testing.T) {
	f := writeFile(t, "maxBytes: 0\n")
	if _, err := f.Settings(); err == nil || !strings.HasPrefix(err.Error(), f.Path+": maxBytes: must be from 1 to") {
		t.Errorf("file: err = %v", err)
	}
	for env, want := range map[string]string{
		"AGENTBASH_MAXBYTES=0":   "AGENTBASH_MAXBYTES: must be from 1 to",
		"AGENTBASH_FORMAT=xml":   `AGENTBASH_FORMAT: must be json, text or auto, got "xml"`,
		"AGENTBASH_TIMEOUT=inf":  "AGENTBASH_TIMEOUT: must be a finite number of seconds",
		"AGENTBASH_SHELL_ENV==x": `AGENTBASH_SHELL_ENV: invalid variable name ""`,
		"AGENTBASH_MAXBYTES=10":  "",
	} {
		_, _, err := Environ([]string{env})
		if (err != nil) != (want != "") || err != nil && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q…", env, err, want)
		}
	}
}

// TestSettings: every kind of key decodes from the file and from the environment into its own type, laid
// out in sections; only the keys a source sets are there; shell.env keeps the case of its names. (How
// viper layers them: cmd's TestConfigLayers.)
func TestSettings(t *testing.T) {
	f := writeFile(t, `timeout: 7
maxBytes: 1e3
killGrace: 2.5
format: text
shell:
  prefix: nice
  snapshot: false
  env: {A: "1", lower: 2, Flag: true, Empty: }
artifacts:
  maxBytes: 0x100
  dir:
interceptor:
  enabled: true
  tools: [read, grep]
  rules:
    - pattern: '^npm\s'
      tool: deps
      message: use deps
`)
	got, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"timeout": 7.0, "maxBytes": 1000, "killGrace": 2.5, "format": "text",
		"shell": map[string]any{"prefix": "nice", "snapshot": false,
			"env": map[string]string{"A": "1", "lower": "2", "Flag": "true", "Empty": ""}},
		"artifacts": map[string]any{"maxBytes": int64(256)},
		"interceptor": map[string]any{"enabled": true, "tools": []string{"read", "grep"},
			"rules": []intercept.Rule{{Pattern: `^npm\s`, Tool: "deps", Message: "use deps"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("file settings\n%#v\nwant\n%#v", got, want)
	}

	got, warnings, err := Environ([]string{
		"AGENTBASH_TIMEOUT=9", "AGENTBASH_SHELL_ENV=B=2,A=env", "AGENTBASH_INTERCEPTOR_TOOLS=find edit",
		"AGENTBASH_SHELL_SNAPSHOT=yes", "PATH=/bin", "AGENTBASH_CONFIG=/x", "AGENTBASH=1",
		"AGENTBASH_MAXBYTES=1", "AGENTBASH_MAXBYTES=2", "AGENTBASH_FORMAT=",
	})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Environ: %v %q", err, warnings)
	}
	want = map[string]any{
		"timeout": 9.0, "maxBytes": 2, // the last one counts
		"shell":       map[string]any{"env": map[string]string{"B": "2", "A": "env"}, "snapshot": true},
		"interceptor": map[string]any{"tools": []string{"find", "edit"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("environment settings\n%#v\nwant\n%#v", got, want)
	}

	got, _, err = Environ([]string{`AGENTBASH_SHELL_ENV={"X": "1", "n": 2}`,
		`AGENTBASH_INTERCEPTOR_RULES=[{"pattern": "^x", "tool": "read", "message": "m", "flags": "i"}]`})
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{
		"shell":       map[string]any{"env": map[string]string{"X": "1", "n": "2"}},
		"interceptor": map[string]any{"rules": []intercept.Rule{{Pattern: "^x", Flags: "i", Tool: "read", Message: "m"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSON settings\n%#v\nwant\n%#v", got, want)
	}
}

// TestUnknownVariables: an AGENTBASH_* variable that is no key is a warning, with the closest key when
// one is close; agentbash's own variables that are no key are not warned about.
func TestUnknownVariables(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"AGENTBASH_TIMOUT", "AGENTBASH_TIMOUT: no such setting; did you mean AGENTBASH_TIMEOUT?"},
		{"AGENTBASH_MAX_BYTES", "AGENTBASH_MAX_BYTES: no such setting; did you mean AGENTBASH_MAXBYTES?"},
		{"AGENTBASH_ARTIFACT_DIR", "AGENTBASH_ARTIFACT_DIR: no such setting; did you mean AGENTBASH_ARTIFACTS_DIR?"},
		{"AGENTBASH_SHELL_ENVS", "AGENTBASH_SHELL_ENVS: no such setting; did you mean AGENTBASH_SHELL_ENV?"},
		{"AGENTBASH_NONZEROEXIT", "AGENTBASH_NONZEROEXIT: no such setting; did you mean AGENTBASH_RESULT_NONZEROEXIT?"},
		{"agentbash_timeout", ""}, // not ours: the prefix is upper case
		{"AGENTBASH_XYZZY", "AGENTBASH_XYZZY: no such setting"},
		{"AGENTBASH_SESSION", ""}, // a key (reference §7.1)
		{"AGENTBASH_SESSIONS", "AGENTBASH_SESSIONS: no such setting; did you mean AGENTBASH_SESSION?"},
		{"AGENTBASH_CONFIG", ""},
		{"AGENTBASH", ""},
	} {
		_, warnings, err := Environ([]string{tc.name + "=5"})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := strings.Join(warnings, "\n"); got != tc.want {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, warnings, _ := Environ([]string{"AGENTBASH_TIMOUT="}); len(warnings) != 0 {
		t.Errorf("an empty variable is unset: %q", warnings)
	}
}

// TestUnknownFileKeys: a key the file should not have is an error, with the closest key.
func TestUnknownFileKeys(t *testing.T) {
	for text, want := range map[string]string{
		"timout: 5\n":                               "timout: no such setting; did you mean timeout?",
		"artifact:\n  dir: x\n":                     "artifact: no such setting; did you mean artifacts?",
		"shell:\n  prefx: x\n":                      "shell.prefx: no such setting; did you mean shell.prefix?",
		"interceptor:\n  rules:\n    - patern: x\n": "interceptor.rules[0].patern: no such field; did you mean pattern?",
		"zzz: 1\n":                                  "zzz: no such setting",
		"shell: 5\n":                                "shell: want a map of settings, got 5",
	} {
		f := writeFile(t, text)
		_, err := f.Settings()
		if err == nil || err.Error() != f.Path+": "+want {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
	for text, want := range map[string]string{"- a\n": "want a map of settings (key: value), got a list", "a: [\n": "not valid YAML"} {
		path := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(path, []byte(text), 0o600)
		_, err := ReadFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": "+want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
}

// TestBadValueInsideVariable: a bad item inside a variable's value leads the message with where it is.
func TestBadValueInsideVariable(t *testing.T) {
	for env, want := range map[string]string{
		`AGENTBASH_SHELL_ENV={"A": [1]}`:                "AGENTBASH_SHELL_ENV: A: want a string, got a list",
		`AGENTBASH_INTERCEPTOR_RULES=[{"tool": 5}]`:     "AGENTBASH_INTERCEPTOR_RULES: [0].tool: want a string, got 5",
		`AGENTBASH_INTERCEPTOR_RULES=[{"patern": "x"}]`: "AGENTBASH_INTERCEPTOR_RULES: [0].patern: no such field; did you mean pattern?",
		`AGENTBASH_INTERCEPTOR_RULES={"pattern": "x"}`:  `AGENTBASH_INTERCEPTOR_RULES: want a JSON array of rules (pattern, flags, tool, message), got "{\"pattern\": \"x\"}"`,
	} {
		if _, _, err := Environ([]string{env}); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", env, err, want)
		}
	}
}

// TestSeveralBadValues: every bad value of a source is reported, one per line, not only the first.
func TestSeveralBadValues(t *testing.T) {
	f := writeFile(t, "timeout: x\nkillGrace: y\n")
	if _, err := f.Settings(); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("file: err = %v, want two lines", err)
	}
	_, _, err := Environ([]string{"AGENTBASH_MAXBYTES=z", "AGENTBASH_TIMEOUT=inf", "AGENTBASH_SHELL_SNAPSHOT=maybe"})
	if err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("environment: err = %v, want two lines (the range check waits for the types)", err)
	}
}
