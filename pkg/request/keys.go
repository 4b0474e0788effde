package request

import (
	"encoding/json"

	"github.com/agentbash/agentbash/pkg/screen"
)

// ParseKeys reads the keys field of an rpc input request or an MCP bash_input call (docs/reference.md §14):
// a comma-separated string ("Enter,C-c", split as the command line's --keys is) or a JSON list of names;
// left out or null, none. ok is false when it is neither (the face says what it wants); err names a key
// screen.Keys does not know, with the ones it knows, so nothing of the input is written.
func ParseKeys(raw json.RawMessage) (names []string, ok bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true, nil
	}
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil:
		names = screen.ParseKeys(s)
	case json.Unmarshal(raw, &names) == nil:
	default:
		return nil, false, nil
	}
	_, err = screen.Keys(names, screen.KeyMode{})
	return names, true, err
}
