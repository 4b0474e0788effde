package screen

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// KeyMode is what the bytes of a key depend on: the terminal's modes (Terminal.KeyMode), or no terminal.
type KeyMode struct {
	// ApplicationCursor (DECCKM, ESC[?1h, set by full-screen programs and readline's keypad mode): the
	// arrow keys, Home and End send ESC O x instead of ESC [ x.
	ApplicationCursor bool
	// ApplicationKeypad (DECKPAM, ESC =) is reported as the terminal has it; no named key is on the numeric
	// keypad, so no key's bytes depend on it.
	ApplicationKeypad bool
	// Pipe: the command reads a pipe, not a terminal, so nothing turns CR into a newline: Enter is "\n".
	Pipe bool
}

// ErrUnknownKey is the error of Keys for a name it does not know (errors.Is); the error's text lists the
// names it knows.
var ErrUnknownKey = errors.New("unknown key")

// KnownKeys is the list of key names in the error of an unknown key, for a person.
const KnownKeys = "Enter, Tab, S-Tab, Esc, Backspace, Space, Comma, Up, Down, Left, Right, Home, End, " +
	"PageUp, PageDown, Insert, Delete, F1 to F12, C-a to C-z, C-@, C-[, C-\\, C-], C-^, C-_, C-?, C-Space, " +
	"M-<key> (Esc first), or any single character"

// namedKey is a key with a name, and its bytes without and with application cursor keys.
type namedKey struct {
	normal, application string
}

// namedKeys are the key names (lower case; a name is matched without regard to case) as xterm encodes them
// (xterm's ctlseqs "PC-Style Function Keys"; Backspace is DEL, as the terminal's erase character is).
var namedKeys = func() map[string]namedKey {
	same := func(s string) namedKey { return namedKey{s, s} }
	keys := map[string]namedKey{
		"enter":     same("\r"),
		"tab":       same("\t"),
		"s-tab":     same("\x1b[Z"),
		"esc":       same("\x1b"),
		"backspace": same("\x7f"),
		"space":     same(" "),
		"comma":     same(","),
		"up":        {"\x1b[A", "\x1bOA"},
		"down":      {"\x1b[B", "\x1bOB"},
		"right":     {"\x1b[C", "\x1bOC"},
		"left":      {"\x1b[D", "\x1bOD"},
		"home":      {"\x1b[H", "\x1bOH"},
		"end":       {"\x1b[F", "\x1bOF"},
		"pageup":    same("\x1b[5~"),
		"pagedown":  same("\x1b[6~"),
		"insert":    same("\x1b[2~"),
		"delete":    same("\x1b[3~"),
		"f1":        same("\x1bOP"),
		"f2":        same("\x1bOQ"),
		"f3":        same("\x1bOR"),
		"f4":        same("\x1bOS"),
		"f5":        same("\x1b[15~"),
		"f6":        same("\x1b[17~"),
		"f7":        same("\x1b[18~"),
		"f8":        same("\x1b[19~"),
		"f9":        same("\x1b[20~"),
		"f10":       same("\x1b[21~"),
		"f11":       same("\x1b[23~"),
		"f12":       same("\x1b[24~"),
		"c-space":   same("\x00"),
	}
	for alias, name := range map[string]string{
		"return": "enter", "escape": "esc", "backtab": "s-tab", "bs": "backspace",
		"pgup": "pageup", "pgdn": "pagedown", "ins": "insert", "del": "delete",
	} {
		keys[alias] = keys[name]
	}
	return keys
}()

// controlKeys are the C-<char> keys that are not a letter (a letter's is its position in the alphabet, of
// either case).
var controlKeys = map[string]byte{"@": 0x00, " ": 0x00, "[": 0x1b, "\\": 0x1c, "]": 0x1d, "^": 0x1e, "_": 0x1f, "?": 0x7f}

// Keys encodes key names as the bytes a terminal in mode m sends (reference §14, `--keys`), in order:
// Enter ("\r"; "\n" in Pipe mode), Tab, S-Tab (BackTab), Esc, Backspace (DEL), Space, Comma, Up, Down,
// Left, Right, Home, End (ESC [ x, or ESC O x with application cursor keys), PageUp, PageDown, Insert,
// Delete, F1–F12, C-a … C-z (0x01–0x1a, either case), C-@ and C-Space (0x00), C-[, C-\, C-], C-^, C-_
// (0x1b–0x1f), C-? (0x7f), M-<key> (ESC, then the key: M-x, M-Enter), and any single character (UTF-8, or
// one byte) as itself. A name of more than one character is matched without regard to case (Enter,
// enter, ENTER); a single character is literal. Aliases: Return, Escape, BS, PgUp, PgDn, Ins, Del.
// An unknown or empty name is an ErrUnknownKey whose text lists the known names.
func Keys(names []string, m KeyMode) ([]byte, error) {
	var out []byte
	for _, name := range names {
		b, ok := key(name, m)
		switch {
		case name == "":
			return nil, fmt.Errorf("%w: an empty name (a comma is Comma, a space Space); known: %s", ErrUnknownKey, KnownKeys)
		case !ok:
			return nil, fmt.Errorf("%w %q; known: %s", ErrUnknownKey, name, KnownKeys)
		}
		out = append(out, b...)
	}
	return out, nil
}

// key is the bytes of one key name, or false.
func key(name string, m KeyMode) (string, bool) {
	if utf8.RuneCountInString(name) == 1 {
		return name, true
	}
	lower := strings.ToLower(name)
	if k, ok := namedKeys[lower]; ok {
		switch {
		case m.Pipe && (lower == "enter" || lower == "return"):
			return "\n", true
		case m.ApplicationCursor:
			return k.application, true
		}
		return k.normal, true
	}
	if strings.HasPrefix(lower, "m-") {
		rest, ok := key(name[2:], m)
		return "\x1b" + rest, ok
	}
	if strings.HasPrefix(lower, "c-") {
		c := name[2:]
		if b, ok := controlKeys[c]; ok {
			return string(rune(b)), true
		}
		if len(c) == 1 && (c[0]|0x20) >= 'a' && (c[0]|0x20) <= 'z' {
			return string(rune(c[0]&^0x20 - '@')), true
		}
	}
	return "", false
}

// ParseKeys splits a keys string of the command line or rpc ("Enter,C-c,Up") into names for Keys: at each
// comma, with the spaces around a name left out. A comma key is written Comma, a space key Space; an
// empty name (",,", a trailing comma) is kept, for Keys to refuse. An empty string is no keys.
func ParseKeys(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	names := strings.Split(s, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	return names
}
