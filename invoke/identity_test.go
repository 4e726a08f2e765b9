package invoke_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestCallIdentity: a call without an id gets a unique one; a provider's
// id is answered with and kept beside Toolbelt's; the tool and every record
// see the call's scope, its workspace resolved.
func TestCallIdentity(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)
	var seen []tool.Scope
	var ids []string
	probe := fn("probe", func(ctx context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		s, _ := tool.ScopeFrom(ctx)
		seen, ids = append(seen, s), append(ids, call.ID)
		return tool.Text("ok"), nil
	})
	rec := &records{}
	reg := registry.New()
	if err := reg.Register(probe); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: link, SessionKey: "s1"}}, invoke.WithAudit(rec))
	ctx := context.Background()
	m1 := r.Run(ctx, tool.Call{Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	m2 := r.Run(ctx, tool.Call{Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	m3 := r.Run(ctx, tool.Call{ID: "tb_1", ProviderID: "toolu_01", Name: "probe", Arguments: []byte(`{"path":"a"}`)})
	idShape := regexp.MustCompile(`^call_[0-9a-hjkmnp-tv-z]{18}$`)
	if !idShape.MatchString(m1.ToolCallID) || !idShape.MatchString(m2.ToolCallID) || m1.ToolCallID == m2.ToolCallID {
		t.Errorf("ids made for calls without one: %q %q", m1.ToolCallID, m2.ToolCallID)
	}
	if m3.ToolCallID != "toolu_01" || ids[2] != "tb_1" {
		t.Errorf("with a provider id: message answers %q, the tool saw %q", m3.ToolCallID, ids[2])
	}
	want := tool.Scope{Workspace: real, Session: "s1"}
	for i, s := range seen {
		if s != want {
			t.Errorf("call %d ran in scope %+v, want %+v", i, s, want)
		}
	}
	if len(rec.list) != 3 {
		t.Fatalf("%d audit records", len(rec.list))
	}
	if r := rec.list[2]; r.CallID != "tb_1" || r.ProviderCallID != "toolu_01" || r.Workspace != real || r.SessionKey != "s1" {
		t.Errorf("audit record %+v", r)
	}
	if r := rec.list[0]; r.CallID != m1.ToolCallID || r.ProviderCallID != "" || r.Workspace != real {
		t.Errorf("audit record %+v", r)
	}
}
