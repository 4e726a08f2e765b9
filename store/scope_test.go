package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

func TestOutputsAreHandedOnlyToTheirScope(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		o := st.Outputs(store.OutputOptions{})
		bg := context.Background()
		in := func(ws, session string) context.Context {
			return tool.WithScope(bg, tool.Scope{Workspace: ws, Session: session})
		}
		if err := o.Put(in("/a", "s1"), "c-session", "of session s1"); err != nil {
			t.Fatal(err)
		}
		if err := o.Put(in("/a", ""), "c-workspace", "of workspace /a"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			ctx  context.Context
			id   string
			want bool
		}{
			{"same session", in("/a", "s1"), "c-session", true},
			{"same session, other workspace", in("/b", "s1"), "c-session", true},
			{"other session, same workspace", in("/a", "s2"), "c-session", false},
			{"no session, same workspace", in("/a", ""), "c-session", false},
			{"no scope at all", bg, "c-session", false},
			{"same workspace, no session", in("/a", ""), "c-workspace", true},
			{"other workspace, no session", in("/b", ""), "c-workspace", false},
			{"a session asking for a workspace's output", in("/a", "s1"), "c-workspace", false},
		} {
			_, ok, err := o.Get(c.ctx, c.id)
			if err != nil || ok != c.want {
				t.Errorf("%s: got %v (%v), want %v", c.name, ok, err, c.want)
			}
		}
	})
}

func TestJournalRecordsWorkspaceAndLimitsToIt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		j := st.Journal(store.JournalOptions{})
		bg := context.Background()
		a := tool.WithScope(bg, tool.Scope{Workspace: "/ws/a", Session: "s"})
		b := tool.WithScope(bg, tool.Scope{Workspace: "/ws/b"})
		// The same id in two workspaces (ids a caller chose itself).
		if err := j.Record(a, "same", tool.FileChange{Path: "x", Exists: true, After: []byte("A")}); err != nil {
			t.Fatal(err)
		}
		if err := j.Record(b, "same", tool.FileChange{Path: "x", Exists: true, After: []byte("B")}); err != nil {
			t.Fatal(err)
		}
		ws, err := j.Workspaces(bg, "same")
		if err != nil || !slices.Equal(ws, []string{"/ws/a", "/ws/b"}) {
			t.Fatalf("workspaces %v %v", ws, err)
		}
		cs, err := j.In("/ws/b").Changes(bg, "same")
		if err != nil || len(cs) != 1 || string(cs[0].After) != "B" {
			t.Fatalf("changes in b: %+v %v", cs, err)
		}
		if err := j.In("/ws/b").DeleteChanges(bg, "same"); err != nil {
			t.Fatal(err)
		}
		if cs, _ := j.Changes(bg, "same"); len(cs) != 1 || string(cs[0].After) != "A" {
			t.Fatalf("deleting b's changes touched a's: %+v", cs)
		}
		if ws, _ := j.Workspaces(bg, "none"); len(ws) != 0 {
			t.Errorf("workspaces of an unknown call: %v", ws)
		}
	})
}
