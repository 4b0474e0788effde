package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
	"go.yaml.in/yaml/v3"

	"github.com/agentbash/agentbash/pkg/texts"
)

// Where a setting came from (reference §2: flag > environment > file > default).
type SourceKind int

const (
	FromDefault SourceKind = iota
	FromFile               // Source.Name is the file's path
	FromEnv                // Source.Name is the variable: AGENTBASH_TIMEOUT
	FromFlag               // Source.Name is the flag without dashes: timeout
)

// Source is where one setting came from.
type Source struct {
	Kind SourceKind
	Name string
}

// ValueError is a bad setting (reference §4). Its text names where the value came from and says in words what
// was expected: `/home/u/.config/agentbash/config.yaml: timeout: want a number of seconds, got "abc"`,
// `AGENTBASH_TIMEOUT: want a number of seconds, got "abc"`, `--timeout: …`. A FromFlag error is a usage
// error for the CLI; the others are config errors.
type ValueError struct {
	Source Source
	Key    string // the dotted key ("artifacts.maxBytes"); from a file, down to the item: "interceptor.rules[1].tool"
	Msg    string // what was wrong, in words; from a variable, led by the item: "[1].tool: want a string, got 5"
}

func (e *ValueError) Error() string {
	switch e.Source.Kind {
	case FromFile:
		if e.Key == "" {
			return e.Source.Name + ": " + e.Msg // the file as a whole
		}
		return e.Source.Name + ": " + e.Key + ": " + e.Msg
	case FromEnv:
		return e.Source.Name + ": " + e.Msg
	case FromFlag:
		return "--" + e.Source.Name + ": " + e.Msg
	}
	return e.Key + ": " + e.Msg
}

// EnvPrefix starts the environment variable of every key (reference §2).
const EnvPrefix = "AGENTBASH_"

// notKeys are agentbash's own variables that are no key, so they are not warned about. (AGENTBASH, which
// agentbash sets to 1 in the command's environment, has no underscore and never looks like a key.)
// Keys of later features (rpc.*) become keys by becoming fields of [Config].
var notKeys = []string{"AGENTBASH_CONFIG"}

// EnvName is the environment variable of key: AGENTBASH_ + the key upper-cased with "." → "_"
// ("artifacts.maxBytes" → "AGENTBASH_ARTIFACTS_MAXBYTES").
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Keys is every key, dotted, sorted ("artifacts.dir", …, "timeout").
func Keys() []string {
	return slices.Sorted(maps.Keys(Defaults()))
}

// expected says in words what key takes, for keys whose type alone does not say it.
var expected = map[string]string{
	"timeout":            "a number of seconds",
	"killGrace":          "a number of seconds",
	"maxBytes":           "a whole number of bytes",
	"artifacts.maxBytes": "a whole number of bytes",
	"mcp.maxBytes":       "a whole number of bytes",
	"tasks.maxLifetime":  "a number of seconds",
	"interceptor.tools":  "a list of tool names",
	"interceptor.rules":  "a list of rules (pattern, flags, tool, message)",
	"shell.env":          "a map of variable names to values",
	"session":            "a session name",
	"target":             "a target URI (local, ssh://HOST, docker://NAME, podman://NAME, kubectl://POD, cmd://ARGV)",
	"targets.allowed":    "a list of target URIs",
	"sandbox.mode":       "off, workspace-write or read-only",
	"sandbox.network":    "off, proxy or on",
	"sandbox.writable":   "a list of paths",
	"sandbox.denyRead":   "a list of paths",
	"sandbox.cacheDirs":  "a list of paths",
	"sandbox.allowHosts": "a list of host:port patterns",
}

// Expected says in words what key takes: "a number of seconds", "true or false", "a list of tool names".
func Expected(key string) string {
	if w, ok := expected[key]; ok {
		return w
	}
	f, ok := field(reflect.ValueOf(new(Default())).Elem(), key)
	if !ok {
		return "a value"
	}
	return expectedOf(f.Type())
}

func expectedOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Map:
		return "a map of names to values"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "a list of maps"
		}
		return "a list of words"
	case reflect.Struct:
		return "a map of settings"
	}
	return "a value"
}

// File is a config file as parsed: its path and its YAML document.
type File struct {
	Path string
	doc  *yaml.Node // the top-level mapping; nil for an empty file
}

// ReadFile reads and parses the config file at path. Errors: the file's own (wrapping fs.ErrNotExist when
// it is missing), or a *ValueError when it is not YAML or not a map of settings. Its keys and values are
// checked by [File.Settings].
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		return nil, &ValueError{Source: Source{FromFile, path}, Msg: "not valid YAML: " + msg}
	}
	f := &File{Path: path}
	if len(doc.Content) == 0 {
		return f, nil // empty file
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return f, nil // only comments
	}
	if top.Kind != yaml.MappingNode {
		return nil, &ValueError{Source: Source{FromFile, path},
			Msg: "want a map of settings (key: value), got " + got(top)}
	}
	f.doc = top
	return f, nil
}

// Settings is the file's settings, checked on their own (reference §4): a nested map laid out as the file is
// (section → key → value) holding the keys the file sets, each value of its key's type: float64, int,
// int64, bool, string, []string, []intercept.Rule, map[string]string. A null value sets nothing. The
// error joins one *ValueError per bad setting, each naming the file and the key.
func (f *File) Settings() (map[string]any, error) {
	l := newLoader()
	if f.doc != nil {
		l.source = Source{FromFile, f.Path}
		l.decodeStruct(reflect.ValueOf(&l.cfg).Elem(), f.doc, "")
	}
	return l.settings()
}

// Environ is the settings of the AGENTBASH_* variables of environ (KEY=VALUE entries; an empty value is
// unset, and of a variable given twice the last one counts, as for getenv), checked on their own and laid
// out as [File.Settings]'. The error joins one *ValueError per bad variable, each naming it; the warnings
// say which AGENTBASH_* variables are no key, with the closest key when one is close.
func Environ(environ []string) (settings map[string]any, warnings []string, err error) {
	var known map[string]string // variable → key; made at the first AGENTBASH_* variable
	values := map[string]string{}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || val == "" || slices.Contains(notKeys, name) {
			continue
		}
		if known == nil {
			known = map[string]string{}
			for _, k := range Keys() {
				known[EnvName(k)] = k
			}
		}
		if _, ok := known[name]; !ok {
			warnings = append(warnings, unknownVariable(name, slices.Collect(maps.Keys(known))))
			continue
		}
		values[name] = val
	}
	l := newLoader()
	root := reflect.ValueOf(&l.cfg).Elem()
	for _, name := range slices.Sorted(maps.Keys(values)) {
		key := known[name]
		l.source, l.key = Source{FromEnv, name}, key
		fv, _ := field(root, key)
		l.decodeString(fv, values[name], key)
	}
	settings, err = l.settings()
	return settings, warnings, err
}

// unknownVariable is the warning for an AGENTBASH_* variable that is no key.
func unknownVariable(name string, known []string) string {
	w := fmt.Sprintf(texts.NoSuchSetting, name)
	if s := closest(name, known); s != "" {
		w += fmt.Sprintf(texts.DidYouMean, s)
	}
	return w
}

