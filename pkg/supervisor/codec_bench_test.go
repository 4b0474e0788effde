package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// repeat is a stream of the same message, again and again, as a reused supervisor or its client reads one
// per run.
type repeat struct {
	msg []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.msg[r.off:])
		n += c
		r.off = (r.off + c) % len(r.msg)
	}
	return n, nil
}

// BenchmarkCodec: a reused supervisor's reading of a typical start request and writing of a typical done
// event, and its client's reading of that event, through encoding/json (as before codec.go) and by hand.
func BenchmarkCodec(b *testing.B) {
	env := run.RawList{}
	for i := range 30 {
		env = append(env, fmt.Sprintf("VARIABLE_%d=/home/user/some/value/%d", i, i))
	}
	spec := run.Spec{Command: "true", Shell: "/usr/bin/bash", Dir: "/home/user/project", Env: env,
		Timeout: 120 * time.Second, KillGrace: 2 * time.Second, Output: run.Output{MaxBytes: 51200, Head: -1,
			Tail: -1, ArtifactDir: "/home/user/.local/state/agentbash/artifacts", ArtifactMaxBytes: 1 << 30,
			Command: "true", Cwd: "/home/user/project"}}
	req, err := Request{Op: OpStart, Spec: &spec, Reuse: true, Quiet: true}.appendJSON(nil)
	if err != nil {
		b.Fatal(err)
	}
	done := Event{Op: OpDone, Outcome: &run.Outcome{Duration: 1834567}, Summary: &sink.Summary{
		Text: "hello\n", TotalLines: 1, TotalBytes: 6, OutputLines: 1, OutputBytes: 6, ShownStart: 1, ShownEnd: 1},
		Reusable: true}
	event, err := done.appendJSON(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("request decode/json", func(b *testing.B) {
		dec := json.NewDecoder(&repeat{msg: req})
		for b.Loop() {
			var r Request
			if err := dec.Decode(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("request decode/hand", func(b *testing.B) {
		in := newLines(&repeat{msg: req})
		for b.Loop() {
			line, err := in.next()
			if err == nil {
				_, err = decodeRequest(line)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event encode/json", func(b *testing.B) {
		enc := json.NewEncoder(io.Discard)
		for b.Loop() {
			if err := enc.Encode(done); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event encode/hand", func(b *testing.B) {
		e := &events{conn: io.Discard}
		for b.Loop() {
			if err := e.send(done); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event decode/json", func(b *testing.B) {
		dec := json.NewDecoder(&repeat{msg: event})
		for b.Loop() {
			var ev Event
			if err := dec.Decode(&ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event decode/hand", func(b *testing.B) {
		in := newLines(&repeat{msg: event})
		for b.Loop() {
			line, err := in.next()
			if err == nil {
				_, err = decodeEvent(line)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
