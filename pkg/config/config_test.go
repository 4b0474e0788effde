package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestClampTimeout(t *testing.T) {
	for _, tc := range []struct {
		in, want float64
		clamped  bool
	}{
		{300, 300, false}, {1, 1, false}, {3600, 3600, false}, {1.5, 1.5, false},
		{0, 1, true}, {-5, 1, true}, {0.5, 1, true}, {7200, 3600, true},
	} {
		got, clamped := ClampTimeout(tc.in)
		if got != tc.want || clamped != tc.clamped {
			t.Errorf("ClampTimeout(%v) = %v, %v; want %v, %v", tc.in, got, clamped, tc.want, tc.clamped)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"format":             func(c *Config) { c.Format = "xml" },
		"maxBytes":           func(c *Config) { c.MaxBytes = 0 },
		"killGrace":          func(c *Config) { c.KillGrace = -1 },
		"artifacts.maxBytes": func(c *Config) { c.Artifacts.MaxBytes = 0 },
		"result.nonZeroExit": func(c *Config) { c.Result.NonZeroExit = "maybe" },
		"shell.env":          func(c *Config) { c.Shell.Env = map[string]string{"A=B": "x"} },
	} {
		c := Default()
		mutate(&c)
		err := c.Validate()
		if err == nil || len(err.Error()) < len(name) || err.Error()[:len(name)] != name {
			t.Errorf("%s: err = %v, want one naming the key", name, err)
		}
	}
}

func TestDefaultsCoverEveryKey(t *testing.T) {
	keys := Defaults()
	for _, k := range []string{"timeout", "maxBytes", "format", "killGrace", "shell.path", "shell.prefix",
		"shell.snapshot", "shell.env", "artifacts.dir", "artifacts.maxBytes", "interceptor.enabled",
		"interceptor.tools", "interceptor.defaultRules", "interceptor.rules", "result.nonZeroExit"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no default for %s", k)
		}
	}
	if len(keys) != 15 {
		t.Errorf("%d keys, want 15", len(keys))
	}
}

func TestPaths(t *testing.T) {
	home, _ := os.UserHomeDir()
	if got := ExpandHome("~/x"); got != filepath.Join(home, "x") {
		t.Errorf("ExpandHome = %q", got)
	}
	if got := ExpandHome("/a/~"); got != "/a/~" {
		t.Errorf("ExpandHome = %q", got)
	}
	c := Default()
	c.Artifacts.Dir = "~/art"
	if got := c.ArtifactDir(); got != filepath.Join(home, "art") {
		t.Errorf("ArtifactDir = %q", got)
	}
}