// closest is the candidate nearest to s, or "" when none is close: the edit distance (case, "_" and "."
// ignored) to the candidate or to its last part (NONZEROEXIT for AGENTBASH_RESULT_NONZEROEXIT) is at most
// 1 for names of up to 5 letters, 2 for longer ones, and 0 for 2 letters or fewer.
func closest(s string, candidates []string) string {
	norm := func(x string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '.' {
				return -1
			}
			return unicode.ToLower(r)
		}, strings.TrimPrefix(x, EnvPrefix))
	}
	ns := norm(s)
	limit := 2
	switch n := utf8.RuneCountInString(ns); {
	case n <= 2:
		limit = 0
	case n <= 5:
		limit = 1
	}
	// Scores are doubled distances; a match of the last part scores one more than the same match of the
	// whole name, so the whole name wins a tie (MAXBYTES: maxBytes, not artifacts.maxBytes).
	best, bestD := "", 2*limit+2
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		d := 2 * levenshtein.ComputeDistance(ns, norm(c))
		if last := norm(c[strings.LastIndexAny(c, "._")+1:]); len(last) > 2 {
			d = min(d, 2*levenshtein.ComputeDistance(ns, last)+1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// loader decodes one source into cfg, over the defaults, recording which keys it sets.
type loader struct {
	cfg    Config
	from   map[string]Source // key → the variable or file that set it
	source Source            // the source being decoded
	key    string            // the key a variable sets
	errs   []error
	failed bool // a value did not decode: range checks would only repeat it
}

func newLoader() *loader { return &loader{cfg: Default(), from: map[string]Source{}} }

// bad records a bad value at path (a key, or a place inside one). A variable names one key, so the place
// inside it leads the message there.
func (l *loader) bad(path, format string, a ...any) {
	e := &ValueError{Source: l.source, Key: path, Msg: fmt.Sprintf(format, a...)}
	if l.source.Kind != FromFile && path != l.key {
		e.Key = l.key
		e.Msg = strings.TrimPrefix(strings.TrimPrefix(path, l.key), ".") + ": " + e.Msg
	}
	l.errs = append(l.errs, e)
	l.failed = true
}

func (l *loader) set(key string) { l.from[key] = l.source }

// settings runs the range checks on what the source set and returns its keys and values as a nested map,
// or the errors.
func (l *loader) settings() (map[string]any, error) {
	if !l.failed {
		if ke, ok := errors.AsType[*KeyError](l.cfg.Validate()); ok {
			l.errs = append(l.errs, &ValueError{Source: l.from[ke.Key], Key: ke.Key, Msg: ke.Msg})
		}
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	out := map[string]any{}
	root := reflect.ValueOf(l.cfg)
	for key := range l.from {
		section, name := out, key
		for {
			part, rest, nested := strings.Cut(name, ".")
			if !nested {
				break
			}
			if _, ok := section[part]; !ok {
				section[part] = map[string]any{}
			}
			section, name = section[part].(map[string]any), rest
		}
		fv, _ := field(root, key)
		section[name] = fv.Interface()
	}
	return out, nil
}

// decodeStruct decodes a YAML mapping into the section v (the whole Config when prefix is "").
func (l *loader) decodeStruct(v reflect.Value, n *yaml.Node, prefix string) {
	if n.Kind != yaml.MappingNode {
		l.bad(strings.TrimSuffix(prefix, "."), "want a map of settings, got %s", got(n))
		return
	}
	names := tagNames(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		fv, ok := fieldByTag(v, k.Value)
		if !ok {
			var full []string
			for _, name := range names {
				full = append(full, prefix+name)
			}
			msg := "no such setting"
			if s := closest(key, full); s != "" {
				msg += fmt.Sprintf(texts.DidYouMean, s)
			}
			l.bad(key, "%s", msg)
			continue
		}
		if fv.Kind() == reflect.Struct {
			if val.Tag == "!!null" {
				continue // an empty section
			}
			l.decodeStruct(fv, val, key+".")
			continue
		}
		l.decodeNode(fv, val, key, key)
	}
}

// decodeNode decodes a YAML value into the setting v. key is the setting's key (for messages and the
// source record), path where in it the value is ("interceptor.rules[1].tool"). A null value leaves the
// setting as it was.
func (l *loader) decodeNode(v reflect.Value, n *yaml.Node, key, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return
	}
	want := func() { l.bad(path, "want %s, got %s", expectedAt(key, path, v.Type()), got(n)) }
	scalar := n.Kind == yaml.ScalarNode
	switch v.Kind() {
	case reflect.Float64:
		var f float64
		if !scalar || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			want()
			return
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int64:
		i, ok := int64(0), false
		if scalar && n.Tag == "!!int" {
			ok = n.Decode(&i) == nil
		} else if scalar && n.Tag == "!!float" {
			var f float64
			if n.Decode(&f) == nil {
				i, ok = wholeNumber(f)
			}
		}
		if !ok || v.OverflowInt(i) {
			want()
			return
		}
		v.SetInt(i)
	case reflect.Bool:
		var b bool
		if !scalar || n.Tag != "!!bool" || n.Decode(&b) != nil {
			want()
			return
		}
		v.SetBool(b)
	case reflect.String:
		if !scalar || n.Tag != "!!str" {
			want()
			return
		}
		v.SetString(n.Value)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			want()
			return
		}
		out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
		for i, item := range n.Content {
			elem := reflect.New(v.Type().Elem()).Elem()
			itemPath := fmt.Sprintf("%s[%d]", path, i)
			before := len(l.errs)
			if elem.Kind() == reflect.Struct {
				l.decodeItem(elem, item, key, itemPath)
			} else if s, ok := scalarText(item); ok {
				elem.SetString(s)
			} else {
				l.bad(itemPath, "want a word, got %s", got(item))
			}
			if len(l.errs) == before {
				out = reflect.Append(out, elem)
			}
		}
		v.Set(out)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			want()
			return
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, val := n.Content[i].Value, n.Content[i+1]
			s, ok := scalarText(val)
			if val.Tag == "!!null" {
				s, ok = "", true
			}
			if !ok {
				l.bad(path+"."+name, "want a string, got %s", got(val))
				continue
			}
			m.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(s))
		}
		v.Set(m)
	default:
		panic(fmt.Sprintf("config: key %s has a type the loader does not know: %s", key, v.Type()))
	}
	l.set(key)
}

