// Package sanitizetest holds what the tests of the packages that sanitize share (pkg/sanitize, pkg/sink):
// a naive reference model of reference §3.8 to check the streaming code against, the table of cases, fuzz
// seeds, typical inputs for benchmarks, and a check that a text is clean.
package sanitizetest

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sanitize"
)

// Case is raw input, split into writes, and the sanitized text it gives.
type Case struct {
	Name string
	In   []string
	Want string
}

// Cases cover every rule of reference §3.8 and the bounds, each at least once split across writes.
var Cases = []Case{
	{"plain", []string{"hello\n"}, "hello\n"},
	{"empty", nil, ""},
	{"CSI colours", []string{"\x1b[31mred\x1b[0m \x1b[1;32mgreen\x1b[m\n"}, "red green\n"},
	{"CSI private and erase", []string{"\x1b[?25l\x1b[2K\x1b[1Gok\x1b[?25h"}, "ok"},
	{"CSI split across writes", []string{"a\x1b", "[3", "1", "mb"}, "ab"},
	{"OSC 8 hyperlink BEL", []string{"\x1b]8;;https://example.com/é\x07link\x1b]8;;\x07\n"}, "link\n"},
	{"OSC 8 hyperlink ST", []string{"\x1b]8;id=1;https://example.com\x1b\\link\x1b]8;;\x1b\\\n"}, "link\n"},
	{"OSC ST split", []string{"a\x1b]0;title\x1b", "\\b"}, "ab"},
	{"OSC title", []string{"\x1b]0;my title\x07text"}, "text"},
	{"DCS", []string{"\x1bPq#0;2;0;0;0#1!6~-\x1b\\after"}, "after"},
	{"SOS PM APC", []string{"\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\x"}, "x"},
	{"two-byte", []string{"\x1b7save\x1b8\x1b=\x1b>\x1bM\x1bc"}, "save"},
	{"charset", []string{"a\x1b(Bb\x1b)0c"}, "abc"},
	{"lone ST", []string{"a\x1b\\b"}, "ab"},
	{"unterminated at end", []string{"abc\x1b[31"}, "abc[31"},
	{"unterminated OSC at end", []string{"abc\x1b]0;ti"}, "abc]0;ti"},
	{"lone ESC at end", []string{"abc\x1b"}, "abc"},
	{"ESC ESC", []string{"a\x1b\x1b[1mb"}, "ab"},
	{"CSI cut by newline", []string{"\x1b[12\nx"}, "[12\nx"},
	{"CSI cut by ESC", []string{"\x1b[12\x1b[0mx"}, "[12x"},
	{"OSC cut by newline", []string{"\x1b]0;title\nnext line\n"}, "]0;title\nnext line\n"},
	{"OSC cut by ESC inside a character", []string{"\x1b]\xc3\x1b\x9fx"}, "]\uFFFD\uFFFDx"},
	{"OSC cut by other ESC", []string{"\x1b]0;t\x1b[1mx"}, "]0;tx"},
	{"ESC with bad byte", []string{"a\x1b\x01b"}, "ab"},
	{"escape bound: too long is text", []string{"\x1b]" + strings.Repeat("x", 5000) + "\x07\n"}, "]" + strings.Repeat("x", 5000) + "\n"},
	{"escape bound: longest removed", []string{"\x1b]" + strings.Repeat("x", sanitize.MaxEscapeBytes-3) + "\x07ok"}, "ok"},
	{"escape bound: one over", []string{"\x1b]" + strings.Repeat("x", sanitize.MaxEscapeBytes-2) + "\x07ok"}, "]" + strings.Repeat("x", sanitize.MaxEscapeBytes-2) + "ok"},
	{"escape bound: ST at the edge", []string{"\x1b]" + strings.Repeat("y", sanitize.MaxEscapeBytes-4) + "\x1b\\ok"}, "ok"},
	{"escape bound: ST one over", []string{"\x1b]" + strings.Repeat("y", sanitize.MaxEscapeBytes-3) + "\x1b\\ok"}, "]" + strings.Repeat("y", sanitize.MaxEscapeBytes-3) + "ok"},
	{"CRLF", []string{"a\r\nb\r\n"}, "a\nb\n"},
	{"CRLF split", []string{"a\r", "\nb\r", "\n"}, "a\nb\n"},
	{"CR overwrite", []string{"p 10%\rp 100%\x1b[K\n"}, "p 100%\n"},
	{"CR overwrite split", []string{"p 10%", "\r", "p 100%\n"}, "p 100%\n"},
	{"CR progress", []string{"\r 1%\r 50%\r100%\ndone\n"}, "100%\ndone\n"},
	{"CR at end kept", []string{"done\r"}, "done"},
	{"CR then erase then newline", []string{"p 100%\r\x1b[K\n"}, "p 100%\n"},
	{"CR CR LF", []string{"a\r\r\nb"}, "a\nb"},
	{"CR only touches its line", []string{"one\ntwo\rTWO\n"}, "one\nTWO\n"},
	{"CR then tab", []string{"abc\r\tx"}, "\tx"},
	{"tab kept", []string{"a\tb\n"}, "a\tb\n"},
	{"BEL removed", []string{"a\x07b"}, "ab"},
	{"C0 and DEL removed", []string{"a\x01\x02\x0b\x0c\x7fb"}, "ab"},
	// Backspace: back one character, the next overwrites it.
	{"BS overwrites", []string{"ab\bc\n"}, "ac\n"},
	{"BS overwrites split", []string{"ab\b", "c\n"}, "ac\n"},
	{"BS spinner", []string{"x |\b/\b-\bdone\n"}, "x done\n"},
	{"BS spinner one byte a write", bytewise("x |\b/\b-\b\\\bdone\n"), "x done\n"},
	{"BS overstrike", []string{"N\bNA\bA\n"}, "NA\n"},
	{"BS underline", []string{"_\bN_\bA\n"}, "NA\n"},
	{"BS at the line start does nothing", []string{"\bab\n\bc"}, "ab\nc"},
	{"BS then newline keeps the line", []string{"ab\b\ncd"}, "ab\ncd"},
	{"BS the characters after stay", []string{"abc\b\bX\n"}, "aXc\n"},
	{"BS three back, three over", []string{"50%\b\b\b75%\n"}, "75%\n"},
	{"BS past the line start", []string{"ab\b\b\bX\n"}, "Xb\n"},
	{"BS after a CR does nothing", []string{"abc\r\bX\n"}, "X\n"},
	{"BS then CR", []string{"abc\b\rX\n"}, "X\n"},
	{"BS only within its line", []string{"ab\ncd\b\b\bX\n"}, "ab\nXd\n"},
	{"BS over a character", []string{"aé\bx\n"}, "ax\n"},
	{"BS with a character", []string{"ab\bé\n"}, "aé\n"},
	{"BS two back over characters", []string{"éü\b\bxy"}, "xy"},
	{"BS over U+FFFD", []string{"a\xff\bx"}, "ax"},
	{"BS then a character cut across writes", []string{"ab\b\xc3", "\xa9c\n"}, "aéc\n"},
	{"BS then an escape", []string{"ab\b\x1b[1mc\x1b[0m\n"}, "ac\n"},
	{"BS then controls", []string{"ab\b\x01\x7fc"}, "ac"},
	{"BS then a tab", []string{"ab\b\tc"}, "a\tc"},
	{"BS in a block", []string{x(100) + "\bZ" + y(80) + "\n"}, x(99) + "Z" + y(80) + "\n"},
	{"BS in a block's tail", []string{x(70) + "ab\bc"}, x(70) + "ac"},
	{"BS bound: at it", []string{x(sanitize.MaxBackspaceBytes) + "\bZ\n"}, x(sanitize.MaxBackspaceBytes-1) + "Z\n"},
	{"BS bound: one over does nothing", []string{x(sanitize.MaxBackspaceBytes+1) + "\bZ\n"}, x(sanitize.MaxBackspaceBytes+1) + "Z\n"},
	{"BS bound: an overwrite that grows past it", []string{x(sanitize.MaxBackspaceBytes) + "\b😀\bZ\n"}, x(sanitize.MaxBackspaceBytes-1) + "😀Z\n"},
	{"BS bound: after a CR, the run counts", []string{x(sanitize.MaxBackspaceBytes+5) + "\rab\bc\n"}, "ac\n"},
	{"BS after a CR that kept a long run does nothing", []string{x(sanitize.MaxOverwriteBytes+1) + "\rab\bc\n"}, x(sanitize.MaxOverwriteBytes+1) + "abc\n"},
	{"C1 removed", []string{"a\xc2\x9b1m\xc2\x85b"}, "a1mb"},
	{"NBSP kept", []string{"a\xc2\xa0b"}, "a\u00a0b"},
	{"invalid byte", []string{"a\xffb"}, "a\uFFFDb"},
	{"lone continuation", []string{"a\x80\x80b"}, "a\uFFFD\uFFFDb"},
	{"truncated char then ASCII", []string{"\xe2\x82a"}, "\uFFFDa"},
	{"truncated char at end", []string{"a\xe2\x82"}, "a\uFFFD"},
	{"surrogate", []string{"\xed\xa0\x80"}, "\uFFFD\uFFFD\uFFFD"},
	{"overlong", []string{"\xc0\xaf\xe0\x80\xaf"}, "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"above U+10FFFF", []string{"\xf4\x90\x80\x80"}, "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"truncated 4-byte then ESC", []string{"\xf0\x9f\x98\x1b[1mx"}, "\uFFFDx"},
	{"é split", []string{"caf\xc3", "\xa9\n"}, "café\n"},
	{"U+FFFD itself", []string{"\uFFFD"}, "\uFFFD"},
	{"CR discard bound", []string{strings.Repeat("x", sanitize.MaxOverwriteBytes+1) + "\ry\n"}, strings.Repeat("x", sanitize.MaxOverwriteBytes+1) + "y\n"},
	{"CR discard at bound", []string{strings.Repeat("x", sanitize.MaxOverwriteBytes) + "\ry\n"}, "y\n"},
	{"CR discard after long run", []string{strings.Repeat("x", sanitize.MaxOverwriteBytes+1) + "\ra\rb\n"}, strings.Repeat("x", sanitize.MaxOverwriteBytes+1) + "b\n"},
	// The fast path reads long ASCII runs eight bytes at a time: a byte to look at in any lane of a word.
	{"controls in every lane", []string{"0123456789abcdef\x01ghij\x7fklmnopq\x1b[1mrstuvwx\x0byz0123456789\x02\n"}, "0123456789abcdefghijklmnopqrstuvwxyz0123456789\n"},
	{"tab and newline inside words", []string{"abcdefg\thijklmn\nopqrstu\tv\n"}, "abcdefg\thijklmn\nopqrstu\tv\n"},
	{"character after a long ASCII run", []string{"abcdefghijklmnop\xc3\xa9qrstuvwxyz\xc2\x9b!"}, "abcdefghijklmnopéqrstuvwxyz!"},
	// Small pieces are batched; a CR discards from the batch, or tells the sink when the run began earlier.
	// A CSI sequence that one write holds whole is skipped at once; the bounds are the same.
	{"CSI at the escape bound", []string{"a\x1b[" + strings.Repeat("1", sanitize.MaxEscapeBytes-3) + "mb"}, "ab"},
	{"CSI one over the escape bound", []string{"a\x1b[" + strings.Repeat("1", sanitize.MaxEscapeBytes-2) + "mb"}, "a[" + strings.Repeat("1", sanitize.MaxEscapeBytes-2) + "mb"},
	{"CSI with intermediates", []string{"a\x1b[ q\x1b[?1;2$pb\x1b[>c"}, "ab"},
	{"CSI cut by DEL", []string{"a\x1b[1\x7fmb"}, "a[1mb"},
	{"CSI cut by a character", []string{"a\x1b[1éb"}, "a[1éb"},
	{"CR discard inside one write", []string{"\x1b[32m 10%\x1b[0m [=   ]\r\x1b[32m100%\x1b[0m [====]\r\n"}, "100% [====]\n"},
	{"CR discard of a run from an earlier write", []string{"\x1b[1mstep\x1b[0m 1", "\x1b[1m/3\x1b[0m\rstep 2/3\rdone\n"}, "done\n"},
	{"CR discard of a long piece", []string{strings.Repeat("=", 300) + "\x1b[K\r" + strings.Repeat("#", 5000) + "\x1b[0m\rok\n"}, "ok\n"},
	{"CR discard after a full batch", []string{strings.Repeat("\x1b[1ma\x1b[0mb", 3000) + "\rc\n"}, "c\n"},
	{"CR discard of a run the batch holds part of", []string{"x\n" + strings.Repeat("\x1b[1ma\x1b[0mb", 3000) + "\rc\n"}, "x\nc\n"},
	// The ground-state loop copies text into the batch a word at a time, noting the last newline of each
	// piece; a piece of directBytes or more is passed on by itself, the batch and the run left as they were.
	{"newline in every lane of a piece", []string{lanesIn(16)}, lanesWant(16)},
	{"newline in every lane, one byte a write", bytewise(lanesIn(8)), lanesWant(8)},
	{"newline in the tail of a write", []string{"a\nb", "\x1b[1mc\nd\re", "f\r\n"}, "a\nbc\nef\n"},
	{"controls between a CR and text", []string{"ab\x01\r\x02cd\x7f\n"}, "cd\n"},
	{"newlines in one word", []string{"\x1b[1mab\ncd\nef\rZ\x1b[1mg\n\n\nhi\n\njk\rZ"}, "ab\ncd\nZg\n\n\nhi\n\nZ"},
	{"long piece with newlines after a batched line", []string{"\x1b[1mab\ncd\x1b[0m" + strings.Repeat("0123456\n", 40) + "\x1b[1mef"}, "ab\ncd" + strings.Repeat("0123456\n", 40) + "ef"},
	{"long piece with newlines, then CR", []string{"\x1b[1mab\ncd" + strings.Repeat("0123456\n", 40) + "ef\rX\n"}, "ab\ncd" + strings.Repeat("0123456\n", 40) + "X\n"},
	{"long piece after batched text, then CR", []string{"\x1b[1mab" + strings.Repeat("c", 300) + "\rX\n"}, "X\n"},
	{"long piece after a CR", []string{"\x1b[1mab\r" + strings.Repeat("c", 300) + "\rX\n"}, "X\n"},
	{"long piece ending in a character", []string{"\x1b[1mab" + strings.Repeat("c", 300) + "é\x1b[0m\rX\n"}, "X\n"},
	// The sanitizer takes long writes in blocks of 64 bytes (the x padding puts the escape where named).
	{"block: CSI ending at the block's end", []string{x(57) + "\x1b[1;32m" + y(40)}, x(57) + y(40)},
	{"block: CSI across the block's end", []string{x(60) + "\x1b[1;32m" + y(40)}, x(60) + y(40)},
	{"block: ESC last in the block", []string{x(63) + "\x1b[1m" + y(40)}, x(63) + y(40)},
	{"block: CSI ending at the write's end", []string{x(100) + "\x1b[1;32m", "z"}, x(100) + "z"},
	{"block: ESC at the end of a write", []string{x(100) + "\x1b", "[1mz"}, x(100) + "z"},
	{"block: parameters longer than a word", []string{x(20) + "\x1b[38;2;255;128;0m" + y(80)}, x(20) + y(80)},
	{"block: intermediate byte", []string{x(20) + "\x1b[1 q\x1b[?25l" + y(80)}, x(20) + y(80)},
	{"block: CSI cut by a newline", []string{x(10) + "\x1b[12\nz" + y(80)}, x(10) + "[12\nz" + y(80)},
	{"block: CSI cut by a character", []string{x(10) + "\x1b[1é" + y(80)}, x(10) + "[1é" + y(80)},
	{"block: CSI cut by DEL", []string{x(10) + "\x1b[1\x7fm" + y(80)}, x(10) + "[1m" + y(80)},
	{"block: CSI cut by ESC", []string{x(10) + "\x1b[1\x1b[2mz" + y(80)}, x(10) + "[1z" + y(80)},
	{"block: too long a CSI is text", []string{x(10) + "\x1b[" + strings.Repeat("1;", 2100) + "mok" + y(80)}, x(10) + "[" + strings.Repeat("1;", 2100) + "mok" + y(80)},
	{"block: the longest CSI removed", []string{x(10) + "\x1b[" + strings.Repeat("1", sanitize.MaxEscapeBytes-3) + "mok" + y(80)}, x(10) + "ok" + y(80)},
	{"block: a CSI one over the bound", []string{x(10) + "\x1b[" + strings.Repeat("1", sanitize.MaxEscapeBytes-2) + "mok" + y(80)}, x(10) + "[" + strings.Repeat("1", sanitize.MaxEscapeBytes-2) + "mok" + y(80)},
	{"block: CR right after an escape", []string{x(70) + "\x1b[0m\rZ\x1b[1m\r\n" + y(70)}, "Z\n" + y(70)},
	{"block: CR at the block's end, newline after", []string{x(63) + "\r\n" + y(80)}, x(63) + "\n" + y(80)},
	{"block: CR at the block's end, text after", []string{x(63) + "\r" + y(80)}, y(80)},
	{"block: CR CR, controls, then text", []string{x(30) + "\r\r\x01\x1b[1m\x7fZ" + y(80)}, "Z" + y(80)},
	{"block: newlines, tabs and controls", []string{x(30) + "\n\t\x02a\x7f\n\n" + y(70) + "\n"}, x(30) + "\n\ta\n\n" + y(70) + "\n"},
	{"block: two-byte escapes", []string{x(40) + "\x1b7\x1b(B" + y(40)}, x(40) + y(40)},
	{"block: OSC in a block", []string{x(40) + "\x1b]8;;file:///x\x1b\\link\x1b]8;;\x07" + y(40)}, x(40) + "link" + y(40)},
	{"block: characters, escapes and a CR", []string{x(10) + "  \x1b[32m✓\x1b[0m ok — é\rZ\x1b[1m😀" + y(80) + "\n"}, "Z😀" + y(80) + "\n"},
	{"block: invalid byte and C1 control in a block", []string{x(30) + "\xff\xc2\x9b" + y(60)}, x(30) + "\uFFFD" + y(60)},
	{"block: character cut at the write's end", []string{x(100) + "\xe2\x9c", "\x93z"}, x(100) + "✓z"},
	{"block: long run, then an escape and a CR", []string{x(300) + "\x1b[1m" + y(100) + "\rZ\n"}, "Z\n"},
	{"block: long run with characters, then a CR", []string{x(100) + "é" + x(200) + "\x1b[1m" + y(100) + "\rZ\n"}, "Z\n"},
}

