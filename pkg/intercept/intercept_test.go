package intercept

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

var allTools = []string{"read", "grep", "find", "edit", "write"}

func TestSimpleCommands(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"cat f.txt", []string{"cat f.txt"}},
		{"  cat   -n\tf.txt  ", []string{"cat -n f.txt"}},
		{"cd src && cat main.go", []string{"cd src", "cat main.go"}},
		{"a; b || c", []string{"a", "b", "c"}},
		{"ls | grep foo | head -3", []string{"ls", "| grep foo", "| head -3"}},
		{"make |& tail -f", []string{"make", "|& tail -f"}},
		{`echo "cat file"`, []string{`echo "cat file"`}},
		{"echo $(cat f)", []string{"echo $(cat f)", "cat f"}},
		{"echo `cat f`", []string{"echo `cat f`", "cat f"}},
		{"diff <(sort a) b", []string{"diff <(sort a) b", "sort a"}},
		{"x=$(head -1 f)", []string{"head -1 f"}},
		{"LC_ALL=C grep x f", []string{"grep x f"}},
		{"(cd a && ls)", []string{"cd a", "ls"}},
		{"for f in *.go; do cat $f; done", []string{"cat $f"}},
		{"if true; then echo y; else echo n; fi", []string{"true", "echo y", "echo n"}},
		{"while read l; do echo $l; done < in.txt", []string{"read l < in.txt", "echo $l < in.txt"}},
		{"f() { cat x; }", []string{"cat x"}},
		{"time grep x f", []string{"grep x f"}},
		// Redirections: as written, after the words; those that write no file are dropped.
		{"echo > f hi", []string{"echo hi > f"}},
		{"echo hi 2>&1", []string{"echo hi"}},
		{"echo hi >&2", []string{"echo hi"}},
		{"echo hi 1>&2 2>&-", []string{"echo hi"}},
		{"echo x > /dev/null", []string{"echo x"}},
		{`echo x > "/dev/null"`, []string{"echo x"}},
		{"echo x >/dev/stderr 2>/dev/stdout", []string{"echo x"}},
		{"echo x > /dev/fd/3", []string{"echo x"}},
		{"cmd <&3", []string{"cmd"}},
		{"echo x > >(tee log)", []string{"echo x", "tee log"}},
		{"echo x >> log.txt 2>err.txt", []string{"echo x >> log.txt 2>err.txt"}},
		{"echo x &> all.txt", []string{"echo x &> all.txt"}},
		{"echo x >&out.txt", []string{"echo x >&out.txt"}},
		{"grep x < in.txt", []string{"grep x < in.txt"}},
		{"cat <<EOF > out.txt\nhi\nEOF", []string{"cat <<EOF > out.txt"}},
		{"cat <<'EOF' | tee f\n$(x)\nEOF", []string{"cat <<'EOF'", "| tee f"}},
		{"cat <<EOF\n$(head -1 f)\nEOF", []string{"cat <<EOF", "head -1 f"}},
		{"cat <<< 'a b'", []string{"cat <<< 'a b'"}},
		// Redirections of compound commands reach the commands inside; earlier pipe stages get none.
		{"{ echo a; echo b; } > two.txt", []string{"echo a > two.txt", "echo b > two.txt"}},
		{"{ echo a | tr a b; } > f", []string{"echo a", "| tr a b > f"}},
		{"(echo a 2>&1) >> f", []string{"echo a >> f"}},
		// Wrappers are left out and the command name is unquoted and reduced to its base name.
		{"sudo -n -u root cat f", []string{"cat f"}},
		{"sudo -- VAR=1 cat f", []string{"cat f"}},
		{`env -i PATH="$PATH:/x" X=1 cat f`, []string{"cat f"}},
		{"command -p cat f", []string{"cat f"}},
		{"builtin echo x > f", []string{"echo x > f"}},
		{"exec -a x cat f", []string{"cat f"}},
		{"nice -n 5 nohup cat f", []string{"cat f"}},
		{"nice -10 cat f", []string{"cat f"}},
		{"timeout -s KILL 5 cat f", []string{"cat f"}},
		{"stdbuf -oL grep x f", []string{"grep x f"}},
		{"/usr/bin/time -v grep x f", []string{"grep x f"}},
		{"sudo env X=1 /bin/cat f", []string{"cat f"}},
		{"ls | sudo tee f", []string{"ls", "| tee f"}},
		{`\cat f`, []string{"cat f"}},
		{`'cat' "f"`, []string{`cat "f"`}},
		{`c\at f`, []string{"cat f"}},
		{"./bin/cat f", []string{"cat f"}},
		{"/usr/bin/env", []string{"env"}}, // runs nothing: not unwrapped, but the name is its base name
		{"env X=1 | grep X", []string{"env X=1", "| grep X"}},
		{"command -v rg", []string{"command -v rg"}},
		{"sudo -i", []string{"sudo -i"}},
		{"sudo -e f", []string{"sudo -e f"}},
		{"env -S 'cat f'", []string{"env -S 'cat f'"}},
		{"sudo $opts cat f", []string{"sudo $opts cat f"}},
		{`sudo "$cmd" f`, []string{`sudo "$cmd" f`}},
		{"cat${x} f", []string{"cat${x} f"}},
		{"ls | xargs cat", []string{"ls", "| xargs cat"}},
		{"exec 3>&1", []string{"exec"}},
		// More redirections that write no file.
		{"echo x >/proc/self/fd/2", []string{"echo x"}},
		{"echo x >&${fd}", []string{"echo x"}},
		{`echo x >&"$fd"`, []string{"echo x"}},
		// Unparsable.
		{"echo 'unterminated", nil},
		{"ls |", nil},
	}
	for _, tt := range tests {
		got, ok := simpleCommands(tt.in)
		if !ok && tt.want != nil {
			t.Errorf("simpleCommands(%q): does not parse", tt.in)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("simpleCommands(%q)\n got  %q\n want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	builtin := DefaultRules()
	custom := []Rule{
		{Pattern: `^git\s+push\b.*--force`, Tool: "bash-safe", Message: "no force push"},
		{Pattern: `^cat\s`, Tool: "read", Message: "custom read"},
	}
	tests := []struct {
		name    string
		custom  []Rule
		builtin bool
		tools   []string
		command string
		want    *Block
	}{
		{"built-in read", nil, true, allTools, "cat f.txt",
			&Block{Tool: "read", Message: msgRead, Pattern: builtin[1].Pattern}},
		{"built-in write", nil, true, allTools, "echo hello > out.txt",
			&Block{Tool: "write", Message: msgWrite, Pattern: builtin[len(builtin)-1].Pattern}},
		{"custom first", custom, true, allTools, "cat f.txt",
			&Block{Tool: "read", Message: "custom read", Pattern: `^cat\s`}},
		{"custom rule's tool active", custom, true, []string{"bash-safe"}, "git push origin main --force",
			&Block{Tool: "bash-safe", Message: "no force push", Pattern: custom[0].Pattern}},
		{"custom rule's tool inactive", custom, true, allTools, "git push origin main --force", nil},
		{"custom before built-in across commands", custom, true, allTools, "grep -rn x . && cat f",
			&Block{Tool: "read", Message: "custom read", Pattern: `^cat\s`}},
		{"built-ins in order across commands", nil, true, allTools, "grep -rn x . && cat f",
			&Block{Tool: "read", Message: msgRead, Pattern: builtin[1].Pattern}},
		{"default rules off", nil, false, allTools, "cat f.txt", nil},
		{"default rules off, custom kept", custom[1:], false, allTools, "cat f.txt",
			&Block{Tool: "read", Message: "custom read", Pattern: `^cat\s`}},
		{"tool not active", nil, true, []string{"grep", "find"}, "cat f.txt", nil},
		{"no tools", nil, true, nil, "cat f.txt", nil},
		{"next rule when tool inactive", nil, true, []string{"write"}, "cat a > b",
			&Block{Tool: "write", Message: msgWrite, Pattern: builtin[len(builtin)-1].Pattern}},
		{"find -name sed is no edit", nil, true, []string{"edit"}, "find . -name sed -print", nil},
		{"find -exec sed -n is no edit", nil, true, []string{"edit"}, `find . -exec sed -n 1p {} \; -print`, nil},
		{"find -exec sed -i is an edit", nil, true, []string{"edit"}, `find . -exec sed -i s/a/b/ {} \; -print`,
			&Block{Tool: "edit", Message: msgSed, Pattern: builtin[len(builtin)-4].Pattern}},
		{"custom rules see the unwrapped text", custom, true, allTools, "sudo -n /bin/cat f.txt",
			&Block{Tool: "read", Message: "custom read", Pattern: `^cat\s`}},
		{"unparsable", nil, true, allTools, "cat f.txt &&", nil},
		{"unparsable quote", nil, true, allTools, "cat 'f.txt", nil},
		{"empty", nil, true, allTools, "   ", nil},
		{"outer whitespace", nil, true, allTools, "\n  cat f.txt  \n", &Block{Tool: "read", Message: msgRead, Pattern: builtin[1].Pattern}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, warnings := New(tt.custom, tt.builtin, tt.tools)
			if len(warnings) > 0 {
				t.Fatalf("warnings: %q", warnings)
			}
			got := in.Check(tt.command)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Check(%q) = %+v, want %+v", tt.command, got, tt.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		flags   string
		command string
		blocked bool
		warning string
	}{
		{"", "CAT f", false, ""},
		{"i", "CAT f", true, ""},
		{"gi", "CAT f", true, ""},
		{"iu", "CAT f", true, ""},
		{"", "cat\nf", false, ""}, // the word is `cat`; `f` is a second command
		{"x", "CAT f", false, `interceptor rule 1 ("^cat f"): invalid flags "x": unknown flag 'x'`},
		{"ii", "CAT f", false, `interceptor rule 1 ("^cat f"): invalid flags "ii": repeated 'i'`},
	}
	for _, tt := range tests {
		in, warnings := New([]Rule{{Pattern: "^cat f", Flags: tt.flags, Tool: "read", Message: "m"}}, false, allTools)
		if got := strings.Join(warnings, "\n"); got != tt.warning {
			t.Errorf("flags %q: warnings %q, want %q", tt.flags, got, tt.warning)
		}
		if got := in.Check(tt.command) != nil; got != tt.blocked {
			t.Errorf("flags %q: Check(%q) blocked = %v, want %v", tt.flags, tt.command, got, tt.blocked)
		}
	}
	// m: ^ matches after a newline inside the text (a quoted newline stays in the word).
	for flags, want := range map[string]bool{"": false, "m": true} {
		in, _ := New([]Rule{{Pattern: "^b$", Flags: flags, Tool: "t", Message: "m"}}, false, []string{"t"})
		if got := in.Check("echo 'a\nb\nc'") != nil; got != want {
			t.Errorf("flags %q: blocked = %v, want %v", flags, got, want)
		}
	}
	// s: . matches a newline.
	for flags, want := range map[string]bool{"": false, "s": true} {
		in, _ := New([]Rule{{Pattern: "a.b", Flags: flags, Tool: "t", Message: "m"}}, false, []string{"t"})
		if got := in.Check("echo 'a\nb'") != nil; got != want {
			t.Errorf("flags %q: blocked = %v, want %v", flags, got, want)
		}
	}
}

func TestNewWarnings(t *testing.T) {
	custom := []Rule{
		{Pattern: `^ls\b`, Tool: "find", Message: "use find"},
		{Pattern: "(foo", Tool: "grep", Message: "m"},
		{Pattern: "^x", Message: "m"},
		{Pattern: "^y", Tool: "read"},
		{Pattern: `(?<=a)b`, Tool: "read", Message: "lookbehind is fine"},
	}
	in, warnings := New(custom, true, allTools)
	if len(warnings) != 3 {
		t.Fatalf("warnings = %q, want 3", warnings)
	}
	for n, prefix := range []string{
		`interceptor rule 2 ("(foo"): invalid pattern: `,
		`interceptor rule 3 ("^x"): missing tool`,
		`interceptor rule 4 ("^y"): missing message`,
	} {
		if !strings.HasPrefix(warnings[n], prefix) {
			t.Errorf("warning %d = %q, want prefix %q", n, warnings[n], prefix)
		}
	}
	rules := in.Rules()
	if len(rules) != 2+len(DefaultRules()) {
		t.Fatalf("Rules() has %d rules, want %d", len(rules), 2+len(DefaultRules()))
	}
	if rules[0].Pattern != `^ls\b` || rules[0].Source != SourceConfig || rules[1].Source != SourceConfig {
		t.Errorf("custom rules = %+v, want first and from config", rules[:2])
	}
	for _, r := range rules[2:] {
		if r.Source != SourceBuiltin {
			t.Errorf("rule %q: source %q, want builtin", r.Pattern, r.Source)
		}
	}
	if b := in.Check("ls -la"); b == nil || b.Message != "use find" {
		t.Errorf("Check(ls -la) = %+v, want the custom rule", b)
	}
	if !in.Active("grep") || in.Active("bash") {
		t.Errorf("Active: grep %v, bash %v", in.Active("grep"), in.Active("bash"))
	}
}

func TestDefaultRules(t *testing.T) {
	rules := DefaultRules()
	if _, broken := New(nil, true, nil); len(broken) > 0 {
		t.Fatalf("built-in rules do not compile: %v", broken)
	}
	var tools []string
	for _, r := range rules {
		if r.Source != SourceBuiltin || r.Message == "" {
			t.Errorf("rule %+v", r)
		}
		for _, f := range []string{"{W}", "{T}", "{R}", "{S}", "{OP}", "{E}", "{P}", "{D}", "{X}", "{XW}", "{DEV}", "{GO}", "{GL}", "{GP}", "{RO}", "{RL}", "{RP}"} {
			if strings.Contains(r.Pattern, f) {
				t.Errorf("rule %q: fragment %s not expanded", r.Pattern, f)
			}
		}
		if len(tools) == 0 || tools[len(tools)-1] != r.Tool {
			tools = append(tools, r.Tool)
		}
	}
	if want := []string{"read", "grep", "find", "edit", "write"}; !slices.Equal(tools, want) {
		t.Errorf("tools in order %v, want %v", tools, want)
	}
	// DefaultRules hands out copies.
	rules[0].Pattern = "changed"
	if DefaultRules()[0].Pattern == "changed" {
		t.Error("DefaultRules returned shared rules")
	}
}

func TestExplain(t *testing.T) {
	in, _ := New(nil, true, allTools)
	got := in.Explain("cd src && cat main.go | grep foo; echo $(head -1 f) > out.txt")
	type row struct{ command, tool string }
	var rows []row
	for _, m := range got {
		tool := ""
		if m.Rule != nil {
			tool = m.Rule.Tool
			if m.Rule.Source != SourceBuiltin || m.Rule.Pattern == "" {
				t.Errorf("rule for %q: %+v", m.Command, m.Rule)
			}
		}
		rows = append(rows, row{m.Command, tool})
	}
	want := []row{
		{"cd src", ""},
		{"cat main.go", "read"},
		{"| grep foo", ""},
		{"echo $(head -1 f) > out.txt", "write"},
		{"head -1 f", "read"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("Explain\n got  %q\n want %q", rows, want)
	}
	if got := in.Explain("cat 'x"); got != nil {
		t.Errorf("Explain(unparsable) = %v, want nil", got)
	}
	// Only active tools fire.
	in, _ = New(nil, true, []string{"grep"})
	for _, m := range in.Explain("cat f") {
		if m.Rule != nil {
			t.Errorf("Explain(cat f) with tools [grep]: rule %+v", m.Rule)
		}
	}
}

// TestBrokenRules: New names every broken rule (what `rules check` prints), numbered from 1.
func TestBrokenRules(t *testing.T) {
	_, errs := New([]Rule{
		{Pattern: `^cat\s`, Tool: "read", Message: "ok"},
		{Pattern: "[", Tool: "read", Message: "m"},
		{Pattern: "^a", Flags: "q", Tool: "read", Message: "m"},
		{Pattern: "^b", Tool: " ", Message: "m"},
		{Pattern: "^c", Tool: "read"},
	}, false, nil)
	want := []string{
		`interceptor rule 2 ("["): invalid pattern: `,
		`interceptor rule 3 ("^a"): invalid flags "q": unknown flag 'q'`,
		`interceptor rule 4 ("^b"): missing tool`,
		`interceptor rule 5 ("^c"): missing message`,
	}
	if len(errs) != len(want) {
		t.Fatalf("New warnings = %v, want %d", errs, len(want))
	}
	for n, err := range errs {
		if !strings.HasPrefix(err, want[n]) {
			t.Errorf("error %d = %q, want prefix %q", n, err, want[n])
		}
	}
	if _, errs := New(nil, false, nil); errs != nil {
		t.Errorf("New(nil) warnings = %v", errs)
	}
}

// A custom rule about the wrapper itself still fires: patterns see the unwrapped text and the text as
// written.
func TestCustomRuleSeesWrapperAsWritten(t *testing.T) {
	ic, warnings := New([]Rule{{Pattern: `^sudo\b`, Tool: "admin", Message: "no sudo"}}, true, []string{"admin", "read"})
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	if b := ic.Check("sudo rm -rf /tmp/x"); b == nil || b.Tool != "admin" {
		t.Errorf("sudo rule: %+v", b)
	}
	if b := ic.Check("sudo -n /bin/cat f.txt"); b == nil || b.Tool != "admin" {
		t.Errorf("first rule wins: %+v", b)
	}
	ic, _ = New(nil, true, []string{"read"})
	if b := ic.Check("sudo -n /bin/cat f.txt"); b == nil || b.Tool != "read" {
		t.Errorf("unwrapped read: %+v", b)
	}
}
