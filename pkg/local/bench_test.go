package local

import (
	"context"
	"testing"
)

// BenchmarkRunTrue measures the per-call cost of the pipeline without process start-up: `true` through
// every stage.
func BenchmarkRunTrue(b *testing.B) {
	r := newRunner(testConfig{Timeout: 30, KillGrace: 1, ArtifactDir: b.TempDir()})
	for b.Loop() {
		if res := r.Run(context.Background(), Request{Command: "true"}, nil); res.IsError {
			b.Fatal(res.Content[0].Text)
		}
	}
}

// BenchmarkRunTrueSession is BenchmarkRunTrue in a session (reference §7.1): the lock, the prelude, the
// state restored and dumped, the commit. The difference is what a session costs per command.
func BenchmarkRunTrueSession(b *testing.B) {
	r := newRunner(testConfig{Timeout: 30, KillGrace: 1, ArtifactDir: b.TempDir(), SessionDir: b.TempDir()})
	r.Run(context.Background(), Request{Command: "cd / && export A=1 B=2 && f() { :; } && alias x=y", Session: "bench"}, nil)
	for b.Loop() {
		if res := r.Run(context.Background(), Request{Command: "true", Session: "bench"}, nil); res.IsError || res.Details.FinalCwd != "/" {
			b.Fatal(res.Content[0].Text, res.Details.Warnings)
		}
	}
}
