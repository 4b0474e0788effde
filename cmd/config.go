package cmd

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/sandbox"
)

// flagKeys maps a flag to the config key it sets (reference §2: flags bind to keys).
var flagKeys = map[string]string{
	"timeout":            "timeout",
	"max-bytes":          "maxBytes",
	"format":             "format",
	"kill-grace":         "killGrace",
	"shell":              "shell.path",
	"prefix":             "shell.prefix",
	"wrapper":            "shell.wrapper",
	"artifact-dir":       "artifacts.dir",
	"artifact-max-bytes": "artifacts.maxBytes",
	"intercept":          "interceptor.enabled",
	"tools":              "interceptor.tools",
	"non-zero-exit":      "result.nonZeroExit",
	"task-dir":           "tasks.dir",
	"session":            "session",
	"target":             "target",
	"sandbox":            "sandbox.mode",
	"sandbox-network":    "sandbox.network",
	"sandbox-writable":   "sandbox.writable",
	"sandbox-allow-host": "sandbox.allowHosts",
}

// loadConfig resolves the configuration for c (see [loadConfigWarn]) and says its warnings on stderr, for
// the commands that print no result.
func loadConfig(c *cobra.Command) (config.Config, error) {
	cfg, warnings, err := loadConfigWarn(c)
	for _, w := range warnings {
		fmt.Fprintln(c.ErrOrStderr(), "agentbash: warning:", w)
	}
	return cfg, err
}

// loadConfigWarn resolves the configuration for c: flag > AGENTBASH_* environment > config file > default
// (reference §2, §4). A viper of its own layers the sources: the file's settings, the variables' settings
// merged over them (so a map such as shell.env merges key by key, as reference §4 wants, where viper's own
// environment layer would replace it whole), then the flags bound to their keys. pkg/config checks the file
// and the variables first, each on its own, so a bad value is an error even where a later source overrides
// it: a configError naming the file and key or the variable. A flag's value out of range is a usageError
// naming the flag (pflag has checked its type). The warnings name the AGENTBASH_* variables that are no key.
//
// The result starts as the defaults ([config.Default]) and takes from viper only the keys a source set,
// each decoded on its own ([decodeKey]): what viper's UnmarshalExact of every key gives (a test holds them
// equal), without decoding the thirty-odd defaults back into the struct in every process (a third of a
// millisecond of every run).
func loadConfigWarn(c *cobra.Command) (config.Config, []string, error) {
	v := viper.New()
	set := map[string]bool{} // the keys a source set
	var errs []error
	file, err := configFile(c)
	if err != nil {
		return config.Config{}, nil, configError{err}
	}
	if file != nil {
		settings, err := file.Settings()
		errs = append(errs, err, v.MergeConfigMap(hexNames(settings)))
		addKeys(set, settings, "")
	}
	settings, warnings, err := config.Environ(os.Environ())
	errs = append(errs, err, v.MergeConfigMap(hexNames(settings)))
	addKeys(set, settings, "")
	if err := errors.Join(errs...); err != nil {
		return config.Config{}, warnings, configError{err}
	}
	for name, key := range flagKeys {
		if f := c.Flags().Lookup(name); f != nil { // the command has the flag
			if err := v.BindPFlag(key, f); err != nil {
				return config.Config{}, warnings, err
			}
			if f.Changed {
				set[key] = true
			}
		}
	}

	cfg := config.Default()
	for key := range set {
		if err := decodeKey(&cfg, key, v.Get(key)); err != nil {
			return config.Config{}, warnings, configError{fmt.Errorf("merge the settings: %w", err)} // a bug
		}
	}
	// --sandbox-deny-read adds to sandbox.denyRead, never replaces it: naming one more secret must not
	// unhide ~/.ssh (reference §13). An empty list is the config file's or the environment's to say.
	if f := c.Flags().Lookup("sandbox-deny-read"); f != nil && f.Changed {
		more, _ := c.Flags().GetStringArray("sandbox-deny-read")
		cfg.Sandbox.DenyRead = append(cfg.Sandbox.DenyRead, more...)
	}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, warnings, usageError{err: flagValueError(c, err), cmd: c.CommandPath()}
	}
	if err := sandboxFlagsError(c, cfg); err != nil {
		return config.Config{}, warnings, usageError{err: err, cmd: c.CommandPath()}
	}
	if p := cfg.Sandbox.Policy(); !p.On() && (p.Network == sandbox.NetworkProxy || len(p.AllowHosts) > 0) {
		// From the config file or the environment: the command runs, but not as whoever set it thinks.
		warnings = append(warnings, "sandbox.network proxy and sandbox.allowHosts confine nothing without "+
			"sandbox.mode: the command runs unconfined, with the host's whole network (set sandbox.mode: "+
			"workspace-write or read-only)")
	}
	return cfg, warnings, nil
}

