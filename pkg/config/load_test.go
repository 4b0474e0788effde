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

// TestBadValueNamesItsSource is the table of every key × file, environment, flag: a value of the wrong
// type is an error naming where it came from and what was expected, in words.
func TestBadValueNamesItsSource(t *testing.T) {
	for _, key := range Keys() {
		yamlValue, text := badValues(t, key)
		want := "want " + Expected(key)
		t.Run(key+"/file", func(t *testing.T) {
			f := writeFile(t, yamlAt(key, yamlValue))
			_, _, err := Load(f, nil, nil)
			check(t, err, f.Path+": "+key+": "+want, FromFile)
		})
		if text == "" {
			continue // any text is a valid value of this key
		}
		t.Run(key+"/env", func(t *testing.T) {
			_, _, err := Load(nil, []string{EnvName(key) + "=" + text}, nil)
			check(t, err, EnvName(key)+": want", FromEnv)
		})
		t.Run(key+"/flag", func(t *testing.T) {
			_, _, err := Load(nil, nil, []Flag{{Name: "the-flag", Key: key, Value: text}})
			check(t, err, "--the-flag: want", FromFlag)
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

// TestOutOfRangeNamesItsSource: a value of the right type but out of range names its source too, also
// when the key was set by an earlier source and is overridden later (each layer is checked on its own).
func TestOutOfRangeNamesItsSource(t *testing.T) {
	f := writeFile(t, "maxBytes: 0\n")
	for _, tc := range []struct {
		name    string
		file    *File
		env     []string
		flags   []Flag
		want    string
		wantErr bool
	}{
		{"file", f, nil, nil, f.Path + ": maxBytes: must be from 1 to", true},
		{"file overridden by flag", f, nil, []Flag{{Name: "max-bytes", Key: "maxBytes", Value: "10"}}, f.Path + ": maxBytes: must be", true},
		{"env", nil, []string{"AGENTBASH_MAXBYTES=0"}, nil, "AGENTBASH_MAXBYTES: must be from 1 to", true},
		{"flag", nil, nil, []Flag{{Name: "max-bytes", Key: "maxBytes", Value: "0"}}, "--max-bytes: must be from 1 to", true},
		{"enum by env", nil, []string{"AGENTBASH_FORMAT=xml"}, nil, `AGENTBASH_FORMAT: must be json, text or auto, got "xml"`, true},
		{"infinite timeout by env", nil, []string{"AGENTBASH_TIMEOUT=inf"}, nil, "AGENTBASH_TIMEOUT: must be a finite number of seconds", true},
		{"bad env name by env", nil, []string{"AGENTBASH_SHELL_ENV==x"}, nil, `AGENTBASH_SHELL_ENV: invalid variable name ""`, true},
		{"flag fixes nothing but is fine", nil, []string{"AGENTBASH_MAXBYTES=10"}, []Flag{{Name: "max-bytes", Key: "maxBytes", Value: "20"}}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load(tc.file, tc.env, tc.flags)
			if (err != nil) != tc.wantErr || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q…", err, tc.want)
			}
		})
	}
}

// TestLoadLayers: every kind of key decodes from each source; later sources win key by key; shell.env
// merges (file, then AGENTBASH_SHELL_ENV) and keeps the case of its names.
func TestLoadLayers(t *testing.T) {
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
interceptor:
  enabled: true
  tools: [read, grep]
  rules:
    - pattern: '^npm\s'
      tool: deps
      message: use deps
`)
	cfg, warnings, err := Load(f, []string{
		"AGENTBASH_TIMEOUT=9", "AGENTBASH_SHELL_ENV=B=2,A=env", "AGENTBASH_INTERCEPTOR_TOOLS=find edit",
		"AGENTBASH_SHELL_SNAPSHOT=yes", "PATH=/bin", "AGENTBASH_CONFIG=/x", "AGENTBASH=1",
	}, []Flag{{Name: "timeout", Key: "timeout", Value: "5"}, {Name: "tools", Key: "interceptor.tools", Value: []string{"write"}}})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("Load: %v %q", err, warnings)
	}
	want := Default()
	want.Timeout, want.MaxBytes, want.KillGrace, want.Format = 5, 1000, 2.5, "text"
	want.Shell = Shell{Prefix: "nice", Snapshot: true, Wrapper: Argv{}, Env: map[string]string{"A": "env", "lower": "2", "Flag": "true", "Empty": "", "B": "2"}}
	want.Artifacts.MaxBytes = 256
	want.Interceptor = Interceptor{Enabled: true, Tools: []string{"write"}, DefaultRules: true,
		Rules: []intercept.Rule{{Pattern: `^npm\s`, Tool: "deps", Message: "use deps"}}}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got\n%+v\nwant\n%+v", cfg, want)
	}

	cfg, _, err = Load(nil, []string{`AGENTBASH_SHELL_ENV={"X": "1", "n": 2}`,
		`AGENTBASH_INTERCEPTOR_RULES=[{"pattern": "^x", "tool": "read", "message": "m", "flags": "i"}]`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Shell.Env; !reflect.DeepEqual(got, map[string]string{"X": "1", "n": "2"}) {
		t.Errorf("JSON shell.env = %v", got)
	}
	if got := cfg.Interceptor.Rules; len(got) != 1 || got[0].Flags != "i" || got[0].Pattern != "^x" {
		t.Errorf("JSON rules = %+v", got)
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
		{"AGENTBASH_SESSION", "AGENTBASH_SESSION: no such setting"}, // a later feature, not yet a key
		{"AGENTBASH_CONFIG", ""},
		{"AGENTBASH", ""},
	} {
		_, warnings, err := Load(nil, []string{tc.name + "=5"}, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := strings.Join(warnings, "\n"); got != tc.want {
			t.Errorf("%s: warnings %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, warnings, _ := Load(nil, []string{"AGENTBASH_TIMOUT="}, nil); len(warnings) != 0 {
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
		_, _, err := Load(f, nil, nil)
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
		if _, _, err := Load(nil, []string{env}, nil); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", env, err, want)
		}
	}
}

// TestSeveralBadValues: every bad value is reported, one per line, not only the first.
func TestSeveralBadValues(t *testing.T) {
	f := writeFile(t, "timeout: x\nkillGrace: y\n")
	_, _, err := Load(f, []string{"AGENTBASH_MAXBYTES=z"}, nil)
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("err = %v, want three lines", err)
	}
}
