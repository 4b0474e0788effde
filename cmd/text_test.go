package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarningsSaidOnce: every warning reaches the reader exactly once, wherever the result goes. JSON keeps
// them in details and says only a broken rule on stderr; text off a terminal puts each on stderr; text on a
// terminal puts them in its footer and nothing on stderr.
func TestWarningsSaidOnce(t *testing.T) {
	dir := isolate(t)
	cfg := filepath.Join(dir, "cfg.yaml")
	os.WriteFile(cfg, []byte("interceptor:\n  enabled: true\n  rules:\n    - {pattern: '(x', tool: read, message: m}\n"), 0o600)
	args := []string{"run", "--config", cfg, "--timeout", "7200", "echo hi"}
	const rule, clamp = "interceptor rule 1 (", "timeout 7200 s is out of range"
	for _, tc := range []struct {
		name     string
		format   string
		terminal bool
		stdout   []string // each must appear exactly once
		stderr   []string
	}{
		{"json", "json", false, []string{rule, clamp}, []string{"agentbash: warning: " + rule}},
		{"text off a terminal", "text", false, nil, []string{"agentbash: warning: " + rule, "agentbash: warning: " + clamp}},
		{"text on a terminal", "auto", true, []string{"warning: " + rule, "warning: " + clamp}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", "1")
			var out, errb bytes.Buffer
			ios := IO{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTerminal: tc.terminal}
			if code := Run(context.Background(), BuildInfo{}, ios, append([]string{args[0], "--format", tc.format}, args[1:]...)); code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
			}
			check := func(stream, got string, want []string) {
				for _, w := range want {
					if n := strings.Count(got, w); n != 1 {
						t.Errorf("%s holds %q %d times:\n%s", stream, w, n, got)
					}
				}
				if lines := strings.Count(got, "warning: "); want != nil && stream == "stderr" && lines != len(want) {
					t.Errorf("stderr has %d warning lines, want %d:\n%s", lines, len(want), got)
				}
			}
			check("stdout", out.String(), tc.stdout)
			check("stderr", errb.String(), tc.stderr)
			if tc.stderr == nil && errb.Len() > 0 {
				t.Errorf("stderr not empty: %q", errb.String())
			}
			if tc.format == "text" && !tc.terminal && out.String() != "hi\n" {
				t.Errorf("stdout %q, want the content text", out.String())
			}
		})
	}
}

// TestNoEscapeCodesOffATerminal: --preview and colours never put escape codes into a pipe.
func TestNoEscapeCodesOffATerminal(t *testing.T) {
	isolate(t)
	t.Setenv("NO_COLOR", "")
	for _, format := range []string{"text", "json", "auto"} {
		out, stderr, _ := runCLI(t, "run", "--format", format, "--preview", "2", "seq 1 10; exit 3")
		if strings.Contains(out+stderr, "\x1b") {
			t.Errorf("--format %s: escape codes off a terminal: %q %q", format, out, stderr)
		}
	}
}
