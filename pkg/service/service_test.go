package service

import (
	"context"
	"testing"

	"github.com/agentbash/agentbash/pkg/executor"
	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
)

// recorder is an executor that keeps the commands it is given and runs nothing.
type recorder struct{ got []request.Command }

func (r *recorder) Run(_ context.Context, c request.Command, _ executor.Observer) result.Result {
	r.got = append(r.got, c)
	return result.Result{}
}
func (r *recorder) Tasks() executor.Tasks         { return nil }
func (r *recorder) Sessions() executor.Sessions   { return nil }
func (r *recorder) Artifacts() executor.Artifacts { return nil }
func (r *recorder) Close() error                  { return nil }

// A command settled by another agentbash is not settled again: its head limit, prefix and verdict stay as
// sent, and where it starts is the sender's when it named one, else this place's own (a target's /dir).
func TestSettledCommandPassesThrough(t *testing.T) {
	rec := &recorder{}
	s := New(Config{Timeout: 30, Prefix: "set -e;", DefaultRules: true, Tools: []string{"read"}}, rec)
	sent := request.Resolved{Protocol: request.Protocol, Command: "cat f | head -n 1", Run: "cat f | head -n 1",
		Head: -1, Tail: -1, Timeout: 7}
	for _, tc := range []struct{ sender, place, want run.Raw }{
		{"", "/srv", "/srv"}, {"/w", "/srv", "/w"}, {"", "", ""},
	} {
		r := sent
		r.StartCwd = tc.sender
		s.Run(context.Background(), request.Command{Command: "ignored", StartCwd: string(tc.place), Resolved: &r}, nil)
		got := rec.got[len(rec.got)-1].Resolved
		if got.StartCwd != tc.want || got.Run != sent.Run || got.Head != -1 || got.Blocked != nil || got.Timeout != 7 {
			t.Errorf("sender %q place %q: got %+v", tc.sender, tc.place, got)
		}
	}
	// The same command from a caller is settled here: normalized, intercepted, prefixed.
	s.Run(context.Background(), request.Command{Command: "cat f | head -n 1", StartCwd: "/srv", Intercept: new(true)}, nil)
	got := rec.got[len(rec.got)-1].Resolved
	if got.Head != 1 || got.Blocked == nil || got.Run != "set -e; cat f" || got.StartCwd != "/srv" || got.Timeout != 30 {
		t.Errorf("settled here: %+v", got)
	}
}

// A server started with interception intercepts a settled command too, whatever its sender settled or its
// request's intercept says: the server's rules are a floor.
func TestSettledCommandMeetsTheServersRules(t *testing.T) {
	rec := &recorder{}
	s := New(Config{Timeout: 30, Intercept: true, DefaultRules: true, Tools: []string{"read"}}, rec)
	r := request.Resolved{Protocol: request.Protocol, Command: "cat f", Run: "cat f", Head: -1, Tail: -1, Timeout: 7}
	s.Run(context.Background(), request.Command{Command: "cat f", Intercept: new(false), Resolved: &r}, nil)
	if got := rec.got[0].Resolved; got.Blocked == nil {
		t.Errorf("not blocked: %+v", got)
	}
	if r.Blocked != nil {
		t.Error("the caller's Resolved was changed")
	}
}
