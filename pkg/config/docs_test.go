package config

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestEveryKeyDocumented: each key config knows is a row of the README's configuration table and a key
// of config.example.yaml, and the table lists no key config does not know.
func TestEveryKeyDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Configuration\n")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z.]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows[m[1]] = true
	}
	b, err := os.ReadFile("../../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var example map[string]any
	if err := yaml.Unmarshal(b, &example); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, key := range Keys() {
		known[key] = true
		if !rows[key] {
			t.Errorf("%s: no row in the README's configuration table", key)
		}
		var cur any = example
		for _, part := range strings.Split(key, ".") {
			m, _ := cur.(map[string]any)
			cur = m[part]
			if _, ok := m[part]; !ok {
				t.Errorf("%s: not in config.example.yaml", key)
				break
			}
		}
	}
	for row := range rows {
		if !known[row] {
			t.Errorf("the README's configuration table lists %s, which config does not know", row)
		}
	}
}
