//go:build !amd64

package sanitize

// plainASCII returns the length of the longest prefix of p that is plain ASCII: printable, tab or newline
// (plainASCIIWords; amd64 has it in assembly).
func plainASCII(p []byte) int { return plainASCIIWords(p) }
