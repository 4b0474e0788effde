// Package intercept blocks shell commands for which the calling agent has a dedicated tool, by matching
// JavaScript-syntax regular expressions against each simple command of the parsed script (reference §3.3).
//
// A pattern is tried on two texts of each simple command, for built-in and custom rules alike: as written,
// and unwrapped — leading wrappers that
// run the rest of the words as a command are left out (sudo and env with their options and NAME=VALUE
// words, command, builtin, exec, nice, nohup, timeout with its duration, stdbuf, time), and the command name
// is unquoted, unescaped and reduced to its base name, so `sudo -n /bin/cat f`, `env X=1 \cat f` and
// `timeout 5 'cat' f` are all also matched as `cat f`. xargs is not unwrapped: `ls | xargs cat` reads files
// named on stdin, which no tool call could name; it stays a filter (the built-in in-place edit rules still
// catch `xargs sed -i`). Redirections that write no file (`2>&1`, `>/dev/null`, `>&${fd}`) are left out.
//
// The interceptor is advice, not a security boundary: `$(printf cat) f`, `eval 'cat f'`, `bash -c 'cat f'`
// or an alias get past it.
package intercept

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// MatchTimeout bounds one regular-expression match; a match that runs out of time counts as no match. It is
// generous because regexp2 measures wall-clock time: on a loaded machine 100ms was seen to expire on
// matches that take microseconds.
const MatchTimeout = time.Second

// Rule sources, in Rule.Source.
const (
	SourceBuiltin = "builtin"
	SourceConfig  = "config"
)

// Rule is one interceptor rule, in the shape of pi's `bashInterceptor` rules: when Pattern matches the text
// of a simple command and Tool is active, the command is blocked with Message.
//
// The pattern sees the text as written and the unwrapped one (see the package doc): `^cat\s` catches
// `sudo /bin/cat f` and `env X=1 cat f` (unwrapped `cat f`), and `^sudo\b` still catches `sudo rm x`
// (as written).
type Rule struct {
	Pattern string `json:"pattern" mapstructure:"pattern"` // JavaScript (ECMAScript) regex source
	Flags   string `json:"flags,omitempty" mapstructure:"flags"`
	Tool    string `json:"tool" mapstructure:"tool"`
	Message string `json:"message" mapstructure:"message"`
	Source  string `json:"source,omitempty" mapstructure:"-"` // "builtin" or "config"; set by New
}

// Block says why a command was blocked: the suggested tool, the rule's message and its pattern source
// (`details.blocked` of reference §3.3).
type Block struct{ Tool, Message, Pattern string }

// Match is one simple command of a script with the rule that fires on it, as `agentbash rules test` shows.
type Match struct {
	Command string `json:"command"` // the text that matched: unwrapped (`sudo cat f` shows `cat f`) unless the rule matched it as written
	Rule    *Rule  `json:"rule"`    // the first active rule that matches, nil if none
}

// Interceptor holds compiled rules and the set of active tools. It is safe for concurrent use.
type Interceptor struct {
	rules []compiled // shared, never changed after New: WithTools copies only the slice header
	tools map[string]bool
}

type compiled struct {
	rule Rule
	re   *regexp2.Regexp
}

// New compiles the custom rules (Source "config") followed, when defaultRules is true, by DefaultRules()
// (Source "builtin"). A rule whose pattern or flags do not compile, or that lacks a tool or a message, is
// skipped and named in the returned warnings, for example
// `interceptor rule 2 ("(foo"): invalid pattern: …`; rules are numbered from 1 in custom. Only rules whose
// Tool is in tools can fire; with no tools nothing is ever blocked.
func New(custom []Rule, defaultRules bool, tools []string) (*Interceptor, []string) {
	in := &Interceptor{tools: toolSet(tools)}
	var warnings []string
	add := func(source string, n int, r Rule) {
		r.Source = source
		re, err := compile(r)
		if err != nil {
			warnings = append(warnings, ruleError(source, n, r, err).Error())
			return
		}
		in.rules = append(in.rules, compiled{rule: r, re: re})
	}
	for n, r := range custom {
		add(SourceConfig, n+1, r)
	}
	if defaultRules {
		for n, r := range DefaultRules() {
			add(SourceBuiltin, n+1, r)
		}
	}
	return in, warnings
}

