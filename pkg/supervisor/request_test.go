package supervisor

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
)

// requestFields is a Request without appendJSON's shortcut: what a json.Encoder makes of it.
type requestFields Request

// TestRequestAppendJSON: a request as appendJSON writes it is a json.Encoder's encoding, byte for byte,
// for each operation, every field set, a cancel's grace, and a spec with strings to escape (HTML characters,
// U+2028, bytes that are not UTF-8) as with plain ones.
func TestRequestAppendJSON(t *testing.T) {
	grace := 250 * time.Millisecond
	plain := run.Spec{Command: "true", Shell: "/usr/bin/bash", Dir: "/tmp", Env: run.RawList{"A=1"},
		Timeout: time.Second, Output: run.Output{Head: -1, Tail: -1, Command: "true", Cwd: "/tmp"}}
	odd := plain
	odd.Command, odd.Dir, odd.Env = "a <b> & c\u2028\xff", "/t&mp", run.RawList{"X=<\u2029>"}
	odd.Output.Command, odd.Output.Cwd = "echo '<&>' \xfe", "/t&mp"
	every := Request{Op: OpStart, Spec: &plain, Stdin: true, Live: true, Reuse: true, Quiet: true, KillGrace: &grace}
	// A field added to Request must be set in every, and so be written by appendJSON, or this fails.
	for i, v := 0, reflect.ValueOf(every); i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Fatalf("every: Request.%s is not set", v.Type().Field(i).Name)
		}
	}
	for name, req := range map[string]Request{
		"every field": every,
		"start":       {Op: OpStart, Spec: &plain, Reuse: true, Quiet: true},
		"every flag":  {Op: OpStart, Spec: &plain, Stdin: true, Live: true, Reuse: true, Quiet: true},
		"odd strings": {Op: OpStart, Spec: &odd},
		"cancel":      {Op: OpCancel, KillGrace: &grace},
		"detach":      {Op: OpDetach},
		"odd op":      {Op: "x\"<y>\xff"},
		"nothing":     {},
	} {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode((*requestFields)(&req)); err != nil {
				t.Fatal(err)
			}
			got, err := req.appendJSON([]byte{0})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append([]byte{0}, want.Bytes()...)) {
				t.Errorf("got\n%q\nwant\n%q", got[1:], want.Bytes())
			}
		})
	}
}

// TestWarmClientCodecs: what a client warms on a goroutine of its own decodes and encodes without an error
// (nor a panic, which would end the client).
func TestWarmClientCodecs(t *testing.T) {
	if err := warmClientCodecs(); err != nil {
		t.Fatal(err)
	}
}
