package entry

import (
	"os/exec"
	"strings"
	"testing"
)

// The supervisor's start skips the inits ordered after this package only while nothing it imports needs
// them: net/http (and with it crypto/tls and the rest the proxy's server brings), cobra, viper, the MCP
// SDK and its JSON schemas. A package that imports one of them again puts all their inits back on every
// run's path.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps: %q", out)
	}
	for _, d := range deps {
		for _, banned := range []string{"net/http", "crypto/tls", "github.com/agentbash/agentbash/pkg/proxy/server",
			"github.com/agentbash/agentbash/pkg/snapshot", "github.com/agentbash/agentbash/cmd",
			"github.com/spf13/", "github.com/modelcontextprotocol/", "github.com/google/jsonschema-go"} {
			if d == banned || strings.HasSuffix(banned, "/") && strings.HasPrefix(d, banned) {
				t.Errorf("pkg/supervisor/entry imports %s", d)
			}
		}
	}
}

func TestDispatch(t *testing.T) {
	for _, args := range [][]string{nil, {"run", "true"}, {"__supervise", "x"}, {"__snapshot"}, {"version"}} {
		if _, ok := dispatch(args); ok {
			t.Errorf("dispatch(%q) ran a command", args)
		}
	}
}
