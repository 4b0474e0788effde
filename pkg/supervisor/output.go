package supervisor

import (
	"fmt"
	"io"
	"time"

	"github.com/agentbash/agentbash/pkg/artifact"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// output is the sink of one run with its artifact store: the artifact is allocated lazily by the sink,
// a partial one the summary does not name is removed, and a capped or binary one gets its metadata.
type output struct {
	o       run.Output
	store   artifact.Store
	sink    *sink.Sink
	created string // the artifact allocated, even if writing it failed later
	openErr error  // why the artifact could not be opened, nil when it was (or was not tried)
	start   time.Time
}

// newOutput builds the sink for o; live, when set, receives the sanitized text as it arrives, with the
// sink's counts at its end (sink.Options.Live).
func newOutput(o run.Output, live func(text []byte, totalBytes, totalLines int64)) *output {
	out := &output{o: o, store: artifact.Store{Dir: string(o.ArtifactDir)}, start: time.Now()}
	_ = out.store.Mkdir() // $ARTIFACTS should exist; a failure is reported if an artifact is needed
	out.sink = sink.New(sink.Options{
		MaxBytes:         o.MaxBytes,
		Head:             o.Head,
		Tail:             o.Tail,
		ArtifactMaxBytes: o.ArtifactMaxBytes,
		Live:             live,
		Keep:             o.Keep,
		OpenArtifact: func() (io.WriteCloser, string, error) {
			f, id, err := out.store.Create(artifact.Meta{Command: o.Command, Cwd: o.Cwd, Created: time.Now()})
			if err != nil {
				out.openErr = fmt.Errorf("artifact not saved: %w", err)
				return nil, "", out.openErr
			}
			out.created = id
			return f, id, nil
		},
	})
	return out
}

// close ends the stream and returns the sink's summary, with the artifact's loose ends tied.
func (out *output) close() sink.Summary {
	sum := out.sink.Close()
	if out.created != "" && sum.ArtifactID == "" {
		_ = out.store.Remove(out.created) // a partial artifact the result does not name would only mislead
	}
	if sum.ArtifactID == "" {
		return sum
	}
	if sum.ArtifactCapped || sum.Binary {
		// Best effort: `artifact list` and `artifact ID` read these.
		meta := artifact.Meta{ID: sum.ArtifactID, Command: out.o.Command, Cwd: out.o.Cwd, Created: out.start,
			Capped: sum.ArtifactCapped, Omitted: sum.ArtifactOmitted, Binary: sum.Binary}
		if err := out.store.UpdateMeta(meta); err != nil {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("artifact %s metadata not updated: %v", sum.ArtifactID, err))
		}
	}
	if sum.ArtifactCapped {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("artifact %s was capped at %s (artifacts.maxBytes); %s left out",
			sum.ArtifactID, sink.FormatSize(out.o.ArtifactMaxBytes), sink.FormatSize(sum.ArtifactOmitted)))
	}
	return sum
}