// decodeItem decodes one list item that is a map (an interceptor rule) into the struct v. Its fields are
// strings; unknown names are errors with the closest name.
func (l *loader) decodeItem(v reflect.Value, n *yaml.Node, key, path string) {
	if n.Kind != yaml.MappingNode {
		l.bad(path, "want a map (%s), got %s", strings.Join(tagNames(v.Type()), ", "), got(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, val := n.Content[i].Value, n.Content[i+1]
		fv, ok := fieldByTag(v, name)
		if !ok {
			msg := "no such field"
			if s := closest(name, tagNames(v.Type())); s != "" {
				msg += fmt.Sprintf(texts.DidYouMean, s)
			}
			l.bad(path+"."+name, "%s", msg)
			continue
		}
		if val.Tag == "!!null" {
			continue
		}
		if !(val.Kind == yaml.ScalarNode && val.Tag == "!!str") {
			l.bad(path+"."+name, "want a string, got %s", got(val))
			continue
		}
		fv.SetString(val.Value)
	}
}

// decodeString decodes an environment variable's text into the setting v: numbers in decimal,
// booleans as true/false (also 1/0, yes/no, on/off), lists separated by commas or blanks (the sandbox's
// lists of paths and hosts by commas alone), shell.env as
// KEY=VALUE pairs separated by commas or newlines or as a JSON object, interceptor.rules as a JSON array.
func (l *loader) decodeString(v reflect.Value, s, key string) {
	t := strings.TrimSpace(s)
	want := func() { l.bad(key, "want %s, got %s", expectedText(key, v.Type()), quote(s)) }
	switch v.Kind() {
	case reflect.Float64:
		f, err := strconv.ParseFloat(t, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			want()
			return
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(t, 64)
			var ok bool
			if i, ok = wholeNumber(f); ferr != nil || !ok {
				want()
				return
			}
		}
		if v.OverflowInt(i) {
			want()
			return
		}
		v.SetInt(i)
	case reflect.Bool:
		switch strings.ToLower(t) {
		case "true", "1", "yes", "on":
			v.SetBool(true)
		case "false", "0", "no", "off":
			v.SetBool(false)
		default:
			want()
			return
		}
	case reflect.String:
		v.SetString(s)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[Argv]() { // shell.wrapper: split like shell words, nothing expanded
			words, err := SplitWords(s)
			if err != nil {
				l.bad(key, "want %s, got %s: %v", expectedText(key, v.Type()), quote(s), err)
				return
			}
			v.Set(reflect.ValueOf(append(Argv{}, words...)))
			break
		}
		if v.Type() == reflect.TypeFor[CommaList]() { // paths: split at commas only, a blank is part of one
			items := CommaList{}
			for item := range strings.SplitSeq(s, ",") {
				if item = strings.TrimSpace(item); item != "" {
					items = append(items, item)
				}
			}
			v.Set(reflect.ValueOf(items))
			break
		}
		if v.Type().Elem().Kind() == reflect.String {
			words := strings.FieldsFunc(t, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
			v.Set(reflect.ValueOf(append([]string{}, words...)))
			break
		}
		if !strings.HasPrefix(t, "[") || !json.Valid([]byte(t)) {
			want()
			return
		}
		l.decodeJSON(v, t, key)
		return
	case reflect.Map:
		if strings.HasPrefix(t, "{") {
			if !json.Valid([]byte(t)) {
				want()
				return
			}
			l.decodeJSON(v, t, key)
			return
		}
		m := map[string]string{}
		for _, kv := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == '\n' }) {
			k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				l.bad(key, "want %s, got %s", expectedText(key, v.Type()), quote(kv))
				return
			}
			m[k] = val
		}
		v.Set(reflect.ValueOf(m))
	default:
		panic(fmt.Sprintf("config: key %s has a type the loader does not know: %s", key, v.Type()))
	}
	l.set(key)
}

