package client_test

import (
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
)

// TestSchemaCheckAfter: with Options.SchemaCheckAfter, the check of the
// imported schemas waits for it to close (a server's first answers) even
// when SchemaCheckDelay says at once; then the tool whose schema does not
// compile is removed as before.
func TestSchemaCheckAfter(t *testing.T) {
	t.Parallel()
	after := make(chan struct{})
	m, reg := start(t, map[string]config.MCPServer{"t": {}}, client.Options{
		Transport:        memoryTransport(t, newTestServer(false)),
		SchemaCheckDelay: -1,
		SchemaCheckAfter: after,
	})
	// Without the wait the check, at once, would have removed it by now.
	time.Sleep(100 * time.Millisecond)
	if !reg.Has("t__bad_schema") || len(m.Status()[0].Skipped) != 0 {
		t.Fatalf("the schema check ran before SchemaCheckAfter closed: skipped %q", m.Status()[0].Skipped)
	}
	close(after)
	waitSkipped(t, m)
	if reg.Has("t__bad_schema") {
		t.Error("t__bad_schema was not removed after SchemaCheckAfter closed")
	}
}