// sandboxFlagsError is the error of the sandbox flags of c that the resolved cfg would not use, or nil:
// each says the whole fix at once, so following it never meets the next refusal. A sandbox flag without a
// mode would run the command unconfined without a word; hosts from a flag without the proxy, or writable
// paths from a flag in read-only mode, were meant for this command and would be ignored (from the file or
// the environment, they wait for a command that uses them).
func sandboxFlagsError(c *cobra.Command, cfg config.Config) error {
	given := func(name string) bool { f := c.Flags().Lookup(name); return f != nil && f.Changed }
	hosts := given("sandbox-allow-host") && cfg.Sandbox.Network != sandbox.NetworkProxy
	policy := cfg.Sandbox.Policy()
	switch {
	case hosts && !policy.On():
		return errors.New("--sandbox-allow-host: only network: proxy uses it, and only with a sandbox mode (add " +
			"--sandbox workspace-write --sandbox-network proxy, or set sandbox.mode and sandbox.network: proxy)")
	case hosts:
		return errors.New("--sandbox-allow-host: only network: proxy uses it (add --sandbox-network proxy, " +
			"or set sandbox.network: proxy)")
	case given("sandbox-writable") && policy.Mode == sandbox.ModeReadOnly:
		return errors.New("--sandbox-writable: read-only mode writes only in a private /tmp (use --sandbox " +
			"workspace-write)")
	case policy.On():
		return nil
	}
	for _, name := range []string{"sandbox-network", "sandbox-writable", "sandbox-deny-read", "sandbox-allow-host"} {
		if !given(name) {
			continue
		}
		mode := "--sandbox workspace-write (or read-only)"
		if given("sandbox-writable") { // read-only would ignore the paths
			mode = "--sandbox workspace-write"
		}
		return fmt.Errorf("--%s confines nothing without a sandbox mode: add %s, or set sandbox.mode", name, mode)
	}
	return nil
}

