package rpc

import (
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
	"github.com/agentbash/agentbash/pkg/result"
)

// benchLine is a typical request line of an agent's harness (bench/rpc.py sends these).
var benchLine = []byte(`{"id":1234,"type":"bash","command":"true"}`)

// BenchmarkDecode is Decode of benchLine; BenchmarkDecodeJSON is the same through encoding/json alone.
func BenchmarkDecode(b *testing.B) { benchDecode(b, Decode) }

func BenchmarkDecodeJSON(b *testing.B) { benchDecode(b, decodeJSON) }

func benchDecode(b *testing.B, decode func([]byte, request.Command) (Message, error)) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decode(benchLine, request.Command{}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchResponse is the response to benchLine.
func benchResponse() Response {
	code := 0
	return Response{ID: []byte("1234"), Type: TypeResponse, Command: TypeBash, Success: true, Data: result.Result{
		Content: []result.Content{{Type: "text", Text: "(no output)"}},
		Details: result.Details{Status: "exited", Command: "true", Cwd: "/tmp", Shell: "/usr/bin/bash", ExitCode: &code,
			TimeoutSeconds: 300, DurationMs: 3},
	}}
}

// BenchmarkEncodeLine is the line send writes for benchResponse; BenchmarkMarshalLine is the same line
// through marshal, as send wrote it before encodeLine.
func BenchmarkEncodeLine(b *testing.B) {
	r := benchResponse()
	b.ReportAllocs()
	for b.Loop() {
		lb, err := encodeLine(r)
		if err != nil {
			b.Fatal(err)
		}
		lb.free()
	}
}

func BenchmarkMarshalLine(b *testing.B) {
	r := benchResponse()
	b.ReportAllocs()
	for b.Loop() {
		line, err := marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		_ = append(line, '\n')
	}
}
