package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"
)

// File is a config file as written: its path and its keys and values. Raw is handed to a loader, which
// may change it (viper lowercases keys in place); the names of shell.env are kept aside.
type File struct {
	Path     string
	Raw      map[string]any
	envNames []string // shell.env variable names, case as written
}

// ReadFile reads the config file at path and checks it strictly on its own: bad YAML, an unknown key, a
// value of the wrong type or out of range is an error naming the key (SPEC §4). (The merged decode of file, environment
// and flags must turn environment strings into numbers, so it cannot tell `timeout: "5"` in a file from
// AGENTBASH_TIMEOUT=5; this check can.)
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raw := map[string]any{}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	cfg := Default()
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &cfg, ErrorUnused: true})
	if err != nil {
		return nil, err
	}
	if err := dec.Decode(raw); err != nil {
		return nil, fmt.Errorf("%s", Explain(err))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err // a bad value in the file is an error even where a flag overrides it
	}
	f := &File{Path: path, Raw: raw}
	if shell, ok := raw["shell"].(map[string]any); ok {
		if env, ok := shell["env"].(map[string]any); ok {
			f.envNames = slices.Collect(maps.Keys(env))
		}
	}
	return f, nil
}

// Decoder sets up a mapstructure decoder for the merged settings: no weak typing (a YAML `timeout: true`
// is an error, not 1), and environment strings parsed by [ParseEnvString].
func Decoder(dc *mapstructure.DecoderConfig) {
	dc.WeaklyTypedInput = false
	dc.DecodeHook = ParseEnvString
}

// ParseEnvString decodes string values — what environment variables hold — into the type of their key:
// numbers and booleans with strconv; an [Argv] (shell.wrapper) split like shell words ([SplitWords]); other
// lists (interceptor.tools) split on commas and blanks; shell.env from
// a JSON object or KEY=VALUE pairs separated by commas or newlines; interceptor.rules from a JSON array.
// It converts nothing but strings, so a wrong type in a file stays an error naming the key.
func ParseEnvString(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || from.Kind() != reflect.String {
		return data, nil
	}
	trimmed := strings.TrimSpace(s)
	switch to.Kind() {
	case reflect.Bool:
		return strconv.ParseBool(trimmed)
	case reflect.Int, reflect.Int64:
		return strconv.ParseInt(trimmed, 10, 64)
	case reflect.Float64:
		return strconv.ParseFloat(trimmed, 64)
	case reflect.Slice:
		if to == reflect.TypeFor[Argv]() {
			return SplitWords(s)
		}
		if to.Elem().Kind() == reflect.String {
			return strings.FieldsFunc(trimmed, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }), nil
		}
		var v []map[string]any
		if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
			return nil, fmt.Errorf("want a JSON array: %w", err)
		}
		return v, nil
	case reflect.Map:
		if strings.HasPrefix(trimmed, "{") {
			var v map[string]string
			if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
				return nil, fmt.Errorf("want a JSON object of strings: %w", err)
			}
			return v, nil
		}
		v := map[string]string{}
		for _, kv := range strings.FieldsFunc(trimmed, func(r rune) bool { return r == ',' || r == '\n' }) {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return nil, fmt.Errorf("want KEY=VALUE pairs, got %q", kv)
			}
			v[k] = val
		}
		return v, nil
	}
	return data, nil
}

// Explain rewords mapstructure's errors for people: "'shell' has invalid keys: bogus" becomes
// "unknown key: shell.bogus", and several errors are joined on one line.
func Explain(err error) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimPrefix(err.Error(), "decoding failed due to the following error(s):"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, "; ")
	return invalidKeys.ReplaceAllStringFunc(msg, func(m string) string {
		sub := invalidKeys.FindStringSubmatch(m)
		prefix := sub[1]
		var keys []string
		for _, k := range strings.Split(sub[2], ", ") {
			if prefix != "" {
				k = prefix + "." + k
			}
			keys = append(keys, k)
		}
		return "unknown key: " + strings.Join(keys, ", ")
	})
}

var invalidKeys = regexp.MustCompile(`'([^']*)' has invalid keys: ([^;]+)`)

// RestoreEnvCase gives shell.env its variable names back as written in f: viper lowercases every key, and
// environment variable names are case-sensitive.
func RestoreEnvCase(cfg *Config, f *File) {
	if len(cfg.Shell.Env) == 0 || f == nil {
		return
	}
	env := maps.Clone(cfg.Shell.Env)
	for _, name := range f.envNames {
		if v, ok := cfg.Shell.Env[strings.ToLower(name)]; ok {
			delete(env, strings.ToLower(name))
			env[name] = v
		}
	}
	cfg.Shell.Env = env
}