// configFile reads the config file of c (see [configPath]); nil when the default one is missing.
func configFile(c *cobra.Command) (*config.File, error) {
	path, explicit := configPath(c)
	f, err := config.ReadFile(path)
	switch {
	case err == nil:
		return f, nil
	case !explicit && errors.Is(err, os.ErrNotExist):
		return nil, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file", path)
	}
	if _, ok := errors.AsType[*config.ValueError](err); ok {
		return nil, err
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// hexNames is a source's settings (see [config.File.Settings]) as viper keeps them: the names of a map
// setting (shell.env) hex-encoded, because viper folds the case of keys and splits them at dots, and they
// are variable names, case-sensitive (http_proxy and HTTP_PROXY are two) and free to hold dots. The maps
// so become sections to viper, which merges them key by key; [strictDecoding] decodes the names.
func hexNames(settings map[string]any) map[string]any {
	out := make(map[string]any, len(settings))
	for key, value := range settings {
		switch value := value.(type) {
		case map[string]any: // a section
			out[key] = hexNames(value)
		case map[string]string:
			m := make(map[string]any, len(value))
			for name, s := range value {
				m[hex.EncodeToString([]byte(name))] = s
			}
			out[key] = m
		default:
			out[key] = value
		}
	}
	return out
}

// addKeys adds the dotted keys of a source's settings (see [config.File.Settings]) to set.
func addKeys(set map[string]bool, settings map[string]any, prefix string) {
	for name, value := range settings {
		if section, ok := value.(map[string]any); ok {
			addKeys(set, section, prefix+name+".")
			continue
		}
		set[prefix+name] = true
	}
}

// decodeKey decodes viper's value of key (v.Get) into its setting of cfg, as UnmarshalExact decodes it into
// a Config with no value: into a zero value of the setting's type, with [strictDecoding]; a key that is no
// setting is an error, as an unknown key is to UnmarshalExact.
func decodeKey(cfg *config.Config, key string, value any) error {
	fv, ok := cfg.Setting(key)
	if !ok {
		return fmt.Errorf("%s: no such setting", key)
	}
	out := reflect.New(fv.Type())
	dc := &mapstructure.DecoderConfig{Result: out.Interface(), ErrorUnused: true}
	strictDecoding(dc)
	d, err := mapstructure.NewDecoder(dc)
	if err == nil {
		err = d.Decode(value)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	fv.Set(out.Elem())
	return nil
}

// strictDecoding decodes viper's merged settings into a Config with no unknown key (UnmarshalExact) and
// no weak typing, as every source was checked and typed before: a failure is a bug. Viper hands a float
// flag's value on as the text pflag parsed, which is parsed again; map names are decoded by [namesFromHex].
func strictDecoding(dc *mapstructure.DecoderConfig) {
	dc.WeaklyTypedInput = false
	dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(mapstructure.StringToFloat64HookFunc(), wordsFromFlag, namesFromHex)
}

// wordsFromFlag splits the text of a words flag (--wrapper, which viper passes on as its String form, quoted)
// back into its words; the flag checked them when it was set.
func wordsFromFlag(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to != reflect.TypeFor[config.Argv]() {
		return data, nil
	}
	return config.SplitWords(s)
}

// namesFromHex turns a map setting that [hexNames] encoded back into names and values, for mapstructure.
func namesFromHex(_, to reflect.Type, data any) (any, error) {
	m, ok := data.(map[string]any)
	if !ok || to != reflect.TypeFor[map[string]string]() {
		return data, nil
	}
	out := make(map[string]string, len(m))
	for h, value := range m {
		name, err := hex.DecodeString(h)
		s, isString := value.(string)
		if err != nil || !isString {
			return nil, fmt.Errorf("map entry %q: %v (%T)", h, err, value)
		}
		out[string(name)] = s
	}
	return out, nil
}

// flagValueError names the flag of the key a *config.KeyError is about: the file and the environment are
// checked on their own and the defaults are valid, so a value out of range can only be a flag's.
func flagValueError(c *cobra.Command, err error) error {
	ke, ok := errors.AsType[*config.KeyError](err)
	if !ok {
		return err
	}
	for name, key := range flagKeys {
		if f := c.Flags().Lookup(name); key == ke.Key && f != nil && f.Changed {
			return &config.ValueError{Source: config.Source{Kind: config.FromFlag, Name: name}, Key: key, Msg: ke.Msg}
		}
	}
	return err
}

// flagError rewords a flag value pflag could not parse, naming the flag and saying in words what it takes:
// `--timeout: want a number of seconds, got "abc"` instead of strconv's text.
func flagError(err error) error {
	ive, ok := errors.AsType[*pflag.InvalidValueError](err)
	if !ok {
		return err
	}
	f := ive.GetFlag()
	want := ""
	if key, ok := flagKeys[f.Name]; ok {
		want = config.Expected(key)
	} else if _, ok := errors.AsType[*strconv.NumError](err); ok {
		want = map[string]string{"bool": "true or false", "int": "a whole number", "int64": "a whole number",
			"float64": "a number"}[f.Value.Type()]
	}
	if want == "" {
		return fmt.Errorf("--%s: %w", f.Name, errors.Unwrap(ive))
	}
	if reason := errors.Unwrap(ive); reason != nil {
		if _, isNum := errors.AsType[*strconv.NumError](err); !isNum {
			return fmt.Errorf("--%s: want %s, got %q: %v", f.Name, want, ive.GetValue(), reason) // say why
		}
	}
	return fmt.Errorf("--%s: want %s, got %q", f.Name, want, ive.GetValue())
}

// configPath is --config, else AGENTBASH_CONFIG (explicit: it must exist), else the default file, which
// may be missing.
func configPath(c *cobra.Command) (path string, explicit bool) {
	if f := c.Flags().Lookup("config"); f != nil && f.Value.String() != "" {
		return config.ExpandHome(f.Value.String()), true
	}
	if p := os.Getenv("AGENTBASH_CONFIG"); p != "" {
		return config.ExpandHome(p), true
	}
	return config.DefaultFile(), false
}
