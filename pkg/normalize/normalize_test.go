package normalize

import (
	"os/exec"
	"strings"
	"testing"
)

// normalizeTests is shared with the fuzz test as its seed corpus.
var normalizeTests = []struct {
	name    string
	in      string
	command string // "" means: the input, trimmed
	head    int
	tail    int
}{
	// Accepted argument forms.
	{"head -n N", "ls | head -n 50", "ls", 50, -1},
	{"head -nN", "ls | head -n50", "ls", 50, -1},
	{"head -N", "ls | head -50", "ls", 50, -1},
	{"head --lines=N", "ls | head --lines=7", "ls", 7, -1},
	{"head --lines N", "ls | head --lines 7", "ls", 7, -1},
	{"tail -n N", "ls | tail -n 100", "ls", -1, 100},
	{"tail -nN", "ls|tail -n5", "ls", -1, 5},
	{"tail -N", "ls | tail -3", "ls", -1, 3},
	{"tail --lines=N", "ls | tail --lines=3", "ls", -1, 3},
	{"tail --lines N", "ls | tail --lines 3", "ls", -1, 3},
	{"head zero", "yes | head -n 0", "yes", 0, -1},
	{"head -0", "yes | head -0", "yes", 0, -1},
	{"leading zeros", "ls | tail -n 007", "ls", -1, 7},
	{"max limit", "ls | tail -n 1000000000", "ls", -1, 1_000_000_000},
	{"outer whitespace", "  \n\tls | tail -3 \n\n", "ls", -1, 3},
	{"trailing semicolon", "ls | tail -3;", "ls;", -1, 3},

	// Rejected argument forms.
	{"over max", "ls | tail -n 1000000001", "", -1, -1},
	{"huge", "ls | tail -n 99999999999999999999", "", -1, -1},
	{"tail -n +5", "ls | tail -n +5", "", -1, -1},
	{"tail +5", "ls | tail +5", "", -1, -1},
	{"head -n -5", "ls | head -n -5", "", -1, -1},
	{"head -n=5", "ls | head -n=5", "", -1, -1},
	{"head --lines=", "ls | head --lines=", "", -1, -1},
	{"head --lines", "ls | head --lines", "", -1, -1},
	{"head -n", "ls | head -n", "", -1, -1},
	{"head -", "ls | head -", "", -1, -1},
	{"head --5", "ls | head --5", "", -1, -1},
	{"head -c", "ls | head -c 10", "", -1, -1},
	{"head -c10", "ls | head -c10", "", -1, -1},
	{"head --bytes", "ls | head --bytes=10", "", -1, -1},
	{"tail -f", "ls | tail -f", "", -1, -1},
	{"tail -f -5", "ls | tail -f -5", "", -1, -1},
	{"tail -F", "ls | tail -F -n 5", "", -1, -1},
	{"head -q", "ls | head -q -n 5", "", -1, -1},
	{"head -v", "ls | head -v -5", "", -1, -1},
	{"tail -z", "ls | tail -z -5", "", -1, -1},
	{"bare head", "ls | head", "", -1, -1},
	{"bare tail", "ls | tail", "", -1, -1},
	{"file operand", "ls | tail -n 5 log.txt", "", -1, -1},
	{"file operand only", "ls | head file", "", -1, -1},
	{"repeated option", "ls | head -n 5 -n 6", "", -1, -1},
	{"repeated short", "ls | head -5 -5", "", -1, -1},
	{"variable count", `ls | head -n "$N"`, "", -1, -1},
	{"variable word", "ls | head $x", "", -1, -1},
	{"quoted count", "ls | head -n '5'", "", -1, -1},
	{"escaped count", `ls | head -n \5`, "", -1, -1},
	{"quoted name", "ls | 'head' -5", "", -1, -1},
	{"escaped name", `ls | \head -5`, "", -1, -1},
	{"other command", "ls | sort -5", "", -1, -1},
	{"redirect on stage", "ls | head -n 5 > out.txt", "", -1, -1},
	{"stderr redirect on stage", "ls | tail -5 2>/dev/null", "", -1, -1},
	{"assignment on stage", "ls | LC_ALL=C tail -5", "", -1, -1},
	{"not a pipeline", "tail -5", "", -1, -1},
	{"head of a file", "head -n 5 file.txt", "", -1, -1},

	// Pipelines.
	{"pipe all", "make |& tail -30", "make", -1, 30},
	{"stderr merged", "go test ./... 2>&1 | tail -n 50", "go test ./... 2>&1", -1, 50},
	{"longer pipeline", "ls -la | grep foo | tail -5", "ls -la | grep foo", -1, 5},
	{"head then tail", "cmd | head -100 | tail -5", "cmd", 100, 5},
	{"head then tail, pipe all", "cmd |& head -100 |& tail -5", "cmd", 100, 5},
	{"head then tail after filter", "a | grep x | head -n 10 | tail -n 2", "a | grep x", 10, 2},
	{"tail then head", "cmd | tail -5 | head -2", "cmd | tail -5", 2, -1},
	{"head then head", "cmd | head -5 | head -2", "cmd | head -5", 2, -1},
	{"tail then tail", "cmd | tail -5 | tail -2", "cmd | tail -5", -1, 2},
	{"bad head before tail", "cmd | head -c 5 | tail -2", "cmd | head -c 5", -1, 2},
	{"pipe on next line", "seq 10 |\n  tail -3", "seq 10", -1, 3},
	{"line continuation", "seq 10 \\\n| tail -3", "seq 10", -1, 3},
	{"internal whitespace", "printf 'a  b' |  tail   -1", "printf 'a  b'", -1, 1},
	{"tabs", "ls\t-la\t|\ttail\t-2", "ls\t-la", -1, 2},
	{"multi-line producer", "for i in 1 2 3; do\n  echo $i\ndone | tail -1", "for i in 1 2 3; do\n  echo $i\ndone", -1, 1},
	{"group producer", "{ echo a; echo b; } | head -1", "{ echo a; echo b; }", 1, -1},

	// && chains.
	{"and chain", "cd dir && make 2>&1 | tail -30", "cd dir && make 2>&1", -1, 30},
	// A head limit closes the pipe: pulled out of a chain only when what runs before prints nothing
	// (hostile test: `seq 1 200000 && touch MARK && echo done | head -n 1` never made MARK).
	{"head after a printing chain", "cd a && make && ./run | head -n 3", "", -1, -1},
	{"head after a silent chain", "cd a && export X=1 && mkdir -p out && Y=2 && ./run | head -n 3", "cd a && export X=1 && mkdir -p out && Y=2 && ./run", 3, -1},
	{"head after cd -", "cd - && ls | head -1", "", -1, -1},
	{"head after set -x", "set -x && ls | head -1", "", -1, -1},
	{"head after bare export", "export && ls | head -1", "", -1, -1},
	{"head after export -p", "export -p && ls | head -1", "", -1, -1},
	{"head after declare", "declare -x A=1 && local_b=2 && ls | head -1", "declare -x A=1 && local_b=2 && ls", 1, -1},
	{"head then tail after a printing chain", "make && ./run | head -100 | tail -5", "make && ./run | head -100", -1, 5},
	{"tail after a printing chain", "make && ./run | tail -5", "make && ./run", -1, 5},
	// What bash reads differently from the parser is left alone.
	{"carriage return", "seq 1 10 | tail -2\r # x", "", -1, -1},
	{"CRLF", "seq 1 10 | tail -2\r\n", "", -1, -1},
	{"extglob", "ls !(f) | head -1", "", -1, -1},
	{"NBSP kept", "\u00a0seq 1 3 | tail -1", "\u00a0seq 1 3", -1, 1},
	{"trailing continuation", "seq 1 10 | tail -n 3\\\n", "", -1, -1},
	{"outer blanks", " \t\nseq 1 10 | tail -n 3 \n\t ", "seq 1 10", -1, 3},
	{"and chain over lines", "cd a &&\n  make | tail -2", "cd a &&\n  make", -1, 2},
	{"and chain with subshell or", "(a || b) && c | tail -1", "(a || b) && c", -1, 1},
	{"negated element", "! a && b | tail -1", "! a && b", -1, 1},
	{"or in chain", "false || echo fb | tail -1", "", -1, -1},
	{"or before and", "a || b && c | tail -1", "", -1, -1},
	{"or after and", "a && b || c | tail -1", "", -1, -1},
	{"or of pipes", "a | tail -1 || b", "", -1, -1},
	{"and not last", "a | tail -1 && b", "", -1, -1},
	{"or operator", "cmd || tail -5", "", -1, -1},
	{"negated last", "a && ! b | tail -1", "", -1, -1},

	// Lists and modifiers.
	{"semicolon list", "echo hi; ls | head -3", "", -1, -1},
	{"newline list", "echo hi\nls | head -3", "", -1, -1},
	{"background", "ls | tail -3 &", "", -1, -1},
	{"negated", "! ls | tail -3", "", -1, -1},
	{"time", "time ls | tail -3", "", -1, -1},
	{"coproc", "coproc ls | tail -3", "", -1, -1},
	{"time in middle", "a | time b | tail -3", "", -1, -1},
	{"coproc in middle", "a | coproc b | tail -3", "", -1, -1},
	{"subshell", "(a | tail -5)", "", -1, -1},
	{"group", "{ a | tail -5; }", "", -1, -1},
	{"group with redirect", "{ a | tail -5; } > f", "", -1, -1},
	{"command substitution", "echo $(ls | head -1)", "", -1, -1},
	{"substitution as producer", "echo $(ls | head -1) | tail -2", "echo $(ls | head -1)", -1, 2},
	{"if body", "if true; then ls | tail -1; fi", "", -1, -1},
	{"function", "f() { ls | tail -1; }", "", -1, -1},

	// Quoting, comments, heredocs.
	{"quoted pipe", `echo "x | tail -5"`, "", -1, -1},
	{"single-quoted pipe", `echo 'x | tail -5'`, "", -1, -1},
	{"escaped pipe", `echo x \| tail -5`, "", -1, -1},
	{"comment", "seq 10 | tail -3 # last", "seq 10 # last", -1, 3},
	{"comment with pipe", "seq 10 # | tail -3", "", -1, -1},
	{"comment before", "# show the end\nseq 10 | tail -3", "# show the end\nseq 10", -1, 3},
	{"heredoc", "cat <<EOF | head -n 2\none\ntwo\nthree\nEOF", "cat <<EOF\none\ntwo\nthree\nEOF", 2, -1},
	{"heredoc spacing", "cat <<'EOF' | tail -1\n  a   b\n\tc\nEOF", "cat <<'EOF'\n  a   b\n\tc\nEOF", -1, 1},
	{"heredoc then pipe line", "cat <<EOF |\nbody\nEOF\nhead -n 2", "", -1, -1},
	{"heredoc in and chain", "cd x && cat <<EOF | tail -1\na\nb\nEOF", "cd x && cat <<EOF\na\nb\nEOF", -1, 1},
	{"heredoc containing pipe", "cat <<EOF\nx | tail -5\nEOF", "", -1, -1},

	// Unparsable input.
	{"unterminated quote", "  echo 'unterminated | tail -5  ", "", -1, -1},
	{"dangling pipe", "ls |", "", -1, -1},
	{"unterminated heredoc", "cat <<EOF | head -1\nabc", "", -1, -1},
	{"empty", "   ", "", -1, -1},

	// No pipe: nothing to extract, whatever the words (not parsed).
	{"no pipe", "true", "", -1, -1},
	{"no pipe, head alone", "  head -n 5 file\n", "", -1, -1},
	{"no pipe, and-chain", "make && tail -3 log", "", -1, -1},
	{"no pipe, or", "false || tail -n 2 f", "", -1, -1},

	// Found by FuzzNormalize.
	{"vertical tab before pipe", "0\v|head -0", "", -1, -1},
}

