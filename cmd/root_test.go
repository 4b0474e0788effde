package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTreeForArgsActsAsTheWholeTree: the tree Execute builds for a command line (only the command its first
// argument names, when it names one) prints and exits as the whole tree does.
func TestTreeForArgsActsAsTheWholeTree(t *testing.T) {
	isolate(t)
	info := BuildInfo{Version: "v1.2.3", Commit: "abc", Date: "2026-12-03"}
	all := newRootCmd(info, IO{})
	for _, c := range commands {
		sub, _, err := all.Find([]string{c.name})
		if err != nil || sub == all || sub.Name() != c.name {
			t.Errorf("commands names %q, which the whole tree does not find as itself (%v)", c.name, err)
		}
	}
	cases := [][]string{
		{"version"}, {"version", "extra"}, {"version", "--nosuch"}, {"help", "version"}, {},
		{"verison"}, {"--config", "/nonexistent", "version"}, {"completion", "bash"}, {"__complete", "ver"},
		{"__complete", "run", "--format", ""}, {"tasks", "kill", "--help"}, {"run"}, {"kill", "-1"},
	}
	for _, c := range commands {
		cases = append(cases, []string{c.name, "--help"})
	}
	for _, args := range cases {
		run := func(root func(IO) *cobra.Command) (string, string, int) {
			var out, errb bytes.Buffer
			ios := IO{In: strings.NewReader(""), Out: &out, Err: &errb}
			code := execute(context.Background(), root(ios), ios, args)
			return out.String(), errb.String(), code
		}
		wantOut, wantErr, wantCode := run(func(ios IO) *cobra.Command { return newRootCmd(info, ios) })
		out, errOut, code := run(func(ios IO) *cobra.Command { return newRootFor(info, ios, args) })
		if out != wantOut || errOut != wantErr || code != wantCode {
			t.Errorf("%q: got exit %d, stdout\n%s\nstderr\n%s\nthe whole tree: exit %d, stdout\n%s\nstderr\n%s",
				args, code, out, errOut, wantCode, wantOut, wantErr)
		}
	}
}
