package sanitize

import "io"

// NewWriterBounds is NewWriter with smaller bounds, for the fuzzer.
func NewWriterBounds(w io.Writer, escMax, owMax int) io.WriteCloser {
	return newWriter(w, escMax, owMax)
}

// Held is the length and capacity of the line run w holds back (w from NewWriter).
func Held(w io.WriteCloser) (n, c int) {
	run := w.(*writer).run
	return len(run), cap(run)
}

// PlainRun is the sanitizer's fast path.
var PlainRun = plainRun

// PlainASCII is the scan of a stretch of ASCII (assembly on amd64), PlainASCIIWords the same in Go.
var PlainASCII, PlainASCIIWords = plainASCII, plainASCIIWords

// EventMask is the mask of a block's events (assembly on amd64), EventWords the same in Go.
var EventMask, EventWords = eventMask, eventWords
