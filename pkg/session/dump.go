package session

import (
	"fmt"
	"strings"
)

// isExcluded reports whether a session never keeps the variable name.
func isExcluded(name string) bool {
	if excludedNames[name] {
		return true
	}
	for _, p := range excludedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// excludedNames and excludedPrefixes are [excluded] split into exact names and "PREFIX*" patterns.
var excludedNames, excludedPrefixes = func() (map[string]bool, []string) {
	names := map[string]bool{}
	var prefixes []string
	for _, e := range excluded {
		if p, ok := strings.CutSuffix(e, "*"); ok {
			prefixes = append(prefixes, p)
		} else {
			names[e] = true
		}
	}
	return names, prefixes
}()

// excluded are the variables a session never keeps: bash's own dynamic and read-only ones, and those
// agentbash sets per run (PWD follows the cwd; ARTIFACTS, BASH_ENV, SHLVL, _ are each run's), plus the
// dump's own (__agentbash_*). POSIXLY_CORRECT follows the posix option, which the options restore.
// Names, or prefixes ending in *.
var excluded = []string{
	"BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_CMDS",
	"BASH_COMMAND", "BASH_ENV", "BASH_EXECUTION_STRING", "BASH_FUNC_*", "BASH_LINENO", "BASH_LOADABLES_PATH",
	"BASH_REMATCH", "BASH_SOURCE", "BASH_SUBSHELL", "BASH_VERSINFO", "BASH_VERSION", "BASH_XTRACEFD",
	"COMP_*", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD",
	"HOSTNAME", "HOSTTYPE", "LINENO", "MACHTYPE", "OSTYPE", "PIPESTATUS", "PPID", "PWD", "RANDOM",
	"SECONDS", "SHELLOPTS", "SHLVL", "SRANDOM", "UID", "_", "__agentbash_*", "POSIXLY_CORRECT", "ARTIFACTS",
}

// startupNames are the variables bash gives itself when it starts: IFS, OPTIND, OPTERR and PS4 always,
// PATH, SHELL and TERM when the environment has none (bash's variables.c). [startupLine] records their
// values before anything else runs, so one a command left as bash set it is not kept: a session begun
// without TERM must not hold TERM=dumb over the TERM of a later command's environment.
var startupNames = []string{"IFS", "OPTERR", "OPTIND", "PATH", "PS4", "SHELL", "TERM"}

// startupLine is the prelude's first line: it keeps in __agentbash_i, as NAME=VALUE entries, the values
// of the [startupNames] that are set when the shell has just started, read-only (a command that unset or
// changed it would have every one of them kept).
func startupLine() string {
	var b strings.Builder
	b.WriteString("__agentbash_i=(")
	for i, n := range startupNames {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, `${%s+"%s=$%s"}`, n, n, n)
	}
	b.WriteString(")\n{ \\builtin readonly __agentbash_i; } 2>/dev/null\n")
	return b.String()
}

// dumpScript is the EXIT trap's action: it appends to path (made with [unwrittenDump] in it), as NUL-separated records that [parseDump]
// reads, what the shell holds at its end. It uses only builtins (PATH may be anything), one call per
// record (a loop over the variables costs milliseconds in bash; Go does the sorting out), writes nothing
// to the command's output (every step's stderr, xtrace's included, goes to /dev/null), and keeps the
// shell's exit status (it calls no exit). It runs in steps on separate lines, because bash parses a
// trap's action a line at a time, each after the previous one ran:
//  1. SHELLOPTS and BASHOPTS as the command left them, then POSIX mode for a moment by assigning
//     POSIXLY_CORRECT: one command of assignments only, which nothing can intercept.
//  2. In POSIX mode special builtins such as `trap` and `unset` are found before functions: the DEBUG,
//     RETURN and ERR traps are cleared (a DEBUG trap the command set runs before these first two
//     commands only), a function named `builtin` is removed (the session does not keep one), POSIX mode
//     ends, and through the real `builtin` errexit, nounset, xtrace and verbose are turned off, and so
//     are alias expansion (for the next step's parse) and nocasematch.
//  3. The records: O SHELLOPTS, B BASHOPTS, N COUNT and the shell's initial environment
//     (/proc/$$/environ, COUNT entries), I COUNT and the values bash gave itself ([startupLine]),
//     M umask, S `shopt -p`, P `set +o`, C `pwd`, D $PWD, V `declare -p` (every variable),
//     F `declare -f`, G `declare -F`, L `alias -p`, and E last, each only when the step before it
//     succeeded (a builtin the command disabled with `enable -n` is enabled again first): a dump without
//     E is not kept, so a failed step never passes for an empty state. When a step fails the file is
//     emptied (a bare `>|` redirection, which needs no builtin), which tells a trap that could not
//     write from one that never ran.
func dumpScript(path string) string {
	return `{ __agentbash_o=$SHELLOPTS __agentbash_b=$BASHOPTS POSIXLY_CORRECT=y; } 2>/dev/null
{ \trap - DEBUG RETURN ERR; \unset -f builtin; \unset POSIXLY_CORRECT; \builtin enable declare printf mapfile umask shopt set pwd alias trap unset; \builtin set +o posix +o errexit +o nounset +o xtrace +o verbose +o errtrace +o functrace +o noglob; \builtin shopt -u expand_aliases nocasematch; } 2>/dev/null
{
if [[ :$SHELLOPTS: != *:posix:* ]]; then
\builtin mapfile -d '' -t __agentbash_e < /proc/$$/environ
{
\builtin printf 'O\0%s\0B\0%s\0N\0%s\0' "$__agentbash_o" "$__agentbash_b" "${#__agentbash_e[@]}" &&
if (( ${#__agentbash_e[@]} )); then \builtin printf '%s\0' "${__agentbash_e[@]}"; fi &&
\builtin printf 'I\0%s\0' "${#__agentbash_i[@]}" &&
if (( ${#__agentbash_i[@]} )); then \builtin printf '%s\0' "${__agentbash_i[@]}"; fi &&
\builtin printf 'M\0' && \builtin umask &&
\builtin printf '\0S\0' && { \builtin shopt -p; \builtin : ; } &&
\builtin printf '\0P\0' && \builtin set +o &&
\builtin printf '\0C\0' && { \builtin pwd; \builtin : ; } &&
\builtin printf '\0D\0%s\0V\0' "$PWD" && \builtin declare -p &&
\builtin printf '\0F\0' && \builtin declare -f &&
\builtin printf '\0G\0' && \builtin declare -F &&
\builtin printf '\0L\0' && { \builtin alias -p; \builtin : ; } &&
\builtin printf '\0E\0'
} >> ` + quote(path) + ` || >| ` + quote(path) + `
fi
} 2>/dev/null`
}
