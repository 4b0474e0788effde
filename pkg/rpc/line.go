package rpc

import (
	"bytes"
	"encoding/json"
	"sync"
)

// lineBuffer is where send encodes a line, with an encoder that writes into it. Buffers are kept between
// lines (lineBuffers), so a line costs no buffer or encoder of its own, and is written as the encoder left
// it, newline included: each request's response is on its way back to the caller (docs/architecture.md,
// "`agentbash rpc`"). Writing a Response's own fields by hand around its data saved a further 0.2 µs of
// 2.9 and was dropped: a field added to Response would have to be added there too.
type lineBuffer struct {
	bytes.Buffer
	enc *json.Encoder
}

var lineBuffers = sync.Pool{New: func() any {
	lb := &lineBuffer{}
	lb.enc = json.NewEncoder(&lb.Buffer)
	lb.enc.SetEscapeHTML(false)
	return lb
}}

// maxKeptLine is the largest buffer kept for the next line: a large output's response does not hold its
// memory after it was sent.
const maxKeptLine = 64 << 10

// encodeLine is v as marshal encodes it followed by a newline, in a buffer to give back with free once
// written; the error is marshal's.
func encodeLine(v any) (*lineBuffer, error) {
	lb := lineBuffers.Get().(*lineBuffer)
	lb.Reset()
	if err := lb.enc.Encode(v); err != nil {
		lb.free()
		return nil, err
	}
	return lb, nil
}

// free gives lb back for another line.
func (lb *lineBuffer) free() {
	if lb.Cap() <= maxKeptLine {
		lineBuffers.Put(lb)
	}
}
