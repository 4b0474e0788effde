package target

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agentbash/agentbash/pkg/config"
)

// Schemes are the URI schemes of targets this package opens (README "Targets").
var Schemes = []string{"ssh", "docker", "podman", "kubectl", "cmd"}

// InstallDir is where `agentbash target install` puts the binary on a target, under its $HOME, as
// agentbash-VERSION.
const InstallDir = ".local/share/agentbash/bin"

// notInstalled starts the line the connector's script prints on the target's stderr, exiting 127, when
// it finds no agentbash there.
const notInstalled = "agentbash-target: no agentbash here"

// Target is a parsed target URI: where agentbash rpc runs and how to reach it.
type Target struct {
	URI    string // as given: how results and errors name the target
	Scheme string
	// Argv is the connector: a program whose stdin and stdout reach `agentbash rpc` on the target.
	Argv []string
	// shell is the argv that runs a POSIX shell script on the target; nil for cmd://, which names an argv.
	shell func(script string) []string
}

// Parse parses a target URI into its connector (README "Targets"): the system ssh client with
// -T -o BatchMode=yes (nothing waits for a password; the user's ~/.ssh/config applies), docker or podman
// exec -i, kubectl exec -i, or the words of a cmd:// argv, split as shell.wrapper is. version is this
// agentbash's: the one the target runs when its PATH has none. A name beginning with "-" is refused, so
// none becomes an option. The error names the URI.
func Parse(uri, version string) (Target, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	bad := func(format string, a ...any) (Target, error) {
		return Target{}, fmt.Errorf("target %q: %s", uri, fmt.Sprintf(format, a...))
	}
	if !ok {
		return bad("want SCHEME://…, one of %s", strings.Join(Schemes, "://, ")+"://")
	}
	if scheme != "cmd" && strings.IndexFunc(uri, unicode.IsSpace) >= 0 {
		return bad("a space in a %s:// target (only cmd:// names words)", scheme)
	}
	t := Target{URI: uri, Scheme: scheme}
	switch scheme {
	case "ssh":
		s, err := parseSSH(rest)
		if err != nil {
			return bad("%v", err)
		}
		t.Argv = s.argv(rpcScript(version, s.dir))
		t.shell = s.argv
	case "docker", "podman":
		if err := checkName("container", rest); err != nil {
			return bad("%v", err)
		}
		if strings.Contains(rest, "/") {
			return bad("want %s://CONTAINER, a container name or id without /", scheme)
		}
		t.shell = func(script string) []string { return []string{scheme, "exec", "-i", rest, "sh", "-c", script} }
		t.Argv = t.shell(rpcScript(version, ""))
	case "kubectl":
		k, err := parseKubectl(rest)
		if err != nil {
			return bad("%v", err)
		}
		t.shell = k.argv
		t.Argv = k.argv(rpcScript(version, ""))
	case "cmd":
		words, err := config.SplitWords(rest)
		if err != nil {
			return bad("split like shell.wrapper: %v", err)
		}
		if len(words) == 0 || words[0] == "" {
			return bad("want cmd://ARGV, a program and its arguments whose stdio reach agentbash rpc")
		}
		t.Argv = words
	default:
		return bad("unknown scheme %q (want %s)", scheme, strings.Join(Schemes, "://, ")+"://")
	}
	return t, nil
}

// ShellArgv is the argv that runs script, a POSIX shell script, on the target. cmd:// names an argv, not
// a shell: an error.
func (t Target) ShellArgv(script string) ([]string, error) {
	if t.shell == nil {
		return nil, fmt.Errorf("target %s: a cmd:// target names a program to run, not a shell to run commands in; "+
			"install agentbash there yourself", t.URI)
	}
	return t.shell(script), nil
}

// ssh is the parts of ssh://[user@]host[:port][/dir].
type ssh struct {
	user, host, port, dir string
}

