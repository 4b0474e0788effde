package intercept

import (
	"strings"
	"sync"
)

// bq is a backquote, which raw strings cannot hold.
const bq = "`"

// Fragments of the built-in patterns, JavaScript regular-expression syntax. A pattern sees the text of one
// simple command (see simpleCommands): a later pipeline stage starts with `| `, words are separated by single
// spaces, and redirections that write no file are already gone.
var fragments = sync.OnceValue(func() *strings.Replacer {
	return strings.NewReplacer(
		// {W}: one shell word, quote-aware: "…", '…', \x, $(…) with one level of nested parentheses, ${…}, `…`.
		"{W}", `(?:[^\s"'\\$`+bq+`]|\\[\s\S]|"(?:[^"\\]|\\[\s\S])*"|'[^']*'|\$(?![({])|\$\{[^}]*\}`+
			`|\$\((?:[^()]|\([^()]*\))*\)|`+bq+`[^`+bq+`]*`+bq+`)+`,
		// {T}: the target word of a redirection.
		"{T}", `(?![-<>&|]){W}`,
		// {R}: a redirection that reads no file: output to a file, a heredoc, a here-string.
		"{R}", `(?:\d+|&)?(?:>>|>\||>&|>|<<<|<<-|<<)\s*{T}`,
		// {S}: a source the command reads: a file operand, or an input redirection from a file. Devices and /proc
		// files are not files a read tool serves (`head -c 16 /dev/urandom`).
		"{S}", `(?!/dev/|/proc/)(?:(?![-+<>&|]|\d+[<>]){W}|\d*<(?![<(&])>?\s*(?!/dev/|/proc/){T})`,
		// {OP}: an operand that is no option and no redirection.
		"{OP}", `(?![-+<>&|]|\d+[<>]){W}`,
		// {E}: the end of a word.
		"{E}", `(?=\s|$)`,
		// {D}: an operand after `--`, which may start with a dash.
		"{D}", `--(?:\s+{R})*\s+(?![<>&|]|\d+[<>]){W}`,
		// {X}: an optional command that runs the next words as a command: xargs with its options (`xargs -n 1
		// sed -i`), `find … -exec`/`-execdir`/`-ok`, `fd … -x`/`--exec`; the command's name may be a path.
		// Wrappers such as sudo or env are already gone from the text (see simpleCommands).
		"{X}", `(?:(?:xargs(?:\s+-\S*(?:\s+(?!-){W})?)*?|find(?:\s+{W})*?\s+-(?:exec|execdir|ok|okdir)`+
			`|(?:fd|fdfind)(?:\s+{W})*?\s+(?:-[xX]|--exec(?:-batch)?))\s+(?:\S*/)?)?`,
		// {XW}: a word of a command run by {X}, which ends at find's `\;`, `';'` or `+`.
		"{XW}", `(?!(?:\\;|';'|";"|\+){E}){W}`,
		// {DEV}: a device or descriptor path, which is no file (`/dev/null`, `/proc/self/fd/2`).
		"{DEV}", `["']?(?:/dev/|/proc/self/fd/)`,
		// {RO}, {RL}, {RP}: like {GO}, {GL}, {GP} for rg/ag/ack, whose -d/-E/-G/-g/-j/-M/-r/-t/-T also take an
		// argument.
		"{RO}", `(?:-[^\s\-ABCDdEefGgjmMrtT]*(?:[ABCDdEGgjmMrtT](?:\S+|\s+{W}))?{E}`+
			`|--(?!(?:regexp|file)(?:[=\s]|$))(?!{RL}\s)[^\s=]*(?:={W}|=)?{E}|--{RL}\s+{W})`,
		"{RL}", `(?:glob|iglob|type|type-not|type-add|type-clear|max-count|max-columns|max-depth|max-filesize|context`+
			`|after-context|before-context|replace|encoding|threads|sort|sortr|colors?|context-separator|path-separator`+
			`|pre|pre-glob|engine|ignore-file|depth|file-search-regex|ignore-dir|ignore)`,
		"{RP}", `(?:-[^\s\-ABCDdEefGgjmMrtT]*[ef](?:\S+|\s+{W})|--(?:regexp|file)(?:={W}|\s+{W}))`,
		// {P}: the optional pipe operator of a later pipeline stage, for commands that never read stdin.
		"{P}", `(?:\|&?\s*)?`,
		// {GO}: a grep option that does not give the pattern; -A/-B/-C/-D/-d/-m and the long options of {GL}
		// take an argument.
		"{GO}", `(?:-[^\s\-ABCDdefm]*(?:[ABCDdm](?:\S+|\s+{W}))?{E}`+
			`|--(?!(?:regexp|file)(?:[=\s]|$))(?!{GL}\s)[^\s=]*(?:={W}|=)?{E}|--{GL}\s+{W})`,
		"{GL}", `(?:include|exclude|exclude-dir|exclude-from|max-count|context|after-context|before-context|label`+
			`|binary-files|devices|directories)`,
		// {GP}: a grep option giving the pattern: -e PAT, -ePAT, -ie PAT, -f FILE, --regexp=PAT, --file FILE.
		"{GP}", `(?:-[^\s\-ABCDdefm]*[ef](?:\S+|\s+{W})|--(?:regexp|file)(?:={W}|\s+{W}))`,
	)
})

