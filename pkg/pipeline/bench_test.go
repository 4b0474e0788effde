package pipeline

import (
	"context"
	"testing"
)

// BenchmarkRunTrue measures the per-call cost of the pipeline without process start-up: `true` through
// every stage.
func BenchmarkRunTrue(b *testing.B) {
	r := New(Config{Timeout: 30, KillGrace: 1, ArtifactDir: b.TempDir()})
	for b.Loop() {
		if res := r.Run(context.Background(), Request{Command: "true"}, nil); res.IsError {
			b.Fatal(res.Content[0].Text)
		}
	}
}
