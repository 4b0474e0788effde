package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/local"
	"github.com/agentbash/agentbash/pkg/service"
	"github.com/agentbash/agentbash/pkg/session"
)

// The end of `agentbash mcp` removes the connection's session even while a call still holds it (the
// server is exiting; the session may hold exported secrets), after a short wait for the call.
func TestRemoveSessionStillHeld(t *testing.T) {
	dir := t.TempDir()
	store := session.Store{Dir: dir}
	lease, err := store.Acquire(context.Background(), "mcp-1-0123456789ab")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	secret := filepath.Join(dir, "mcp-1-0123456789ab", "state.json")
	if err := os.WriteFile(secret, []byte(`{"SECRET":"s3cret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(w time.Duration) { sessionWait = w }(sessionWait)
	sessionWait = 10 * time.Millisecond
	var errb bytes.Buffer
	removeSession(service.New(service.Config{}, local.New(local.Config{SessionDir: dir})), "mcp-1-0123456789ab", IO{Err: &errb})
	if _, err := os.Stat(filepath.Join(dir, "mcp-1-0123456789ab")); !os.IsNotExist(err) || errb.Len() > 0 {
		t.Errorf("the session is still there (%v); stderr %q", err, errb.String())
	}
}
