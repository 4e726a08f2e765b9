package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Sessions()
		if _, err := ss.Info(ctx, "s1"); !errors.Is(err, store.ErrNoSession) {
			t.Fatalf("info of a missing session: %v", err)
		}
		if err := ss.Append(ctx, "s1", "/ws", "anthropic/a", []store.SessionMessage{
			{Role: "user", Body: json.RawMessage(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)},
			{Role: "assistant", Body: json.RawMessage(`{"role":"assistant","content":[]}`)},
		}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Append(ctx, "s1", "/ws", "openai/b", []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{"role":"user"}`)}}); err != nil {
			t.Fatal(err)
		}
		msgs, err := ss.Messages(ctx, "s1")
		if err != nil || len(msgs) != 3 || msgs[0].Seq != 1 || msgs[2].Seq != 3 || msgs[0].Model != "anthropic/a" || msgs[2].Model != "openai/b" || msgs[1].Role != "assistant" || msgs[0].Time.IsZero() {
			t.Fatalf("%v %+v", err, msgs)
		}
		var m map[string]any
		if json.Unmarshal(msgs[0].Body, &m) != nil || m["role"] != "user" {
			t.Errorf("body %s", msgs[0].Body)
		}
		info, err := ss.Info(ctx, "s1")
		if err != nil || info.Messages != 3 || info.Model != "openai/b" || info.Workspace != "/ws" || info.Updated.Before(info.Created) {
			t.Fatalf("%v %+v", err, info)
		}
		if err := ss.Append(ctx, "s2", "/ws", "m", []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{broken`)}}); err == nil {
			t.Fatal("a broken body was stored")
		}
		if msgs, _ := ss.Messages(ctx, "s2"); len(msgs) != 0 {
			t.Fatalf("half a failed append was kept: %+v", msgs)
		}
	})
}

func TestSessionsOfAgents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Sessions()
		main := store.SessionKey("planner", "", "")
		child := store.SessionKey("researcher", "spawn", "1")
		if main != "agent:planner:main" || child != "agent:researcher:spawn:1" {
			t.Fatalf("keys %q %q", main, child)
		}
		if err := ss.Start(ctx, store.SessionStart{ID: main, Workspace: "/ws", Model: "openai/a", As: tool.Identity{AgentID: "planner"}}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Start(ctx, store.SessionStart{ID: child, Workspace: "/ws", Model: "openai/b", As: tool.Identity{AgentID: "researcher"}, ParentKey: main, Label: "look it up"}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Append(ctx, child, "/ws", "openai/b", []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		info, err := ss.Info(ctx, child)
		if err != nil || info.Status != store.SessionRunning || info.AgentID != "researcher" || info.ParentKey != main || info.Label != "look it up" || info.Messages != 1 {
			t.Fatalf("%v %+v", err, info)
		}
		if err := ss.Finish(ctx, child, store.SessionAborted, store.SessionUsage{Input: 10, Output: 3}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Finish(ctx, main, store.SessionDone, store.SessionUsage{Input: 5, Output: 1}); err != nil {
			t.Fatal(err)
		}
		// A second run adds to the usage and keeps agent and parent.
		if err := ss.Start(ctx, store.SessionStart{ID: main, Model: "openai/c", As: tool.Identity{AgentID: "other"}}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Finish(ctx, main, store.SessionDone, store.SessionUsage{Input: 5, Output: 1}); err != nil {
			t.Fatal(err)
		}
		info, _ = ss.Info(ctx, main)
		if info.Status != store.SessionDone || info.Usage != (store.SessionUsage{Input: 10, Output: 2}) || info.AgentID != "planner" || info.Model != "openai/c" {
			t.Fatalf("%+v", info)
		}
		if err := ss.Finish(ctx, main, "running", store.SessionUsage{}); err == nil || !strings.Contains(err.Error(), "not a status a run ends in") {
			t.Errorf("finish running: %v", err)
		}
		if err := ss.Finish(ctx, "nope", store.SessionDone, store.SessionUsage{}); !errors.Is(err, store.ErrNoSession) {
			t.Errorf("finish missing: %v", err)
		}
		all, err := ss.List(ctx, store.SessionFilter{})
		if err != nil || len(all) != 2 || all[0].ID != main {
			t.Fatalf("%v %+v", err, all)
		}
		if got, _ := ss.List(ctx, store.SessionFilter{ParentKey: main}); len(got) != 1 || got[0].ID != child || got[0].Status != store.SessionAborted || got[0].Usage.Input != 10 {
			t.Fatalf("children %+v", got)
		}
		if got, _ := ss.List(ctx, store.SessionFilter{AgentID: "planner", Limit: 1}); len(got) != 1 || got[0].ID != main {
			t.Fatalf("by agent %+v", got)
		}
		if got, _ := ss.List(ctx, store.SessionFilter{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
			t.Fatalf("since %+v", got)
		}
	})
}

// TestDeleteSession: a session and its transcript go; a running one, or
// one the store does not hold, is refused; the others stay.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Sessions()
		msg := []store.SessionMessage{{Role: "user", Body: json.RawMessage(`{"role":"user"}`)}}
		for _, id := range []string{"gone", "kept"} {
			if err := ss.Append(ctx, id, "/ws", "m", msg); err != nil {
				t.Fatal(err)
			}
		}
		if err := ss.Start(ctx, store.SessionStart{ID: "busy", Workspace: "/ws", Model: "m"}); err != nil {
			t.Fatal(err)
		}
		info, err := ss.Delete(ctx, "gone")
		if err != nil || info.ID != "gone" || info.Messages != 1 {
			t.Fatalf("delete: %v %+v", err, info)
		}
		if _, err := ss.Info(ctx, "gone"); !errors.Is(err, store.ErrNoSession) {
			t.Errorf("the deleted session is still there: %v", err)
		}
		if msgs, err := ss.Messages(ctx, "gone"); err != nil || len(msgs) != 0 {
			t.Errorf("its transcript is still there: %v %+v", err, msgs)
		}
		if _, err := ss.Delete(ctx, "gone"); !errors.Is(err, store.ErrNoSession) {
			t.Errorf("deleting it again: %v", err)
		}
		if _, err := ss.Delete(ctx, "busy"); !errors.Is(err, store.ErrSessionRunning) {
			t.Errorf("deleting a running session: %v", err)
		}
		for _, id := range []string{"busy", "kept"} {
			if info, err := ss.Info(ctx, id); err != nil || id == "kept" && info.Messages != 1 {
				t.Errorf("%s: %v %+v", id, err, info)
			}
		}
	})
}