// WithTools is an Interceptor with i's compiled rules and tools as its active tools. It compiles nothing:
// the rules are compiled once per rule set (in New), and a request naming its own tools costs a set of
// their names (docs/architecture.md, "pkg/intercept").
func (i *Interceptor) WithTools(tools []string) *Interceptor {
	return &Interceptor{rules: i.rules, tools: toolSet(tools)}
}

func toolSet(tools []string) map[string]bool {
	set := make(map[string]bool, len(tools))
	for _, t := range tools {
		set[strings.TrimSpace(t)] = true
	}
	return set
}

// Rules returns the effective rules in the order they are tried, with Source set, whether or not their tool
// is active.
func (i *Interceptor) Rules() []Rule {
	out := make([]Rule, len(i.rules))
	for n, c := range i.rules {
		out[n] = c.rule
	}
	return out
}

// Active reports whether rules for tool can fire.
func (i *Interceptor) Active(tool string) bool { return i.tools[tool] }

// Check reports whether command is blocked, and by which rule; nil means it may run. Rules are tried in
// order (custom first) and the first active rule that matches any simple command of the script wins. A
// command that does not parse as Bash is never blocked (reference §3.3).
func (i *Interceptor) Check(command string) *Block {
	w, ok := walk(command)
	if !ok {
		return nil
	}
	for n := range i.rules {
		c := &i.rules[n]
		if !i.tools[c.rule.Tool] {
			continue
		}
		for k := range w.cmds {
			if c.matchesCommand(w, k) {
				return &Block{Tool: c.rule.Tool, Message: c.rule.Message, Pattern: c.rule.Pattern}
			}
		}
	}
	return nil
}

// matchesCommand reports whether c matches simple command k of w, unwrapped or as written.
func (c *compiled) matchesCommand(w *walker, k int) bool {
	return c.matches(w.cmds[k]) || w.written[k] != "" && c.matches(w.written[k])
}

// Explain returns every simple command of command, in source order, with the first active rule that
// matches it (nil if none). It returns nil when command does not parse.
func (i *Interceptor) Explain(command string) []Match {
	w, ok := walk(command)
	if !ok {
		return nil
	}
	out := make([]Match, 0, len(w.cmds))
	for k, text := range w.cmds {
		m := Match{Command: text}
		for n := range i.rules {
			c := &i.rules[n]
			if i.tools[c.rule.Tool] && c.matchesCommand(w, k) {
				r := c.rule
				m.Rule = &r
				if !c.matches(text) {
					m.Command = w.written[k] // it matched the text as written (`^sudo\b`)
				}
				break
			}
		}
		out = append(out, m)
	}
	return out
}

func (c *compiled) matches(text string) bool {
	ok, err := c.re.MatchString(text)
	return err == nil && ok
}

var (
	errNoTool    = errors.New("missing tool")
	errNoMessage = errors.New("missing message")
)

func ruleError(source string, n int, r Rule, err error) error {
	what := "interceptor rule"
	if source == SourceBuiltin {
		what = "built-in interceptor rule"
	}
	return fmt.Errorf("%s %d (%q): %w", what, n, r.Pattern, err)
}

// compile compiles a rule's pattern with its JavaScript flags: i (ignore case), m (multiline), s (dotAll),
// u (unicode); g and d are accepted and change nothing for a test; any other or repeated flag is an error.
func compile(r Rule) (*regexp2.Regexp, error) {
	if strings.TrimSpace(r.Tool) == "" {
		return nil, errNoTool
	}
	if strings.TrimSpace(r.Message) == "" {
		return nil, errNoMessage
	}
	opts := regexp2.RegexOptions(regexp2.ECMAScript)
	var seen []rune
	for _, f := range r.Flags {
		if slices.Contains(seen, f) {
			return nil, fmt.Errorf("invalid flags %q: repeated %q", r.Flags, f)
		}
		seen = append(seen, f)
		switch f {
		case 'i':
			opts |= regexp2.IgnoreCase
		case 'm':
			opts |= regexp2.Multiline
		case 's':
			opts |= regexp2.Singleline
		case 'u':
			opts |= regexp2.Unicode
		case 'g', 'd':
		default:
			return nil, fmt.Errorf("invalid flags %q: unknown flag %q", r.Flags, f)
		}
	}
	re, err := regexp2.Compile(r.Pattern, opts)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern: %w", err)
	}
	re.MatchTimeout = MatchTimeout
	return re, nil
}
