package session

import "strings"

// excluded are the variables a session never keeps: bash's own dynamic and read-only ones, and those
// agentbash sets per run (PWD follows the cwd; ARTIFACTS, BASH_ENV, SHLVL, _ are each run's), plus the
// dump's own (__agentbash_*). POSIXLY_CORRECT follows the posix option, which the options restore.
// Shell `case` patterns.
var excluded = []string{
	"BASH", "BASHOPTS", "BASHPID", "BASH_ALIASES", "BASH_ARGC", "BASH_ARGV", "BASH_ARGV0", "BASH_CMDS",
	"BASH_COMMAND", "BASH_ENV", "BASH_EXECUTION_STRING", "BASH_FUNC_*", "BASH_LINENO", "BASH_LOADABLES_PATH",
	"BASH_REMATCH", "BASH_SOURCE", "BASH_SUBSHELL", "BASH_VERSINFO", "BASH_VERSION", "BASH_XTRACEFD",
	"COMP_*", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD",
	"HOSTNAME", "HOSTTYPE", "LINENO", "MACHTYPE", "OSTYPE", "PIPESTATUS", "PPID", "PWD", "RANDOM",
	"SECONDS", "SHELLOPTS", "SHLVL", "SRANDOM", "UID", "_", "__agentbash_*", "POSIXLY_CORRECT", "ARTIFACTS",
}

// defaults are the variables bash sets in every shell, as NAME=VALUE `case` patterns: kept only once a
// command changed them.
const defaults = `'OPTIND=1'|'OPTERR=1'|'PS4=+ '|$'IFS= \t\n'`

// nameLetters are the first characters of variable names: "${!a@}" lists the set variables whose names
// start with a, without a subshell (compgen's output could only be read through one).
const nameLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"

// dumpScript is the EXIT trap's action: it writes to path, as NUL-separated records that [parseDump]
// reads, what the shell holds at its end. It uses only builtins (PATH may be anything), writes nothing
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
//  3. The records: O SHELLOPTS, B BASHOPTS, M umask, S `shopt -p` (the names), P `set +o` (the names),
//     C `pwd`, D $PWD, V NAME `declare -p NAME` for each variable that differs from the shell's initial
//     environment (/proc/$$/environ) or is not exported there, K NAME for an explicit variable still as the
//     request set it (its session value is kept), U NAME for each inherited variable now unset, F
//     `declare -f`, G `declare -F`, A NAME VALUE per alias, and E last: a dump without E is not kept.
//
// explicit names the variables of the request's explicit environment.
func dumpScript(path string, explicit []string) string {
	excl := strings.Join(excluded, "|")
	var keep string
	if len(explicit) > 0 {
		q := make([]string, len(explicit))
		for i, n := range explicit {
			q[i] = quote(n)
		}
		keep = "case $__agentbash_n in " + strings.Join(q, "|") + ") \\builtin printf 'K\\0%s\\0' \"$__agentbash_n\" ;; esac\n"
	}
	var names strings.Builder
	for _, c := range nameLetters {
		names.WriteString(` "${!` + string(c) + `@}"`)
	}
	return `{ __agentbash_o=$SHELLOPTS __agentbash_b=$BASHOPTS POSIXLY_CORRECT=y; } 2>/dev/null
{ \trap - DEBUG RETURN ERR; \unset -f builtin; \unset POSIXLY_CORRECT; \builtin set +o posix +o errexit +o nounset +o xtrace +o verbose +o errtrace +o functrace +o noglob; \builtin shopt -u expand_aliases nocasematch; } 2>/dev/null
{
if [[ :$SHELLOPTS: != *:posix:* ]]; then
\builtin declare -A __agentbash_env
while IFS= \builtin read -r -d '' __agentbash_kv; do
  [[ $__agentbash_kv == [A-Za-z_]*=* ]] && __agentbash_env[${__agentbash_kv%%=*}]=${__agentbash_kv#*=}
done < /proc/$$/environ
{
\builtin printf 'O\0%s\0B\0%s\0M\0' "$__agentbash_o" "$__agentbash_b"; \builtin umask
\builtin printf '\0S\0'; \builtin shopt -p
\builtin printf '\0P\0'; \builtin set +o
\builtin printf '\0C\0'; \builtin pwd
\builtin printf '\0D\0%s\0' "$PWD"
for __agentbash_n in` + names.String() + `; do
  case $__agentbash_n in ` + excl + `) continue ;; esac
  case $__agentbash_n=${!__agentbash_n} in ` + defaults + `) continue ;; esac
  if [[ -v __agentbash_env[$__agentbash_n] && ${!__agentbash_n@a} == x && ${!__agentbash_n} == "${__agentbash_env[$__agentbash_n]}" ]]; then
    ` + keep + `    continue
  fi
  \builtin printf 'V\0%s\0' "$__agentbash_n"; \builtin declare -p -- "$__agentbash_n"; \builtin printf '\0'
done
for __agentbash_n in "${!__agentbash_env[@]}"; do
  case $__agentbash_n in ` + excl + `) continue ;; esac
  [[ -v $__agentbash_n ]] || \builtin printf 'U\0%s\0' "$__agentbash_n"
done
\builtin printf 'F\0'; \builtin declare -f; \builtin printf '\0G\0'; \builtin declare -F; \builtin printf '\0'
for __agentbash_n in "${!BASH_ALIASES[@]}"; do
  \builtin printf 'A\0%s\0%s\0' "$__agentbash_n" "${BASH_ALIASES[$__agentbash_n]}"
done
\builtin printf 'E\0'
} >| ` + quote(path) + `
fi
} 2>/dev/null`
}
