package screen

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestKeys(t *testing.T) {
	// name → bytes in normal mode, and in application cursor mode when they differ.
	for _, tc := range []struct{ name, normal, application string }{
		{"Enter", "\r", ""},
		{"Return", "\r", ""},
		{"Tab", "\t", ""},
		{"S-Tab", "\x1b[Z", ""},
		{"BackTab", "\x1b[Z", ""},
		{"Esc", "\x1b", ""},
		{"Escape", "\x1b", ""},
		{"Backspace", "\x7f", ""},
		{"BS", "\x7f", ""},
		{"Space", " ", ""},
		{"Comma", ",", ""},
		{"Up", "\x1b[A", "\x1bOA"},
		{"Down", "\x1b[B", "\x1bOB"},
		{"Right", "\x1b[C", "\x1bOC"},
		{"Left", "\x1b[D", "\x1bOD"},
		{"Home", "\x1b[H", "\x1bOH"},
		{"End", "\x1b[F", "\x1bOF"},
		{"PageUp", "\x1b[5~", ""},
		{"PgUp", "\x1b[5~", ""},
		{"PageDown", "\x1b[6~", ""},
		{"PgDn", "\x1b[6~", ""},
		{"Insert", "\x1b[2~", ""},
		{"Ins", "\x1b[2~", ""},
		{"Delete", "\x1b[3~", ""},
		{"Del", "\x1b[3~", ""},
		{"F1", "\x1bOP", ""},
		{"F2", "\x1bOQ", ""},
		{"F3", "\x1bOR", ""},
		{"F4", "\x1bOS", ""},
		{"F5", "\x1b[15~", ""},
		{"F6", "\x1b[17~", ""},
		{"F7", "\x1b[18~", ""},
		{"F8", "\x1b[19~", ""},
		{"F9", "\x1b[20~", ""},
		{"F10", "\x1b[21~", ""},
		{"F11", "\x1b[23~", ""},
		{"F12", "\x1b[24~", ""},
		{"C-a", "\x01", ""},
		{"C-c", "\x03", ""},
		{"C-d", "\x04", ""},
		{"C-z", "\x1a", ""},
		{"C-C", "\x03", ""},
		{"C-@", "\x00", ""},
		{"C-Space", "\x00", ""},
		{"C-[", "\x1b", ""},
		{"C-\\", "\x1c", ""},
		{"C-]", "\x1d", ""},
		{"C-^", "\x1e", ""},
		{"C-_", "\x1f", ""},
		{"C-?", "\x7f", ""},
		{"M-x", "\x1bx", ""},
		{"M-X", "\x1bX", ""},
		{"M-Enter", "\x1b\r", ""},
		{"M-Up", "\x1b\x1b[A", "\x1b\x1bOA"},
		{"M-C-c", "\x1b\x03", ""},
		{"a", "a", ""},
		{"A", "A", ""},
		{"q", "q", ""},
		{",", ",", ""},
		{" ", " ", ""},
		{"é", "é", ""},
		{"日", "日", ""},
		{"\xff", "\xff", ""},
		{"enter", "\r", ""},
		{"ENTER", "\r", ""},
		{"pageup", "\x1b[5~", ""},
		{"c-c", "\x03", ""},
		{"m-x", "\x1bx", ""},
		{"f1", "\x1bOP", ""},
		{"s-tab", "\x1b[Z", ""},
	} {
		application := tc.application
		if application == "" {
			application = tc.normal
		}
		for _, m := range []struct {
			mode KeyMode
			want string
		}{
			{KeyMode{}, tc.normal},
			{KeyMode{ApplicationKeypad: true}, tc.normal},
			{KeyMode{ApplicationCursor: true}, application},
			{KeyMode{ApplicationCursor: true, ApplicationKeypad: true}, application},
		} {
			got, err := Keys([]string{tc.name}, m.mode)
			if err != nil || string(got) != m.want {
				t.Errorf("Keys(%q, %+v) = %q, %v; want %q", tc.name, m.mode, got, err, m.want)
			}
		}
	}
}

func TestKeysPipe(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"Enter"}, "\n"},
		{[]string{"return"}, "\n"},
		{[]string{"M-Enter"}, "\x1b\n"},
		{[]string{"C-m"}, "\r"}, // a control character is itself
		{[]string{"C-d"}, "\x04"},
		{[]string{"Up"}, "\x1b[A"},
		{[]string{"y", "Enter", "n", "Enter"}, "y\nn\n"},
	} {
		got, err := Keys(tc.names, KeyMode{Pipe: true})
		if err != nil || string(got) != tc.want {
			t.Errorf("Keys(%q, Pipe) = %q, %v; want %q", tc.names, got, err, tc.want)
		}
	}
}

func TestKeysSequence(t *testing.T) {
	got, err := Keys([]string{"i", "h", "i", "Esc", ":", "w", "q", "Enter"}, KeyMode{})
	if err != nil || string(got) != "ihi\x1b:wq\r" {
		t.Errorf("got %q, %v", got, err)
	}
	if got, err := Keys(nil, KeyMode{}); err != nil || len(got) != 0 {
		t.Errorf("no keys: %q, %v", got, err)
	}
}

func TestUnknownKeys(t *testing.T) {
	for _, name := range []string{"Foo", "Ctrl-c", "C-", "M-", "C-1", "C-ab", "M-Foo", "F13", "", "Enter "} {
		got, err := Keys([]string{"a", name}, KeyMode{})
		if !errors.Is(err, ErrUnknownKey) || got != nil {
			t.Errorf("Keys(%q) = %q, %v; want ErrUnknownKey", name, got, err)
			continue
		}
		for _, known := range []string{"Enter", "Tab", "S-Tab", "Esc", "Up", "PageUp", "F12", "C-a", "M-<key>"} {
			if !strings.Contains(err.Error(), known) {
				t.Errorf("error for %q does not list %s: %v", name, known, err)
			}
		}
		if name != "" && !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("error does not name %q: %v", name, err)
		}
	}
}

func TestParseKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"Enter", []string{"Enter"}},
		{"Enter,C-c,Up", []string{"Enter", "C-c", "Up"}},
		{"y, Enter , n", []string{"y", "Enter", "n"}},
		{"a,Comma,b", []string{"a", "Comma", "b"}},
		{"a,,b", []string{"a", "", "b"}},
		{"Enter,", []string{"Enter", ""}},
	} {
		if got := ParseKeys(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseKeys(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := Keys(ParseKeys("a,,b"), KeyMode{}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("an empty name: %v", err)
	}
}