func pattern(p string) string {
	// Fragments nest ({S} uses {W} and {T}); expand until nothing changes.
	for {
		q := fragments().Replace(p)
		if q == p {
			return p
		}
		p = q
	}
}

// Built-in messages, in the style of pi's interceptor.
const (
	msgRead  = "Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files."
	msgGrep  = "Use the `grep` tool instead of grep/rg. It respects .gitignore and provides structured output."
	msgFind  = "Use the `find` tool instead of find/fd. It respects .gitignore and is faster for glob patterns."
	msgSed   = "Use the `edit` tool instead of sed -i. It provides diff preview and fuzzy matching."
	msgPerl  = "Use the `edit` tool instead of perl -i. It provides diff preview and fuzzy matching."
	msgAwk   = "Use the `edit` tool instead of awk -i inplace. It provides diff preview and fuzzy matching."
	msgWrite = "Use the `write` tool instead of echo/cat redirection. It handles encoding and provides confirmation."
)

// defaultRules is built once, on first use (a run without --intercept never pays for it); DefaultRules
// hands out copies.
var defaultRules = sync.OnceValue(func() []Rule { return builtinRules() })

func builtinRules() []Rule {
	return []Rule{
		// head/tail naming a file (`head -n 5 f`, `tail -f log`, `tail -n +5 f`, `head -5 < f`); -n/-c/-s and
		// their long forms take a separate argument. Not: `head -n 5` (stdin), `| tail -3` (a filter).
		{Pattern: pattern(`^(?:head|tail)(?:\s+(?:(?:-[ncs]|--(?:lines|bytes|pid|sleep-interval|max-unchanged-stats))\s+{W}` +
			`|-(?!(?:[ncs]|-(?:lines|bytes|pid|sleep-interval|max-unchanged-stats)){E})\S*|\+\S*|{R}))*\s+(?:{S}|{D})`),
			Tool: "read", Message: msgRead},
		// cat/less/more naming a file (`cat f`, `cat -n f`, `cat < f`). Not: `cat`, `cat -`, `cat <<EOF > f`.
		{Pattern: pattern(`^(?:cat|less|more)(?:\s+(?:-\S*|\+\S*|{R}))*\s+(?:{S}|{D})`),
			Tool: "read", Message: msgRead},
		// grep searching recursively (`grep -rn x .`, `grep -R x`, `grep --recursive x`).
		{Pattern: pattern(`^[ef]?grep(?:\s+{W})*?\s+(?:-[^\s\-ABCDdefm]*[rR]\S*|--(?:recursive|dereference-recursive|directories=recurse)` +
			`|-d\s*recurse){E}`),
			Tool: "grep", Message: msgGrep},
		// grep with a pattern and a file operand (`grep -n x f`, `grep -e x f`, `grep x < f`); -A/-B/-C/-D/-d/-m
		// take an argument, -e/-f give the pattern. Not: `grep x` (stdin), `| grep x f`.
		// After `--` the operands may start with a dash (`grep -- -x f`, `grep -e x -- -f`).
		{Pattern: pattern(`^[ef]?grep(?:\s+(?:{GO}|{R}))*\s+(?:{GP}|{OP})(?:\s+(?:{GO}|{GP}|{R}))*\s+{S}` +
			`|^[ef]?grep(?:\s+(?:{GO}|{R}))*?\s+--(?:\s+{R})*\s+(?![<>&|]|\d+[<>]){W}(?:\s+{R})*\s+(?!/dev/|/proc/)(?![<>&|]|\d+[<>]){W}` +
			`|^[ef]?grep(?:\s+(?:{GO}|{GP}|{R}))*?\s+{GP}(?:\s+(?:{GO}|{GP}|{R}))*?\s+(?!--\s+(?:/dev/|/proc/)){D}`),
			Tool: "grep", Message: msgGrep},
		// rg/ag/ack as the first stage: they search the working directory when given no path. Not: `rg --version`,
		// `rg --files` (a finder), `| rg x` (a filter), `rg x <<< "$s"` (a heredoc or here-string feeds stdin).
		{Pattern: pattern(`^(?:rg|ag|ack)\s+(?!(?:-V|-h|--version|--help|--type-list){E})(?!(?:{W}\s+)*?--files{E})` +
			`(?!(?:{W}\s+)*?\d*<<)`),
			Tool: "grep", Message: msgGrep},
		// rg/ag/ack fed by a heredoc or here-string but naming a path, which they search instead of stdin
		// (`rg x src <<< "$s"`).
		{Pattern: pattern(`^(?:rg|ag|ack)(?:\s+(?:{RO}|{R}))*\s+(?:{RP}|{OP})(?:\s+(?:{RO}|{RP}|{R}))*\s+{S}`),
			Tool: "grep", Message: msgGrep},
		// find with a name/type filter and no action (`find . -name '*.go'`, `find . -type f`). Not: `-exec`,
		// `-delete` and other actions, which the find tool cannot do.
		{Pattern: pattern(`^{P}find(?!(?:\s+{W})*?\s+-(?:exec|execdir|ok|okdir|delete|fprint0?|fprintf|fls){E})` +
			`(?:\s+{W})*?\s+-(?:i?name|i?path|i?wholename|i?regex|i?lname|x?type){E}`),
			Tool: "find", Message: msgFind},
		// fd with a pattern or filter and no --exec (`fd -e go`, `fd main`); locate with a pattern; `rg --files`.
		{Pattern: pattern(`^{P}(?:fd|fdfind)(?!(?:\s+{W})*?\s+(?:-[xX]|--exec(?:-batch)?)(?=[\s=]|$))\s+(?!(?:-V|-h|--version|--help){E})` +
			`|^{P}(?:locate|plocate)(?:\s+{W})*?\s+{OP}|^rg(?:\s+{W})*?\s+--files{E}`),
			Tool: "find", Message: msgFind},
		// sed -i / --in-place, also clustered (`sed -Ei`, `sed -i.bak`), anywhere in a pipeline.
		{Pattern: pattern(`^{P}{X}g?sed(?:\s+{XW})*?\s+(?:-[^\s\-ef]*i\S*|--in-place(?:=\S*)?){E}`),
			Tool: "edit", Message: msgSed},
		// perl -i among the options before the script (`perl -pi -e …`, `perl -i.bak -pe …`, `perl -pie …`).
		// Not: `perl -e 'print 1'`, `perl script.pl -i`.
		{Pattern: pattern(`^{P}{X}perl(?:\s+(?:-[acnpsStTuUwWXl0-9]*[eE]\s+{W}|-(?![acnpsStTuUwWXl0-9]*[eE]{E})\S*))*?` +
			`\s+-[acnpsStTuUwWXl0-7]*i\S*{E}`),
			Tool: "edit", Message: msgPerl},
		// awk/gawk -i inplace (`--include=inplace`, `-iinplace`).
		{Pattern: pattern(`^{P}{X}g?awk(?:\s+{XW})*?\s+(?:-i|--include)(?:\s+|=)?(['"]?)inplace(?:\.awk)?\1{E}`),
			Tool: "edit", Message: msgAwk},
		// echo/printf with an output redirection to a file (`echo x > f`, `printf '%s' x >> f`); cat or tee fed
		// by a heredoc or here-string into a file (`cat <<EOF > f`, `cat > f <<EOF`, `tee f <<EOF`); cat
		// writing its stdin to a file (`cat > f`, `echo x | cat > f`). Descriptor duplications and /dev/null
		// never reach the text; tee operands under /dev or /proc/self/fd (`tee /dev/stderr <<EOF`) are no files.
		{Pattern: pattern(`^{P}(?:echo|printf|cat)(?:\s+{W})*?\s+(?:\d+|&)?>` +
			`|^tee(?=(?:\s+{W})*?\s+<<)(?:\s+(?:-\S*|{R}|(?={DEV}){W}))*\s+(?!{DEV}){OP}`),
			Tool: "write", Message: msgWrite},
	}
}

// DefaultRules returns the built-in rules of reference §3.3, in the order they are tried: readers (`read`),
// search (`grep`), finders (`find`), in-place editors (`edit`), writes by redirection (`write`). Each
// reader/search rule fires only when the command names a file or path operand (or, for `grep -r`, `rg`,
// `ag`, `ack`, searches a directory) and never on a later pipeline stage, which reads its stdin.
func DefaultRules() []Rule {
	rules := defaultRules()
	out := make([]Rule, len(rules))
	copy(out, rules)
	for n := range out {
		out[n].Source = SourceBuiltin
	}
	return out
}
