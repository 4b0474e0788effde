package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/result"
)

func options(t *testing.T, command string) Options {
	t.Helper()
	return Options{
		Command: command, Timeout: 30, KillGrace: 1, Head: -1, Tail: -1,
		ArtifactDir: filepath.Join(t.TempDir(), "art"), NonZeroExit: result.NonZeroError,
	}
}

// TestShownOutputMatchesBash is the property of SPEC §3.2: for every pipeline of the corpus, the output
// agentbash shows (after pulling out head/tail and applying them to the whole stream) equals what
// `bash -c` prints for the original command.
func TestShownOutputMatchesBash(t *testing.T) {
	b, err := os.ReadFile("testdata/pipelines.txt")
	if err != nil {
		t.Fatal(err)
	}
	corpus := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n----\n")
	if len(corpus) < 40 {
		t.Fatalf("corpus has %d pipelines, want at least 40", len(corpus))
	}
	extracted := 0
	for _, command := range corpus {
		cmd := exec.Command("bash", "-c", command)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		out, _ := cmd.CombinedOutput()
		want := strings.TrimSuffix(string(out), "\n")
		if want == "" {
			want = result.NoOutput
		}
		o := options(t, command)
		o.Env = []string{"LC_ALL=C.UTF-8"}
		r := Run(context.Background(), o)
		if r.Output != want {
			t.Errorf("%q:\nagentbash: %q\nbash:      %q", command, r.Output, want)
		}
		if r.Details.Head != nil || r.Details.Tail != nil {
			extracted++
		}
	}
	t.Logf("%d pipelines, %d with an extracted limit", len(corpus), extracted)
	if extracted < len(corpus)/2 {
		t.Errorf("only %d of %d pipelines had a limit extracted", extracted, len(corpus))
	}
}
