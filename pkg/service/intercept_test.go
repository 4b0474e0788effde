package service

import (
	"testing"

	"github.com/agentbash/agentbash/pkg/intercept"
	"github.com/agentbash/agentbash/pkg/request"
)

type Request = request.Command

// TestRequestToolsCompileNothing: a request that names its own tools selects among the rules the Runner
// compiled, and blocks as those tools say. A compile of every built-in rule allocates thousands of times;
// selecting among compiled rules allocates a set of tool names.
func TestRequestToolsCompileNothing(t *testing.T) {
	warned := 0
	c := Config{Timeout: 30}
	c.Intercept, c.DefaultRules, c.Tools = true, true, []string{"grep"}
	c.Rules = []intercept.Rule{{Pattern: "(", Tool: "read", Message: "broken"}}
	c.Warn = func(string) { warned++ }
	r := New(c, nil)
	for _, tc := range []struct {
		req     Request
		blocked bool
	}{
		{Request{Command: "cat f", Tools: []string{"read"}}, true},
		{Request{Command: "cat f", Tools: []string{"grep"}}, false},
		{Request{Command: "cat f", Tools: []string{}}, false},
		{Request{Command: "cat f"}, false},
		{Request{Command: "grep x f"}, true},
		{Request{Command: "grep x f", Intercept: new(false)}, false},
	} {
		ic, warnings := r.interceptor(tc.req)
		if got := ic != nil && ic.Check(tc.req.Command) != nil; got != tc.blocked {
			t.Errorf("%q tools %q: blocked %v, want %v", tc.req.Command, tc.req.Tools, got, tc.blocked)
		}
		if ic != nil && len(warnings) != 1 {
			t.Errorf("%q: warnings %q, want the broken rule's", tc.req.Command, warnings)
		}
	}
	if warned != 1 {
		t.Errorf("the broken rule was said %d times, want once", warned)
	}
	req := Request{Command: "true", Tools: []string{"read", "grep", "find", "edit", "write"}}
	if n := testing.AllocsPerRun(20, func() { r.interceptor(req) }); n > 20 {
		t.Errorf("a request naming tools allocates %v times: it compiles the rules again", n)
	}
}

// BenchmarkIntercept measures the interceptor's per-request cost, without and with the request naming its
// tools: the two should differ by a set of tool names, not by a compile of every rule.
func BenchmarkIntercept(b *testing.B) {
	c := Config{Timeout: 30}
	c.Intercept, c.DefaultRules, c.Tools = true, true, []string{"read"}
	r := New(c, nil)
	for _, bc := range []struct {
		name  string
		tools []string
	}{{"runner-tools", nil}, {"request-tools", []string{"read", "grep", "find", "edit", "write"}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			req := Request{Command: "git status && go test ./...", Tools: bc.tools}
			for b.Loop() {
				if ic, _ := r.interceptor(req); ic.Check(req.Command) != nil {
					b.Fatal("blocked")
				}
			}
		})
	}
}
