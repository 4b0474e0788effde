package sanitize

// plainASCII returns the length of the longest prefix of p that is plain ASCII: printable, tab or newline.
// On amd64 it is assembly (ascii_amd64.s): SSE2, which every amd64 processor has, looks at 64 bytes in
// about 40 instructions where the SWAR words of plainASCIIWords take four times as many; a gigabyte of
// plain text cost the supervisor 0.2 s in plainRun before.
//
//go:noescape
func plainASCII(p []byte) int

// eventMask returns the mask of the events among the first 64 bytes of q (len(q) >= 64) for ground's
// blocks: bit j is set when q[j] is not printable ASCII and not a tab (a newline is one). In assembly as
// plainASCII; the eight SWAR words of eventWords took a third of the time of coloured text.
//
//go:noescape
func eventMask(q []byte) uint64
