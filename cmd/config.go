package cmd

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	"wrapper":            "shell.wrapper",
	"artifact-dir":       "artifacts.dir",
	"artifact-max-bytes": "artifacts.maxBytes",
	"intercept":          "interceptor.enabled",
	"tools":              "interceptor.tools",
	"non-zero-exit":      "result.nonZeroExit",
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
// (SPEC §2, §4). A bad value given by a flag is a usageError; an unreadable file or a bad value in the file
// or the environment is a configError; each names where the value came from. The warnings name the
// AGENTBASH_* variables that are no key.
func loadConfigWarn(c *cobra.Command) (config.Config, []string, error) {
	var file *config.File
	if path, explicit := configPath(c); path != "" {
		f, err := config.ReadFile(path)
		switch {
		case err == nil:
			file = f
		case !explicit && errors.Is(err, os.ErrNotExist):
		case errors.Is(err, os.ErrNotExist):
			return config.Config{}, nil, configError{fmt.Errorf("%s: no such file", path)}
		default:
			if _, ok := errors.AsType[*config.ValueError](err); ok {
				return config.Config{}, nil, configError{err}
			}
			return config.Config{}, nil, configError{fmt.Errorf("%s: %w", path, err)}
		}
	}
	var flags []config.Flag
	c.Flags().Visit(func(f *pflag.Flag) { // the flags given, in name order
		key, ok := flagKeys[f.Name]
		if !ok {
			return
		}
		var v any = f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = sv.GetSlice()
		}
		flags = append(flags, config.Flag{Name: f.Name, Key: key, Value: v})
	})
	cfg, warnings, err := config.Load(file, os.Environ(), flags)
	if err != nil {
		if onlyFlags(err) {
			return config.Config{}, warnings, usageError{err: err, cmd: c.CommandPath()}
		}
		return config.Config{}, warnings, configError{err}
	}
	return cfg, warnings, nil
}

// onlyFlags reports whether every bad value in err came from a flag.
func onlyFlags(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if ve, ok := errors.AsType[*config.ValueError](e); !ok || ve.Source.Kind != config.FromFlag {
			return false
		}
	}
	return true
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
