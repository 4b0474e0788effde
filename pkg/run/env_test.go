package run

import (
	"strings"
	"testing"
)

func envGet(env []string, key string) (string, bool) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v, true
		}
	}
	return "", false
}

// An IDE terminal's environment (VS Code, Cursor, JetBrains) and a user's own editors, askpass helpers and
// terminal: nothing of it may make a command wait for a person.
var hostileBase = []string{
	"HOME=/h", "PATH=/usr/bin:/bin",
	"GIT_ASKPASS=/opt/vscode/extensions/git/dist/askpass.sh",
	"VSCODE_GIT_ASKPASS_NODE=/opt/vscode/code", "VSCODE_GIT_ASKPASS_MAIN=/opt/vscode/askpass-main.js",
	"VSCODE_GIT_ASKPASS_EXTRA_ARGS=", "VSCODE_GIT_IPC_HANDLE=/tmp/vscode-git-1.sock",
	"VSCODE_GIT_EDITOR_NODE=/opt/vscode/code", "VSCODE_GIT_EDITOR_MAIN=/opt/vscode/git-editor-main.js",
	"CURSOR_GIT_IPC_HANDLE=/tmp/cursor-git.sock",
	"INTELLIJ_GIT_ASKPASS_HANDLER=abc", "INTELLIJ_GIT_ASKPASS_PORT=6942",
	"INTELLIJ_SSH_ASKPASS_HANDLER=def", "INTELLIJ_SSH_ASKPASS_PORT=6942",
	"INTELLIJ_REBASE_HANDER_NO=1", "INTELLIJ_REBASE_HANDER_PORT=6942",
	"PINENTRY_USER_DATA=IJ_PINENTRY=6942",
	"SSH_ASKPASS=/usr/lib/ssh/x11-ssh-askpass", "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0",
	"SUDO_ASKPASS=/usr/bin/ssh-askpass", "GPG_TTY=/dev/pts/3", "GCM_INTERACTIVE=always",
	"GIT_EDITOR=code --wait", "GIT_SEQUENCE_EDITOR=code --wait", "EDITOR=vim", "VISUAL=code --wait",
	"KUBE_EDITOR=vim", "GH_EDITOR=nano", "SVN_EDITOR=vim", "HGEDITOR=vim", "SYSTEMD_EDITOR=vim",
	"SUDO_EDITOR=vim", "PSQL_EDITOR=vim", "FCEDIT=vim", "npm_config_editor=vim",
	"GIT_PAGER=less", "PAGER=less", "GIT_TERMINAL_PROMPT=1", "GIT_MERGE_AUTOEDIT=yes",
	"VSCODE_IPC_HOOK_CLI=/tmp/vscode-ipc.sock", "TERM_PROGRAM=vscode",
}

func TestEnvironNoToolWaitsForAPerson(t *testing.T) {
	env := Environ(hostileBase)
	for _, c := range []struct{ key, want, why string }{
		{"GIT_ASKPASS", "/usr/bin/false", "beats core.askPass and the IDE's askpass"},
		{"GIT_TERMINAL_PROMPT", "0", "no terminal prompt after the askpass fails"},
		{"GCM_INTERACTIVE", "never", "Git Credential Manager beats credential.interactive"},
		{"SSH_ASKPASS", "/usr/bin/false", "older OpenSSH"},
		{"SSH_ASKPASS_REQUIRE", "never", "beats force and DISPLAY"},
		{"SUDO_ASKPASS", "/usr/bin/false", "sudo -A and sudo with no terminal"},
		{"GPG_TTY", "", "empty beats the agent's own terminal"},
		{"PINENTRY_USER_DATA", "", "JetBrains' pinentry hook"},
		{"GIT_EDITOR", "true", "beats core.editor"},
		{"GIT_SEQUENCE_EDITOR", "true", "beats sequence.editor"},
		{"GIT_MERGE_AUTOEDIT", "no", "git merge opens no editor"},
		{"EDITOR", "true", ""}, {"VISUAL", "true", ""},
		{"GH_EDITOR", "true", "beats gh config editor"},
		{"KUBE_EDITOR", "true", ""}, {"SVN_EDITOR", "true", "beats editor-cmd"},
		{"HGEDITOR", "true", "beats ui.editor"}, {"SYSTEMD_EDITOR", "true", ""},
		{"SUDO_EDITOR", "true", ""}, {"PSQL_EDITOR", "true", ""}, {"FCEDIT", "true", ""},
		{"npm_config_editor", "true", "beats .npmrc"},
		{"GIT_PAGER", "cat", "beats core.pager"}, {"PAGER", "cat", ""},
		// Kept: what no prompt comes from.
		{"DISPLAY", ":0", "kept for graphical programs the user asked for"},
		{"VSCODE_IPC_HOOK_CLI", "/tmp/vscode-ipc.sock", "`code FILE` opens a file and does not wait"},
		{"HOME", "/h", ""},
	} {
		if got, ok := envGet(env, c.key); !ok || got != c.want {
			t.Errorf("%s = %q (set %v), want %q (%s)", c.key, got, ok, c.want, c.why)
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		for _, p := range DroppedEnvPrefixes {
			if strings.HasPrefix(k, p) {
				t.Errorf("%s inherited, want it dropped", kv)
			}
		}
	}
}

// A user who wants a helper back sets it with --env or shell.env: the layers win over both the defaults
// and the drop list.
func TestEnvironLayersRestoreHelpers(t *testing.T) {
	env := Environ(hostileBase, []string{"GIT_ASKPASS=/my/askpass", "VSCODE_GIT_IPC_HANDLE=/tmp/x.sock"},
		[]string{"GPG_TTY=/dev/pts/9"})
	for k, want := range map[string]string{"GIT_ASKPASS": "/my/askpass", "VSCODE_GIT_IPC_HANDLE": "/tmp/x.sock",
		"GPG_TTY": "/dev/pts/9"} {
		if got, _ := envGet(env, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestDroppedOnlyByPrefix(t *testing.T) {
	for kv, want := range map[string]bool{
		"VSCODE_GIT_IPC_HANDLE=x": true, "VSCODE_GIT_ASKPASS_NODE=x": true, "CURSOR_GIT_ASKPASS_MAIN=x": true,
		"INTELLIJ_SSH_ASKPASS_PORT=1": true, "INTELLIJ_REBASE_HANDER_NO=1": true,
		"VSCODE_PID=1": false, "VSCODE_IPC_HOOK_CLI=x": false, "GIT_DIR=x": false, "MY_VSCODE_GIT_X=1": false,
	} {
		if got := dropped(kv); got != want {
			t.Errorf("dropped(%q) = %v, want %v", kv, got, want)
		}
	}
}

func TestEnviron(t *testing.T) {
	env := Environ([]string{"CI=1", "HOME=/h", "LANG=fr_FR.UTF-8"}, []string{"X=1", "CI=layer"}, []string{"X=2"})
	get := func(k string) string {
		for _, kv := range env {
			if key, v, _ := strings.Cut(kv, "="); key == k {
				return v
			}
		}
		return "<unset>"
	}
	for k, want := range map[string]string{"CI": "layer", "HOME": "/h", "X": "2", "LANG": "fr_FR.UTF-8",
		"GIT_PAGER": "cat", "AWS_PAGER": "", "TERM": "dumb"} {
		if got := get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if Environ(nil)[len(Environ(nil))-1] != "LANG=C.UTF-8" {
		t.Errorf("LANG default missing")
	}
	keys := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if keys[k] {
			t.Errorf("duplicate key %s", k)
		}
		keys[k] = true
	}
}
