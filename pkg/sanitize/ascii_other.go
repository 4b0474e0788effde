//go:build !amd64

package sanitize

// plainASCII returns the length of the longest prefix of p that is plain ASCII: printable, tab or newline
// (plainASCIIWords; amd64 has it in assembly).
func plainASCII(p []byte) int { return plainASCIIWords(p) }

// eventMask returns the mask of the events among the first 64 bytes of q (eventWords; amd64 has it in
// assembly).
func eventMask(q []byte) uint64 { return eventWords(q) }
