package rpc

import (
	"testing"

	"github.com/agentbash/agentbash/pkg/request"
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
