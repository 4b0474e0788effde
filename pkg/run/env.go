package run

import (
	"slices"
	"strings"
)

// NonInteractiveEnv are the defaults that keep pagers, editors, prompts, colour and progress bars away
// from a command with no terminal (reference §3.7). They override the inherited environment; config and
// --env override them.
//
// The aim is a class: no tool may wait for a person, whatever the user's config files or the inherited
// environment (an IDE terminal's helpers included) say. Where a tool reads an environment variable before
// its config file, the variable is set here to a value that cannot wait (an override beats ~/.gitconfig,
// a drop would not); the order each tool reads its settings in is noted beside it. The command also has
// no controlling terminal and stdin is /dev/null, so anything that prompts on /dev/tty or reads stdin
// fails or gets EOF at once; what is listed here is what would otherwise reach a person another way (an
// askpass program, a graphical dialog, a pinentry on another terminal, an editor that is started anyway).
var NonInteractiveEnv = []string{
	// Pagers. Most tools page only when stdout is a terminal (it never is here); these make sure.
	// git: GIT_PAGER > core.pager > PAGER. gh: GH_PAGER > `gh config pager` > PAGER.
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "SYSTEMD_PAGER=cat", "GH_PAGER=cat", "BAT_PAGER=cat",
	"PSQL_PAGER=cat", "MYSQL_PAGER=cat", "AWS_PAGER=", "LESS=FRX",

	// Editors: `true` leaves the file as it is and exits 0, so a commit without -m aborts on its empty
	// message and an edit is cancelled unchanged. Each tool's own variable comes first because its config
	// file beats the generic ones:
	// git: GIT_EDITOR > core.editor > VISUAL > EDITOR; GIT_SEQUENCE_EDITOR > sequence.editor > the
	// editor (so `rebase -i` runs the todo list as written); GIT_MERGE_AUTOEDIT=no skips the merge-message
	// editor. gh: GH_EDITOR > `gh config editor` > GIT_EDITOR > VISUAL > EDITOR. kubectl: KUBE_EDITOR >
	// EDITOR. svn: SVN_EDITOR > config editor-cmd > VISUAL > EDITOR. hg: HGEDITOR > ui.editor > VISUAL >
	// EDITOR. systemctl edit: SYSTEMD_EDITOR > EDITOR > VISUAL. sudoedit/visudo: SUDO_EDITOR > VISUAL >
	// EDITOR. psql \e: PSQL_EDITOR > EDITOR > VISUAL. bash fc: FCEDIT > EDITOR. npm edit: the environment
	// beats .npmrc. crontab -e, less `v`, mutt and most others: VISUAL > EDITOR.
	"GIT_EDITOR=true", "EDITOR=true", "VISUAL=true", "GIT_SEQUENCE_EDITOR=true", "GIT_MERGE_AUTOEDIT=no",
	"GH_EDITOR=true", "KUBE_EDITOR=true", "SVN_EDITOR=true", "HGEDITOR=true", "SYSTEMD_EDITOR=true",
	"SUDO_EDITOR=true", "PSQL_EDITOR=true", "FCEDIT=true", "npm_config_editor=true",

	// Credentials and passphrases.
	// git: GIT_ASKPASS > core.askPass > SSH_ASKPASS > a terminal prompt (off with GIT_TERMINAL_PROMPT=0).
	// An askpass that fails makes git say "could not read Username …: terminal prompts disabled" at once;
	// it replaces an IDE's helper (VS Code's and JetBrains' GIT_ASKPASS open a dialog in the IDE).
	// Git Credential Manager: GCM_INTERACTIVE beats credential.interactive; `never` makes it fail
	// instead of opening its sign-in window or prompt. Other credential helpers (store, cache, keychains)
	// are left alone: they are how a push authenticates without a person.
	// ssh (and ssh-keygen, ssh-add, scp, git over ssh): with no terminal it asks SSH_ASKPASS when DISPLAY
	// or SSH_ASKPASS_REQUIRE=force says so; SSH_ASKPASS_REQUIRE=never (OpenSSH 8.4+) turns the askpass off
	// whatever else is set, and SSH_ASKPASS=false covers older versions. Unknown host keys are then
	// refused ("Host key verification failed") rather than confirmed.
	// sudo: with no terminal it runs SUDO_ASKPASS (else sudo.conf's askpass) when DISPLAY is set, and a
	// failing askpass ends it at once; without DISPLAY it fails with "a terminal is required".
	// gpg (git commit -S, tag -s): gpg-agent starts pinentry on the terminal the client names in GPG_TTY,
	// else on the terminal the agent itself was started from. An empty GPG_TTY is sent as "no terminal",
	// which beats the agent's own, and a terminal pinentry then fails at once ("Inappropriate ioctl for
	// device"); an unlocked or cached key still signs. (GPG_TTY=/dev/null would make pinentry-curses wait
	// for its 60 s timeout; dropping the variable would fall back to the agent's terminal.)
	// PINENTRY_USER_DATA is emptied likewise: JetBrains' pinentry hook (IJ_PINENTRY=…) opens a dialog in
	// the IDE.
	"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/usr/bin/false", "GCM_INTERACTIVE=never",
	"SSH_ASKPASS=/usr/bin/false", "SSH_ASKPASS_REQUIRE=never", "SUDO_ASKPASS=/usr/bin/false",
	"GPG_TTY=", "PINENTRY_USER_DATA=",

	// Confirmations, colour and progress.
	"CI=true", "TERM=dumb", "NO_COLOR=1",
	"PYTHONUNBUFFERED=1", "DEBIAN_FRONTEND=noninteractive", "PIP_NO_INPUT=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
	"npm_config_yes=true", "npm_config_update_notifier=false", "npm_config_fund=false",
	"npm_config_audit=false", "npm_config_progress=false", "YARN_ENABLE_PROGRESS_BARS=0",
	"CARGO_TERM_PROGRESS_WHEN=never", "TF_INPUT=0", "TF_IN_AUTOMATION=1", "GH_PROMPT_DISABLED=1",
	"COMPOSER_NO_INTERACTION=1", "CLOUDSDK_CORE_DISABLE_PROMPTS=1", "AGENTBASH=1",
}

