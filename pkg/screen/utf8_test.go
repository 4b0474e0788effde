package screen

import (
	"strings"
	"testing"
)

// TestUTF8Fix: bytes that are not UTF-8 become U+FFFD, whatever follows them; a sequence cut between writes
// is whole again; valid text passes as it is.
func TestUTF8Fix(t *testing.T) {
	for _, tc := range []struct {
		writes []string
		want   string
	}{
		{[]string{"plain ascii\r\n"}, "plain ascii\r\n"},
		{[]string{"caf\xc3\xa9"}, "café"},
		{[]string{"caf\xe9\r\nnext"}, "caf\uFFFD\r\nnext"},
		{[]string{"\xe9A"}, "\uFFFDA"},
		{[]string{"\xc3\r\n2nd"}, "\uFFFD\r\n2nd"},
		{[]string{"\x80\xbf"}, "\uFFFD\uFFFD"},
		{[]string{"a\xe2\x82", "\xacb"}, "a€b"},          // € cut after two of its three bytes
		{[]string{"a\xf0", "\x9f\x98", "\x80!"}, "a😀!"},  // cut twice
		{[]string{"a\xe2\x82", "Z"}, "a\uFFFD\uFFFDZ"},   // a cut start that never completes
		{[]string{"\xed\xa0\x80"}, "\uFFFD\uFFFD\uFFFD"}, // a surrogate is no UTF-8
	} {
		var f utf8Fix
		var got strings.Builder
		for _, w := range tc.writes {
			got.Write(f.fix([]byte(w)))
		}
		if got.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.writes, got.String(), tc.want)
		}
	}
}
