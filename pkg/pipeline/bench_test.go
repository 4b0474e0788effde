package pipeline

import (
	"context"
	"testing"
)

// BenchmarkRunTrue measures the per-call cost of the pipeline without process start-up: `true` through
// every stage.
func BenchmarkRunTrue(b *testing.B) {
	o := Options{Command: "true", Timeout: 30, KillGrace: 1, Head: -1, Tail: -1, ArtifactDir: b.TempDir()}
	for b.Loop() {
		if r := Run(context.Background(), o); r.Exit != 0 {
			b.Fatal(r.Content[0].Text)
		}
	}
}