// x and y are n bytes of padding text.
func x(n int) string { return strings.Repeat("x", n) }
func y(n int) string { return strings.Repeat("y", n) }

// lanesIn is, for every lane k of an n-byte piece of text, a piece with '\n' in lane k, then a CR
// and a letter that overwrites what followed the newline; lanesWant is its text.
func lanesIn(n int) string {
	var b strings.Builder
	for k := range n {
		b.WriteString("\x1b[1m" + strings.Repeat("x", k) + "\n" + strings.Repeat("y", n-1-k) + "\rZ")
	}
	return b.String()
}

func lanesWant(n int) string {
	var b strings.Builder
	for k := range n {
		b.WriteString(strings.Repeat("x", k) + "\nZ")
	}
	return b.String()
}

// bytewise splits s into writes of one byte.
func bytewise(s string) []string {
	w := make([]string, len(s))
	for i := range s {
		w[i] = s[i : i+1]
	}
	return w
}

// Seeds are fuzz inputs that reach the interesting states of the sanitizer and of the sink (binary
// output, line counts).
var Seeds = []string{
	"hello\nworld\n",
	"\x1b[31mred\x1b[0m\n",
	"\x1b]8;;http://x\x07l\x1b]8;;\x1b\\\n",
	"\x1bPq#0~\x1b\\x\x1b_a\x1b\\",
	"p 10%\rp 100%\x1b[K\n",
	"a\r\nb\r\rc\r",
	"caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82 \xff\xed\xa0\x80\xc2\x9b",
	"\x1b]0;unterminated\nline\n",
	"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
	"bin\x00ary\n",
	"\x1b[12\x1b[3mx\x1b",
	"long line without newline éééééééééééééééééééé",
	"éééééééééé\nsecond\nthird\n",
	"0123456789\rab\ncd\r\nef\n",
	"x |\b/\b-\bdone\nN\bNA\bA\nabc\b\bX\n\bé\b\by\r\bz\x1b[1m\b\bw\n",
	"0123456789abcdef\x01ghij\x7fklmnopq\x1b[1mrstuvwx\ryz\t0123456789\x02\n",
	"abcdefghijklmnop\xc3\xa9qrstuvwxyz\xc2\x9b!\xe2\x82",
	"\x1b[32m 10%\x1b[0m [=   ]\r\x1b[32m100%\x1b[0m [====]\r\n\x1b[1mstep\x1b[0m 1\x1b[1m/3\x1b[0m\rstep 2/3\rdone\r",
	"\x1b[1mx\nyyyyyy\rZ\x1b[1mxxxxxxx\nyyyyyyy\rZ\x1b[m\x01ab\r\x02cd\x7f\n",
	"\x1b[1mab\ncd\x1b[0m0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n0123456\n\x1b[1mef\rX\n",
	// Long enough for the sanitizer's blocks of 64 bytes.
	strings.Repeat("\x1b[1;32m 50%\x1b[0m [=====     ]\r\x1b[1;32m100%\x1b[0m [==========] \x1b[36mdone\x1b[0m ok\r\n", 3),
	strings.Repeat("  \x1b[32m✓\x1b[0m test_1 passes \x1b[2m(12 ms)\x1b[0m — données\n\t\x01\x7f\r\r\n", 3),
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789a\x1b[38;2;1;2;3m\x1b[1;2\x1b[1\x7f\x1b]0;t\x07\x1b7xyz\r\n\x1b[1m\xff\xe2\x82\x1b[0m" +
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\rZ\x1b[" + strings.Repeat("1;", 40) + "m\n",
}

// Inputs are 32 KiB chunks of typical output, by kind: plain, ansi (colours and hyperlinks), utf8,
// progress (CR redraws), colour (coloured CRLF lines with progress-bar CRs, as bench/run.sh makes), marks
// (coloured lines with a non-ASCII mark in each, as test runners print), for benchmarks.
func Inputs() map[string][]byte {
	var plain, ansi, utf, progress, colour, marks bytes.Buffer
	for i := 0; plain.Len() < 32<<10; i++ {
		fmt.Fprintf(&plain, "src/pkg/file%d.go:%d: some compiler message about line %d\n", i%97, i, i*7)
	}
	for i := 0; ansi.Len() < 32<<10; i++ {
		fmt.Fprintf(&ansi, "\x1b[1m\x1b[32m   Compiling\x1b[0m crate-%d v0.%d.0 (\x1b]8;;file:///src/%d\x1b\\/src/%d\x1b]8;;\x1b\\)\n", i, i%10, i, i)
	}
	for i := 0; utf.Len() < 32<<10; i++ {
		fmt.Fprintf(&utf, "ошибка %d: файл «données-%d.txt» — ✓ 😀\n", i, i)
	}
	for i := 0; progress.Len() < 32<<10; i++ {
		fmt.Fprintf(&progress, "\r\x1b[Kdownloading %3d%% [%-20s]", i%100, bytes.Repeat([]byte("="), i%20))
	}
	for colour.Len() < 32<<10 {
		colour.WriteString("\x1b[1;32m 50%\x1b[0m [=====     ]\r\x1b[1;32m100%\x1b[0m [==========] \x1b[36mdone\x1b[0m ok\r\n")
	}
	for i := 0; marks.Len() < 32<<10; i++ {
		fmt.Fprintf(&marks, "  \x1b[32m✓\x1b[0m test_%d passes \x1b[2m(%d ms)\x1b[0m — données\n", i, i%400)
	}
	return map[string][]byte{
		"colour":   colour.Bytes()[:32<<10],
		"marks":    marks.Bytes()[:32<<10],
		"plain":    plain.Bytes()[:32<<10],
		"ansi":     ansi.Bytes()[:32<<10],
		"utf8":     utf.Bytes()[:32<<10],
		"progress": progress.Bytes()[:32<<10],
	}
}

// Reference sanitizes the whole input (reference §3.8) with the given bounds: a second, deliberately naive
// implementation that sees the whole input at once and looks ahead instead of keeping state.
func Reference(in []byte, escMax, owMax int) []byte {
	var out []byte
	runStart := 0 // where the current run (since the line start or the last CR) starts in out
	crPending := false
	bsMax := min(sanitize.MaxBackspaceBytes, owMax)
	back := 0     // the cursor is back characters before the end of out
	kept := false // a CR kept a run longer than owMax on this line
	put := func(b []byte) {
		if crPending {
			crPending = false
			if b[0] != '\n' {
				if len(out)-runStart <= owMax {
					out = out[:runStart]
				} else {
					kept = true
				}
				runStart = len(out)
			}
		}
		if b[0] == '\n' {
			back, kept = 0, false
		}
		if back > 0 {
			// b overwrites the character the cursor is on; what follows it stays.
			pos := len(out)
			for range back {
				_, size := utf8.DecodeLastRune(out[:pos])
				pos -= size
			}
			_, size := utf8.DecodeRune(out[pos:])
			out = append(out[:pos:pos], append(bytes.Clone(b), out[pos+size:]...)...)
			if back--; len(out)-runStart > bsMax {
				back = 0
			}
			return
		}
		out = append(out, b...)
		if b[0] == '\n' {
			runStart = len(out)
		}
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == 0x1b:
			if n := refEscape(in[i:], escMax); n > 0 {
				i += n
				continue
			}
			i++ // the ESC is dropped; what follows is text
		case c == '\r':
			crPending, back = true, 0
			i++
		case c == '\b':
			// Back one character, within a run that is the whole line and at most bsMax bytes long.
			if !crPending && !kept && len(out)-runStart <= bsMax && back < utf8.RuneCount(out[runStart:]) {
				back++
			}
			i++
		case c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f):
			put(in[i : i+1])
			i++
		case c < 0x80:
			i++ // control
		default:
			n, ok := refChar(in[i:])
			if !ok {
				put([]byte("\uFFFD"))
			} else if r, _ := utf8.DecodeRune(in[i : i+n]); r >= 0xa0 {
				put(in[i : i+n])
			}
			i += n
		}
	}
	return out
}

// refEscape returns the length of the complete escape sequence at the start of b (b[0] == ESC)
// when it is at most max bytes long, else 0.
func refEscape(b []byte, max int) int {
	if len(b) < 2 {
		return 0
	}
	limit := min(len(b), max)
	c := b[1]
	switch {
	case c == '[':
		for j := 2; j < limit; j++ {
			d := b[j]
			if d >= 0x40 && d <= 0x7e {
				return j + 1
			}
			if d < 0x20 || d > 0x3f {
				return 0
			}
		}
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		for j := 2; j < limit; j++ {
			d := b[j]
			if d == 0x07 {
				return j + 1
			}
			if d == 0x1b {
				if j+1 < limit && b[j+1] == '\\' {
					return j + 2
				}
				return 0
			}
			if d < 0x20 {
				return 0
			}
		}
	case c >= 0x20 && c <= 0x2f:
		for j := 2; j < limit; j++ {
			d := b[j]
			if d >= 0x30 && d <= 0x7e {
				return j + 1
			}
			if d < 0x20 || d > 0x2f {
				return 0
			}
		}
	case c >= 0x30 && c <= 0x7e:
		if limit >= 2 {
			return 2
		}
	}
	return 0
}

// refChar looks at a non-ASCII byte: a valid character (its length, true), or the maximal invalid
// subpart that becomes one U+FFFD (its length, false).
func refChar(b []byte) (int, bool) {
	if r, size := utf8.DecodeRune(b); r != utf8.RuneError || size > 1 {
		return size, true
	}
	var l int
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		l = 2
	case c >= 0xe0 && c <= 0xef:
		l = 3
	case c >= 0xf0 && c <= 0xf4:
		l = 4
	default:
		return 1, false
	}
	m := 1
	for m < l && m < len(b) {
		// Is b[:m+1] a prefix of a valid character? Complete it with continuation bytes.
		p := append(bytes.Clone(b[:m+1]), bytes.Repeat([]byte{0x80}, l-m-1)...)
		if !utf8.Valid(p) {
			break
		}
		m++
	}
	return m, false
}

// Clean reports the first thing that makes text not sanitized: invalid UTF-8, or a control character
// other than tab and newline.
func Clean(text string) error {
	for i, r := range text {
		if r == '\uFFFD' && !strings.HasPrefix(text[i:], "\uFFFD") {
			return fmt.Errorf("invalid UTF-8 at %d in %q", i, text)
		}
		if (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			return fmt.Errorf("control character %U at %d in %q", r, i, text)
		}
	}
	return nil
}