// DroppedEnvPrefixes name inherited variables that are left out of a command's environment: the
// plumbing an IDE's terminal passes to its own askpass, editor and rebase helpers (VS Code and its forks:
// VSCODE_GIT_ASKPASS_*, VSCODE_GIT_EDITOR_*, VSCODE_GIT_IPC_HANDLE; Cursor's CURSOR_GIT_*; JetBrains'
// INTELLIJ_GIT_ASKPASS_*, INTELLIJ_SSH_ASKPASS_*, INTELLIJ_REBASE_HANDER_*). They have no use once the
// askpass and editor variables above are replaced, and without them the IDE's helper scripts fail at once
// if anything still runs them (a user's askpass wrapper, an ssh ProxyCommand) instead of opening a dialog
// in the IDE. They are dropped rather than overridden because no value of theirs means "no prompt".
// Config and --env can still set them.
var DroppedEnvPrefixes = []string{
	"VSCODE_GIT_", "CURSOR_GIT_", "INTELLIJ_GIT_ASKPASS_", "INTELLIJ_SSH_ASKPASS_", "INTELLIJ_REBASE_HANDER_",
}

// Environ builds a command's environment: base (usually os.Environ()) less the variables named by
// [DroppedEnvPrefixes], then [NonInteractiveEnv], then LANG=C.UTF-8 when base sets no locale variable,
// then each layer of KEY=VALUE overrides in order (later wins). The result has one entry per key, in
// first-seen order.
func Environ(base []string, layers ...[]string) []string {
	var env []string
	index := map[string]int{}
	set := func(kv string) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return
		}
		if i, seen := index[k]; seen {
			env[i] = kv
			return
		}
		index[k] = len(env)
		env = append(env, kv)
	}
	for _, kv := range base {
		if !dropped(kv) {
			set(kv)
		}
	}
	for _, kv := range NonInteractiveEnv {
		set(kv)
	}
	if !slices.ContainsFunc(base, hasLocale) {
		set("LANG=C.UTF-8")
	}
	for _, layer := range layers {
		for _, kv := range layer {
			set(kv)
		}
	}
	return env
}

func dropped(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return slices.ContainsFunc(DroppedEnvPrefixes, func(p string) bool { return strings.HasPrefix(k, p) })
}

func hasLocale(kv string) bool {
	k, v, _ := strings.Cut(kv, "=")
	return v != "" && (k == "LANG" || strings.HasPrefix(k, "LC_"))
}
