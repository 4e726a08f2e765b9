package tool_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

func TestNewCallID(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^mcp_[0-9a-hjkmnp-tv-z]{18}$`)
	seen := map[string]bool{}
	var ids []string
	for range 10000 {
		id := tool.NewCallID("mcp")
		if !shape.MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	// Ids of later milliseconds sort after earlier ones.
	if first, last := ids[0][:len("mcp_")+10], ids[len(ids)-1][:len("mcp_")+10]; first > last {
		t.Errorf("time part goes back: %s then %s", first, last)
	}
	if id := tool.NewCallID(""); len(id) != 18 {
		t.Errorf("without a prefix: %q", id)
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if got := (tool.Identity{Workspace: link, SessionKey: "s"}).Scope(); got != (tool.Scope{Workspace: resolved, Session: "s"}) {
		t.Errorf("Scope = %+v", got)
	}
	if tool.ResolveDir("") != "" || (tool.Identity{}).Scope() != (tool.Scope{}) {
		t.Error("no workspace must stay no workspace")
	}
	a := tool.Scope{Workspace: "/a"}
	as := tool.Scope{Workspace: "/a", Session: "s"}
	for _, c := range []struct {
		asker, kept tool.Scope
		want        bool
	}{
		{as, as, true},
		{tool.Scope{Workspace: "/b", Session: "s"}, as, true},
		{tool.Scope{Workspace: "/a", Session: "t"}, as, false},
		{a, as, false},
		{a, a, true},
		{tool.Scope{Workspace: "/b"}, a, false},
		{as, a, false},
		{tool.Scope{}, tool.Scope{}, true},
	} {
		if got := c.asker.Sees(c.kept); got != c.want {
			t.Errorf("%+v sees %+v = %v", c.asker, c.kept, got)
		}
	}
}
