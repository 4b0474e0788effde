package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/agentbash/agentbash/pkg/config"
)

// flagKeys maps a flag to the config key it sets (SPEC §2: flags bind to keys).
var flagKeys = map[string]string{
	"timeout":            "timeout",
	"max-bytes":          "maxBytes",
	"format":             "format",
	"kill-grace":         "killGrace",
	"shell":              "shell.path",
	"prefix":             "shell.prefix",
	"artifact-dir":       "artifacts.dir",
	"artifact-max-bytes": "artifacts.maxBytes",
	"intercept":          "interceptor.enabled",
	"tools":              "interceptor.tools",
	"non-zero-exit":      "result.nonZeroExit",
}

// loadConfig resolves the configuration for c: flag > AGENTBASH_* environment > config file > default
// (SPEC §2, §4). An unreadable file, an unknown key or a wrong type is a configError naming the key.
func loadConfig(c *cobra.Command) (config.Config, error) {
	v := viper.New()
	for k, val := range config.Defaults() {
		v.SetDefault(k, val) // every key, or Unmarshal misses env-only values (viper #761)
	}
	v.SetEnvPrefix("AGENTBASH")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	var bindErr error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if key, ok := flagKeys[f.Name]; ok && bindErr == nil {
			bindErr = v.BindPFlag(key, f)
		}
	})
	if bindErr != nil {
		return config.Config{}, bindErr
	}

	path, explicit := configPath(c)
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			if !explicit && errors.Is(err, os.ErrNotExist) {
				path = ""
			} else {
				return config.Config{}, configError{fmt.Errorf("read %s: %w", path, err)}
			}
		}
	}

	if path != "" {
		if err := checkFile(path); err != nil {
			return config.Config{}, configError{fmt.Errorf("%s%s", where(path), unknownKeys(err))}
		}
	}
	cfg := config.Default()
	err := v.UnmarshalExact(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.WeaklyTypedInput = false // a YAML `timeout: true` is an error, not 1
		dc.DecodeHook = parseEnvString
	})
	if err != nil {
		return config.Config{}, configError{fmt.Errorf("%s%s", where(path), unknownKeys(err))}
	}
	if err := restoreEnvCase(&cfg, path); err != nil {
		return config.Config{}, configError{fmt.Errorf("%s%w", where(path), err)}
	}
	if err := cfg.Validate(); err != nil {
		if ke, ok := errors.AsType[*config.KeyError](err); ok && flagChanged(c, ke.Key) {
			return config.Config{}, usageError{err: fmt.Errorf("--%s: %s", flagOf(ke.Key), ke.Msg), cmd: c.CommandPath()}
		}
		return config.Config{}, configError{fmt.Errorf("%s%w", where(path), err)}
	}
	return cfg, nil
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

// configPath is --config, else AGENTBASH_CONFIG, else the default file when it exists.
func configPath(c *cobra.Command) (path string, explicit bool) {
	if f := c.Flags().Lookup("config"); f != nil && f.Value.String() != "" {
		return config.ExpandHome(f.Value.String()), true
	}
	if p := os.Getenv("AGENTBASH_CONFIG"); p != "" {
		return config.ExpandHome(p), true
	}
	if p := config.DefaultFile(); fileExists(p) {
		return p, false
	}
	return "", false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// parseEnvString decodes string values — what environment variables hold — into the type of their key:
// numbers and booleans with strconv; lists (interceptor.tools) split on commas and blanks; shell.env from
// a JSON object or KEY=VALUE pairs separated by commas or newlines; interceptor.rules from a JSON array.
// It converts nothing but strings, so a wrong type in a file stays an error naming the key.
func parseEnvString(from, to reflect.Type, data any) (any, error) {
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

// unknownKeys rewords mapstructure's errors for people: "'shell' has invalid keys: bogus" becomes
// "unknown key: shell.bogus", and several errors are joined on one line.
func unknownKeys(err error) string {
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

// flagChanged reports whether a flag bound to key was given.
func flagChanged(c *cobra.Command, key string) bool {
	f := c.Flags().Lookup(flagOf(key))
	return f != nil && f.Changed
}

// flagOf is the flag bound to key, or "".
func flagOf(key string) string {
	for flag, k := range flagKeys {
		if k == key {
			return flag
		}
	}
	return ""
}

// checkFile decodes the config file alone, strictly: an unknown key or a value of the wrong type is an
// error naming the key. (The merged decode below must turn environment strings into numbers, so it
// cannot tell `timeout: "5"` in a file from AGENTBASH_TIMEOUT=5.)
func checkFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return err
	}
	cfg := config.Default()
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &cfg, ErrorUnused: true})
	if err != nil {
		return err
	}
	return dec.Decode(raw)
}

// restoreEnvCase gives shell.env its variable names back as written: viper lowercases every key, and
// environment variable names are case-sensitive.
func restoreEnvCase(cfg *config.Config, path string) error {
	if len(cfg.Shell.Env) == 0 || path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var raw struct {
		Shell struct {
			Env map[string]any `yaml:"env"`
		} `yaml:"shell"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return err
	}
	env := make(map[string]string, len(cfg.Shell.Env))
	for k, v := range cfg.Shell.Env {
		env[k] = v
	}
	for name := range raw.Shell.Env {
		if v, ok := cfg.Shell.Env[strings.ToLower(name)]; ok {
			delete(env, strings.ToLower(name))
			env[name] = v
		}
	}
	cfg.Shell.Env = env
	return nil
}
