package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/texts"
)

func config(t testing.TB) testConfig {
	t.Helper()
	return testConfig{Timeout: 30, KillGrace: 1, ArtifactDir: filepath.Join(t.TempDir(), "art"), NonZeroExit: result.NonZeroError}
}

// runOne runs command with c through a new Runner.
func runOne(c testConfig, command string) result.Result {
	return newRunner(c).Run(context.Background(), Request{Command: command}, nil)
}

// TestShownOutputMatchesBash is the property of reference §3.2: for every pipeline of the corpus, the output
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
			want = texts.NoOutput
		}
		c := config(t)
		c.Env = []string{"LC_ALL=C.UTF-8"}
		r := runOne(c, command)
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

// TestArtifactPath: whenever a result names an artifact, details.artifactPath is its file's absolute
// path, even for a relative artifact directory (reference §3.6); without an artifact there is no path.
func TestArtifactPath(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		command string
		dir     string
	}{
		{"seq 1 100000", filepath.Join(t.TempDir(), "abs")},
		{"seq 1 100000", "rel"},
		{"seq 1 20 | head -n 3", "rel"},
		{"printf 'a\\0b'", "rel"},
		{"seq 1 100000; exit 3", "rel"},
	} {
		c := config(t)
		c.ArtifactDir = tc.dir
		d := runOne(c, tc.command).Details
		if d.ArtifactID == "" {
			t.Errorf("%q: no artifact", tc.command)
			continue
		}
		want, _ := filepath.Abs(filepath.Join(tc.dir, d.ArtifactID+".log"))
		if d.ArtifactPath != want {
			t.Errorf("%q: artifactPath %q, want %q", tc.command, d.ArtifactPath, want)
		}
		if fi, err := os.Stat(d.ArtifactPath); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%q: %v", tc.command, err)
		}
	}
	if d := runOne(config(t), "echo short").Details; d.ArtifactID != "" || d.ArtifactPath != "" {
		t.Errorf("short output: artifact %q at %q", d.ArtifactID, d.ArtifactPath)
	}
}
