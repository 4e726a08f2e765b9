package client

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// TestRequestsGoToOneCaller: a server's request goes to its latest call
// while all its calls run for one caller; while calls of two callers run,
// it goes to neither.
func TestRequestsGoToOneCaller(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := func(session, principal string) *tool.Context {
		return &tool.Context{Identity: tool.Identity{Workspace: "/w", SessionKey: session, Principal: principal}}
	}
	var c calls
	if f, why := c.latest(); f != nil || !strings.Contains(why, "none of its calls") {
		t.Errorf("no call: %v %q", f, why)
	}
	leave1 := c.enter(ctx, as("s1", "ada"))
	leave2 := c.enter(ctx, as("s1", "ada"))
	if f, _ := c.latest(); f == nil || f != c.list[1] {
		t.Errorf("two calls of one caller: %v, want the latest", f)
	}
	leave3 := c.enter(ctx, as("s2", "bob"))
	if f, why := c.latest(); f != nil || !strings.Contains(why, "several callers") {
		t.Errorf("calls of two callers: %v %q; want none", f, why)
	}
	leave1()
	leave2()
	if f, _ := c.latest(); f == nil || f.caller != "/w\x00s2\x00bob" {
		t.Errorf("bob's call alone: %+v", f)
	}
	leave3()
}