// decodeJSON decodes valid JSON text (an object or an array) through the YAML decoder, which reads JSON,
// so environment values are checked exactly as the file's are.
func (l *loader) decodeJSON(v reflect.Value, text, key string) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) == 0 {
		l.bad(key, "want %s, got %s", expectedText(key, v.Type()), quote(text))
		return
	}
	l.decodeNode(v, doc.Content[0], key, key)
}

// expectedAt is what the value at path of key should be: the key's own words at the key, the element's
// type inside it.
func expectedAt(key, path string, t reflect.Type) string {
	if path == key {
		return Expected(key)
	}
	return expectedOf(t)
}

// expectedText is what an environment variable of key should hold, in words.
func expectedText(key string, t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Map:
		return "KEY=VALUE pairs (separated by commas or newlines) or a JSON object"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return "a JSON array of " + strings.TrimPrefix(Expected(key), "a list of ")
	}
	return Expected(key)
}

// wholeNumber converts f to an int64 when it is a whole number within range.
func wholeNumber(f float64) (int64, bool) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// scalarText is a scalar's text as written (numbers and booleans too), false for lists, maps and null.
func scalarText(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// got describes a YAML value for an error: "abc" (quoted) for a string, the text of a number or boolean,
// "a list", "a map", "nothing".
func got(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch {
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a map"
	case n.Tag == "!!null":
		return "nothing"
	case n.Tag == "!!str":
		return quote(n.Value)
	}
	return clip(n.Value)
}

func quote(s string) string { return strconv.Quote(clip(s)) }

// clip shortens s to 60 characters for an error.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	r := []rune(s)
	return string(r[:59]) + "…"
}

// tagNames is the keys of a section (or the fields of a list item), in field order.
func tagNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("mapstructure"); tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return names
}

// fieldByTag is the field of the struct v whose tag is name.
func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("mapstructure") == name && name != "-" {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Setting is the setting of the dotted key in c ("artifacts.maxBytes"), settable; false when key is no
// setting (a section, or no key at all).
func (c *Config) Setting(key string) (reflect.Value, bool) {
	f, ok := field(reflect.ValueOf(c).Elem(), key)
	if !ok || f.Kind() == reflect.Struct {
		return reflect.Value{}, false
	}
	return f, true
}

// field is the setting of the dotted key in the Config v.
func field(v reflect.Value, key string) (reflect.Value, bool) {
	for part := range strings.SplitSeq(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldByTag(v, part)
		if !ok {
			return reflect.Value{}, false
		}
		v = f
	}
	return v, true
}