func TestNormalize(t *testing.T) {
	for _, tt := range normalizeTests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.command
			if want == "" {
				want = Trim(tt.in)
			}
			got := Normalize(tt.in)
			if got.Command != want || got.Head != tt.head || got.Tail != tt.tail {
				t.Errorf("Normalize(%q)\n got  {%q, head %d, tail %d}\n want {%q, head %d, tail %d}",
					tt.in, got.Command, got.Head, got.Tail, want, tt.head, tt.tail)
			}
		})
	}
}

// Subshell keeps what is left of the pipeline in a subshell, as bash runs a pipeline's stages, and
// everything before it (an `&&` chain's commands) in the shell itself.
func TestSubshell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`ls`, `ls`},
		{`cd / | tail -n 5`, "( cd /\n)"},
		{`cd src && make 2>&1 | tail -30`, "cd src && ( make 2>&1\n)"},
		{"cat <<EOF | tail -5\nx\nEOF", "( cat <<EOF\nx\nEOF\n)"},
		{`seq 10 | head -100 | tail -5`, "( seq 10\n)"},
		{`{ cd /; x=1; } | tail -1`, "( { cd /; x=1; }\n)"},
		{`make # build | tail -5`, `make # build | tail -5`},
		{`x=1 | tail -3 # note`, "( x=1 # note\n)"},
	} {
		if got := Normalize(tc.in).Subshell; got != tc.want {
			t.Errorf("Normalize(%q).Subshell = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tt := range normalizeTests {
		n := Normalize(tt.in)
		if n.Head < 0 && n.Tail < 0 && n.Subshell != n.Command {
			t.Errorf("%q: nothing extracted, Subshell %q differs from Command %q", tt.in, n.Subshell, n.Command)
		}
		if (n.Head >= 0 || n.Tail >= 0) && !strings.Contains(n.Subshell, "( ") {
			t.Errorf("%q: extracted, Subshell %q", tt.in, n.Subshell)
		}
	}
}

// In a shell whose state outlives the command, the subshell form leaves the state as the command as
// written does (bash runs each stage of a pipeline in a subshell): the cwd and variables after it.
func TestSubshellKeepsStateAsBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	after := func(command string) string {
		out, err := exec.Command("bash", "-c", command+"\necho \"cwd=$PWD x=$x y=$y\"").Output()
		if err != nil {
			t.Fatalf("%q: %v", command, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1]
	}
	for _, c := range []string{`cd / | tail -n 5`, `x=1 | tail -1`, `{ cd /; y=2; } | tail -1`,
		`y=3 && cd / | head -n 2`, `cd /tmp && x=4 | tail -2`, `seq 3 | head -100 | tail -1`} {
		n := Normalize(c)
		if n.Head < 0 && n.Tail < 0 {
			t.Fatalf("%q: nothing extracted", c)
		}
		if want, got := after(c), after(n.Subshell); got != want {
			t.Errorf("%q: after the subshell form %q, as written %q", c, got, want)
		}
	}
}
