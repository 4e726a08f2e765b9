package client_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
)

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	s := string(b)
	return !strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z")
}

// TestStubbornServer: a server that outlives its input and ignores SIGTERM
// is killed with its whole process group, and Close says so.
func TestStubbornServer(t *testing.T) {
	t.Parallel()
	srv := binaryServer(t, "stubborn", nil)
	reg := registry.New()
	m := client.New(reg, map[string]config.MCPServer{"s": srv}, client.Options{Logger: testLogger(t), StopGrace: 100 * time.Millisecond})
	t.Cleanup(func() { _ = m.Stop(context.Background()) })
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	msg := run(t, runner(reg), "s__grandchild", `{}`)
	var pid int
	if _, err := fmt.Sscan(text(msg.Content), &pid); err != nil || !alive(pid) {
		t.Fatalf("grandchild: %+v (%v)", msg, err)
	}
	err := m.Stop(context.Background())
	if want := "mcp server s did not exit within 100ms of its input closing, nor of SIGTERM, so it was killed"; err == nil || err.Error() != want {
		t.Errorf("Close: %v, want %s", err, want)
	}
	// The grandchild was killed with the group; it may take a moment to be
	// reaped by whoever inherited it.
	for deadline := time.Now().Add(time.Minute); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived its server", pid)
		}
	}
}
