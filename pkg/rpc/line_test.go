package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/tasks"
)

// TestEncodeLine: encodeLine writes every line byte for byte as marshal does, newline added, from a new
// buffer and from one used before, and fails where marshal fails with marshal's error.
func TestEncodeLine(t *testing.T) {
	code, to, head := 2, 7200.0, 3
	full := result.Result{
		Content: []result.Content{{Type: "text", Text: "a <b> & \"c\"\n\t\x01 é \u2028 \xff end"}},
		IsError: true,
		Details: result.Details{Status: "exited", Command: "echo '<&>'", NormalizedCommand: "echo x", Cwd: "/tmp/é",
			Shell: "/bin/bash", ExitCode: &code, Signal: "TERM", TimedOut: true, TimeoutSeconds: 3600,
			TimeoutRequested: &to, DurationMs: 12, Head: &head, ArtifactID: "7", ArtifactPath: "/a/7",
			ProducerStatus: &result.ProducerStatus{ExitCode: &code}, LeftoverPids: []int{1, 2},
			Warnings: []string{"w1", ""}, Session: "s", Target: "ssh://h", Error: "bad\x00"},
	}
	lines := []any{
		benchResponse(),
		Response{ID: null, Type: TypeResponse, Error: "request line too long"},
		Response{ID: nil, Type: TypeResponse},
		Response{ID: json.RawMessage(`{"b":1,"a":"<&>\u00e9"}`), Type: TypeResponse, Command: TypeBash, Success: true, Data: full},
		Response{ID: json.RawMessage(" [ 1 , 2 ] "), Type: TypeResponse, Command: TypeAbort, Success: true},
		Response{ID: json.RawMessage(`"a\"b<>"`), Type: "x\"<y>\u2029\xfe", Command: "é\n", Error: "bad: \"x\"\n<&>\x1f\xff"},
		Response{ID: []byte("1"), Type: TypeResponse, Command: TypeWait, Error: "unknown task", Data: full,
			Parts: &Parts{Output: "out <&>", Footer: []string{"[exit 2]"}}},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: result.Result{}, Parts: &Parts{}},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: []tasks.Row{}},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: []tasks.Row(nil)},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: (*result.Result)(nil)},
		Response{ID: []byte("1"), Type: TypeResponse, Command: TypeHello, Success: true, Data: HelloData{Protocol: 1, Version: "v<1>"}},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: map[string]any{"z": 1, "a": []string{"<"}}},
		Response{ID: []byte("1.50"), Type: TypeResponse, Success: true, Data: json.RawMessage(` {"a" : 1} `)},
		Update{ID: []byte("3"), Type: TypeUpdate, Text: "tail <&>\n", TotalBytes: 9, TotalLines: 1},
		TaskDone{Type: TypeTaskDone, TaskID: "7", Data: full},

		// What marshal cannot encode: an invalid id, data of a type JSON has no form for.
		Response{ID: json.RawMessage(""), Type: TypeResponse},
		Response{ID: json.RawMessage("{"), Type: TypeResponse},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: func() {}},
		Response{ID: []byte("1"), Type: TypeResponse, Success: true, Data: json.RawMessage(`{`)},
		Response{ID: []byte("1"), Type: TypeResponse, Parts: &Parts{}, Data: make(chan int)},
	}
	for _, v := range lines {
		want, wantErr := marshal(v)
		if wantErr == nil {
			want = append(want, '\n')
		}
		// Twice: the second from a buffer used before.
		for range 2 {
			lb, err := encodeLine(v)
			var got []byte
			if err == nil {
				got = bytes.Clone(lb.Bytes())
				lb.free()
			}
			if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("encodeLine(%+v) = %q, %v\nmarshal:               %q, %v", v, got, err, want, wantErr)
			}
		}
	}
}

// TestEncodeLineLarge: the buffer of a line larger than maxKeptLine is not kept for the next line.
func TestEncodeLineLarge(t *testing.T) {
	lb, err := encodeLine(Update{ID: null, Type: TypeUpdate, Text: strings.Repeat("x", 2*maxKeptLine)})
	if err != nil {
		t.Fatal(err)
	}
	lb.free()
	if next := lineBuffers.Get().(*lineBuffer); next == lb || next.Cap() > maxKeptLine {
		t.Errorf("a buffer of %d bytes was kept", next.Cap())
	}
}