func parseSSH(rest string) (ssh, error) {
	u, err := url.Parse("ssh://" + rest)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return ssh{}, fmt.Errorf("want ssh://[user@]host[:port][/dir]: %v", err)
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(rest, "?#") {
		return ssh{}, errors.New("want ssh://[user@]host[:port][/dir], without ? or #")
	}
	s := ssh{host: u.Hostname(), port: u.Port()}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			return ssh{}, errors.New("no password in a target: ssh asks none (BatchMode); use a key or an agent")
		}
		s.user = u.User.Username()
		if err := checkName("user", s.user); err != nil {
			return ssh{}, err
		}
	}
	if err := checkName("host", s.host); err != nil {
		return ssh{}, err
	}
	if _, colon := strings.CutSuffix(u.Host, ":"); colon || s.port != "" {
		n, err := strconv.Atoi(s.port)
		if err != nil || n < 1 || n > 65535 {
			return ssh{}, fmt.Errorf("port %q: want a number from 1 to 65535", s.port)
		}
	}
	// ssh://host/dir starts in /dir; ssh://host/~/dir in ~/dir.
	s.dir = u.Path
	if d, ok := strings.CutPrefix(s.dir, "/~"); ok && (d == "" || d[0] == '/') {
		s.dir = "~" + d
	}
	if _, err := syntax.Quote(s.dir, syntax.LangPOSIX); err != nil {
		// A directory no shell word can carry (a control character, bytes that are not UTF-8) is refused:
		// dropping it would run the command somewhere else.
		return ssh{}, fmt.Errorf("directory %q cannot be passed to the target's shell: %v", s.dir, err)
	}
	return s, nil
}

// argv runs remote, one string of shell text, through the remote user's login shell.
func (s ssh) argv(remote string) []string {
	argv := []string{"ssh", "-T", "-o", "BatchMode=yes"}
	if s.user != "" {
		argv = append(argv, "-l", s.user)
	}
	if s.port != "" {
		argv = append(argv, "-p", s.port)
	}
	// The login shell may be any (fish, csh): it only runs sh with the script, quoted as every shell reads
	// single quotes.
	return append(argv, "--", s.host, "sh -c "+quote(remote))
}

// kubectl is the parts of kubectl://[NAMESPACE/]POD[/CONTAINER].
type kubectl struct {
	namespace, pod, container string
}

func parseKubectl(rest string) (kubectl, error) {
	parts := strings.Split(rest, "/")
	var k kubectl
	switch len(parts) {
	case 1:
		k.pod = parts[0]
	case 2:
		k.namespace, k.pod = parts[0], parts[1]
	case 3:
		k.namespace, k.pod, k.container = parts[0], parts[1], parts[2]
		if k.container == "" {
			return k, errors.New("empty container: want kubectl://[NAMESPACE/]POD[/CONTAINER]")
		}
		if err := checkName("container", k.container); err != nil {
			return k, err
		}
	default:
		return k, errors.New("want kubectl://[NAMESPACE/]POD[/CONTAINER] (kubectl:///POD/CONTAINER: the current namespace)")
	}
	if k.namespace != "" || len(parts) == 2 {
		if err := checkName("namespace", k.namespace); err != nil {
			return k, err
		}
	}
	return k, checkName("pod", k.pod)
}

func (k kubectl) argv(script string) []string {
	argv := []string{"kubectl", "exec", "-i"}
	if k.namespace != "" {
		argv = append(argv, "-n", k.namespace)
	}
	argv = append(argv, k.pod)
	if k.container != "" {
		argv = append(argv, "-c", k.container)
	}
	return append(argv, "--", "sh", "-c", script)
}

// checkName refuses an empty name and one that an engine would take for an option.
func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty %s", what)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("%s %q begins with -, which the engine would take for an option", what, name)
	}
	return nil
}

// rpcScript is the POSIX shell script that runs `agentbash rpc [--cwd dir]` on the target: this version
// where `agentbash target install` puts it, else the agentbash on the target's PATH, else a line on stderr
// starting with notInstalled and exit status 127.
func rpcScript(version, dir string) string {
	// --target local: the target's agentbash runs commands where it is, whatever its environment or config
	// file name as their target (a config naming a target there would otherwise chain or loop).
	args := "rpc --target local"
	if dir != "" {
		args += " --cwd " + quote(dir)
	}
	bin := `"$HOME"/` + InstallDir + "/" + quote("agentbash-"+version)
	return fmt.Sprintf(`b=%s; if [ -x "$b" ]; then exec "$b" %s; fi; `+
		`if command -v agentbash >/dev/null 2>&1; then exec agentbash %s; fi; `+
		`echo "%s: not on PATH ($PATH) nor at $b" >&2; exit 127`,
		bin, args, args, notInstalled)
}

// quote is s as one word of POSIX shell text.
func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangPOSIX)
	if err != nil { // a NUL byte, which no argv can carry
		return "''"
	}
	return q
}
