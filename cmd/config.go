package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

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

	var file *config.File
	path, explicit := configPath(c)
	if path != "" {
		f, err := config.ReadFile(path)
		switch {
		case err == nil:
			file = f
			if err := v.MergeConfigMap(f.Raw); err != nil {
				return config.Config{}, configError{fmt.Errorf("%s%w", where(path), err)}
			}
		case !explicit && errors.Is(err, os.ErrNotExist):
			path = ""
		default:
			return config.Config{}, configError{fmt.Errorf("%s%w", where(path), err)}
		}
	}

	cfg := config.Default()
	if err := v.UnmarshalExact(&cfg, config.Decoder); err != nil {
		return config.Config{}, configError{fmt.Errorf("%s%s", where(path), config.Explain(err))}
	}
	config.RestoreEnvCase(&cfg, file)
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
