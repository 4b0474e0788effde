package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/intercept"
)

// loadRun resolves the configuration of `agentbash run ARGS… true` in-process, with the variables env set
// (isolated from the caller's).
func loadRun(t *testing.T, env []string, args ...string) (config.Config, []string, error) {
	t.Helper()
	isolate(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	runCmd, _, err := newRootCmd(BuildInfo{}, IO{}).Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runCmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return loadConfigWarn(runCmd)
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigLayers: viper layers flag > environment > file > default key by key, every kind of key comes
// through with its type, and shell.env merges (file, then AGENTBASH_SHELL_ENV) keeping the case of its
// names: http_proxy and HTTP_PROXY are two variables, and a name may hold a dot.
func TestConfigLayers(t *testing.T) {
	path := writeConfig(t, `timeout: 7
maxBytes: 1e3
killGrace: 2.5
format: text
shell:
  prefix: nice
  snapshot: false
  env: {A: "1", lower: 2, Flag: true, Empty: , http_proxy: h, HTTP_PROXY: H, a.b: dot}
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
	cfg, warnings, err := loadRun(t, []string{
		"AGENTBASH_TIMEOUT=9", "AGENTBASH_SHELL_ENV=B=2,A=env,Http_Proxy=e", "AGENTBASH_INTERCEPTOR_TOOLS=find edit",
		"AGENTBASH_SHELL_SNAPSHOT=yes", "AGENTBASH_ARTIFACTS_DIR=/art",
	}, "--config", path, "--timeout", "5.5", "--tools", "write", "--artifact-max-bytes", "512", "--non-zero-exit", "report")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("load: %v %q", err, warnings)
	}
	want := config.Default()
	want.Timeout, want.MaxBytes, want.KillGrace, want.Format = 5.5, 1000, 2.5, "text"
	want.Shell.Prefix, want.Shell.Snapshot = "nice", true
	want.Shell.Env = map[string]string{"A": "env", "lower": "2", "Flag": "true", "Empty": "", "B": "2",
		"http_proxy": "h", "HTTP_PROXY": "H", "Http_Proxy": "e", "a.b": "dot"}
	want.Artifacts.Dir, want.Artifacts.MaxBytes = "/art", 512
	want.Interceptor.Enabled, want.Interceptor.Tools = true, []string{"write"}
	want.Interceptor.Rules = []intercept.Rule{{Pattern: `^npm\s`, Tool: "deps", Message: "use deps"}}
	want.Result.NonZeroExit = "report"
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got\n%+v\nwant\n%+v", cfg, want)
	}

	// Nothing set: the defaults, exactly.
	cfg, _, err = loadRun(t, nil)
	if err != nil || !reflect.DeepEqual(cfg, config.Default()) {
		t.Errorf("no sources: %v\n%+v\nwant\n%+v", err, cfg, config.Default())
	}
	// A variable's map alone; JSON values.
	cfg, _, err = loadRun(t, []string{`AGENTBASH_SHELL_ENV={"X": "1", "n": 2}`,
		`AGENTBASH_INTERCEPTOR_RULES=[{"pattern": "^x", "tool": "read", "message": "m", "flags": "i"}]`})
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

// TestBadFlagValues is the table of every flag bound to a key: a value of the wrong type is a usage error
// (exit 2, no result) naming the flag and saying in words what it takes.
func TestBadFlagValues(t *testing.T) {
	runCmd, _, _ := newRootCmd(BuildInfo{}, IO{}).Find([]string{"run"})
	for name, key := range flagKeys {
		bad := map[string]string{"float64": "abc", "int": "1.5", "int64": "1.5", "bool": "maybe"}[runCmd.Flags().Lookup(name).Value.Type()]
		if bad == "" {
			continue // any text is a valid value of this flag
		}
		t.Run(name, func(t *testing.T) {
			isolate(t)
			out, stderr, code := runCLI(t, "run", "--"+name+"="+bad, "true")
			want := fmt.Sprintf("agentbash: --%s: want %s, got %q\n", name, config.Expected(key), bad)
			if code != 2 || out != "" || !strings.HasPrefix(stderr, want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, stderr, want)
			}
		})
	}
}

// TestFlagOutOfRange: a flag's value out of range is a usage error naming the flag; a bad value in the
// file is the file's error even where a flag overrides it; several bad values of the file and the
// environment are all reported, one per line.
func TestFlagOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		file  string
		env   []string
		args  []string
		want  string
		usage bool
	}{
		{"flag", "", nil, []string{"--max-bytes", "0"}, "--max-bytes: must be from 1 to 67108864 bytes, got 0", true},
		{"enum flag", "", nil, []string{"--format", "xml"}, `--format: must be json, text or auto, got "xml"`, true},
		{"infinite flag", "", nil, []string{"--timeout", "inf"}, "--timeout: must be a finite number of seconds, got +Inf", true},
		{"over a good variable", "", []string{"AGENTBASH_MAXBYTES=10"}, []string{"--max-bytes", "0"}, "--max-bytes: must be", true},
		{"file overridden by flag", "maxBytes: 0\n", nil, []string{"--max-bytes", "10"}, "FILE: maxBytes: must be from 1 to", false},
		{"variable overridden by flag", "", []string{"AGENTBASH_TIMEOUT=x"}, []string{"--timeout", "5"}, `AGENTBASH_TIMEOUT: want a number of seconds, got "x"`, false},
		{"file and variables", "timeout: x\nkillGrace: y\n", []string{"AGENTBASH_MAXBYTES=z"}, nil,
			"FILE: timeout: want a number of seconds, got \"x\"\nFILE: killGrace: want a number of seconds, got \"y\"\nAGENTBASH_MAXBYTES: want a whole number of bytes, got \"z\"", false},
		{"flag fixes nothing but is fine", "", []string{"AGENTBASH_MAXBYTES=10"}, []string{"--max-bytes", "20"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeConfig(t, tc.file)
				tc.args = append([]string{"--config", path}, tc.args...)
			}
			_, _, err := loadRun(t, tc.env, tc.args...)
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if !tc.usage && want != "" {
				want = "config: " + strings.ReplaceAll(want, "\n", "\nconfig: ") // one line per bad setting
			}
			if (err != nil) != (want != "") || err != nil && !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err = %v, want %q…", err, want)
			}
			_, usage := errors.AsType[usageError](err)
			if _, cfgErr := errors.AsType[configError](err); err != nil && (usage != tc.usage || cfgErr == tc.usage) {
				t.Errorf("err = %#v, want a usage error: %v", err, tc.usage)
			}
		})
	}
}

// unmarshalAll is how loadConfigWarn merged the sources before it decoded only the keys set: every key's
// default in viper too, and UnmarshalExact of all of them. TestConfigDecodesOnlySetKeys holds the two equal.
func unmarshalAll(t *testing.T, c *cobra.Command) config.Config {
	t.Helper()
	v := viper.New()
	for key, value := range config.Defaults() {
		v.SetDefault(key, value)
	}
	if file, err := configFile(c); err != nil {
		t.Fatal(err)
	} else if file != nil {
		settings, err := file.Settings()
		if err != nil {
			t.Fatal(err)
		}
		_ = v.MergeConfigMap(hexNames(settings))
	}
	settings, _, err := config.Environ(os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	_ = v.MergeConfigMap(hexNames(settings))
	for name, key := range flagKeys {
		if f := c.Flags().Lookup(name); f != nil {
			_ = v.BindPFlag(key, f)
		}
	}
	var cfg config.Config
	if err := v.UnmarshalExact(&cfg, strictDecoding); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigDecodesOnlySetKeys: the defaults with the keys a source set decoded on their own are exactly
// what viper's UnmarshalExact of every key gave (nil and empty lists and maps alike), for every kind of key
// from each source and from several at once, and every key alone from the file, the environment and its
// flag.
func TestConfigDecodesOnlySetKeys(t *testing.T) {
	type source struct {
		name string
		file string
		env  []string
		args []string
	}
	cases := []source{
		{"nothing", "", nil, nil},
		{"empty file", "# nothing\n", nil, nil},
		{"empty sections and lists", "shell:\ninterceptor: {tools: [], rules: []}\nsandbox: {writable: []}\n", nil, nil},
		{"empty map", "shell: {env: {}}\n", []string{"AGENTBASH_TIMEOUT=3"}, nil},
		{"every kind", `timeout: 7
maxBytes: 1e3
killGrace: 2.5
format: text
session: s
target: local
targets: {allowed: [ssh://h]}
shell: {path: /bin/sh, prefix: nice, wrapper: [nice, -n, "1"], snapshot: false, env: {A: "1", b.c: x, Z: }}
artifacts: {dir: ~/art, maxBytes: 0x100}
interceptor: {enabled: true, tools: [read], defaultRules: false, rules: [{pattern: '^x', flags: i, tool: t, message: m}]}
result: {nonZeroExit: report}
tasks: {dir: /t, maxLifetime: 5}
mcp: {maxBytes: 100}
sandbox: {mode: workspace-write, network: proxy, writable: [/w], denyRead: [], cacheDirs: [/c], allowHosts: ["h:1"]}
`, nil, nil},
		{"file, variables and flags", "timeout: 7\nshell: {env: {A: f, B: f}}\ninterceptor: {tools: [read]}\n",
			[]string{"AGENTBASH_SHELL_ENV=B=e,C=e", "AGENTBASH_TIMEOUT=8", "AGENTBASH_SHELL_WRAPPER=nice -n 2",
				"AGENTBASH_SANDBOX_WRITABLE=/a b,/c", `AGENTBASH_INTERCEPTOR_RULES=[{"pattern": "^y", "tool": "u"}]`},
			[]string{"--timeout", "9.5", "--tools", "grep,find", "--wrapper", "ionice 'a b'", "--max-bytes", "77",
				"--artifact-max-bytes", "99", "--intercept", "--sandbox", "workspace-write", "--sandbox-writable", "/x",
				"--sandbox-writable", "/y,z", "--sandbox-network", "proxy", "--sandbox-allow-host", "h:1", "--format", "json",
				"--shell", "/bin/bash", "--prefix", "set -e;", "--artifact-dir", "/d", "--kill-grace", "1",
				"--non-zero-exit", "report", "--task-dir", "/t", "--session", "", "--target", "local"}},
		{"flags as the defaults", "", nil, []string{"--timeout", "30", "--format", "auto", "--wrapper", "", "--tools", ""}},
	}
	for _, key := range config.Keys() {
		value := map[string]string{"float64": "3", "int": "5", "int64": "6", "bool": "false", "string": "x"}
		fv, _ := new(config.Default()).Setting(key)
		text, ok := value[fv.Kind().String()]
		if !ok {
			continue // lists, maps and rules: above
		}
		switch key {
		case "format":
			text = "json"
		case "result.nonZeroExit":
			text = "report"
		case "sandbox.mode":
			text = "read-only"
		case "sandbox.network", "target":
			text = map[string]string{"sandbox.network": "on", "target": "local"}[key]
		}
		file := key + ": " + text + "\n"
		if section, name, ok := strings.Cut(key, "."); ok {
			file = section + ":\n  " + name + ": " + text + "\n"
		}
		cases = append(cases, source{key + " in the file", file, nil, nil},
			source{key + " in the environment", "", []string{config.EnvName(key) + "=" + text}, nil})
		for name, k := range flagKeys {
			if k == key {
				args := []string{"--" + name, text}
				if key == "sandbox.network" {
					args = append(args, "--sandbox", "read-only") // a network flag needs a mode
				}
				cases = append(cases, source{key + " by flag", "", nil, args})
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeConfig(t, tc.file)}, args...)
			}
			cfg, _, err := loadRun(t, tc.env, args...)
			if err != nil {
				t.Fatal(err)
			}
			runCmd, _, _ := newRootCmd(BuildInfo{}, IO{}).Find([]string{"run"})
			if err := runCmd.ParseFlags(args); err != nil {
				t.Fatal(err)
			}
			if want := unmarshalAll(t, runCmd); !reflect.DeepEqual(cfg, want) {
				t.Errorf("got\n%#v\nwant\n%#v", cfg, want)
			}
		})
	}
}
