package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// exec runs one statement on the store, as a writer outside this package
// (an older program, someone tampering with the database) would.
func exec(t *testing.T, st *store.Store, q string, args ...any) {
	t.Helper()
	if err := st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), q, args...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSessionIdentity: a session keeps the identity it was created with;
// later starts never change it. A session kept before identities were
// recorded has none until its next start records one (and its agent, when
// it had none). An identity that cannot be read is an error, not a guess.
func TestSessionIdentity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Sessions()
		sub := tool.Identity{AgentID: "checker", SessionKey: "agent:checker:subagent:1", Channel: "cli", Owner: true, Subagent: true}
		if err := ss.Start(ctx, store.SessionStart{ID: sub.SessionKey, Model: "m", ParentKey: "agent:lead:main", As: sub}); err != nil {
			t.Fatal(err)
		}
		more := sub
		more.Subagent, more.AgentID = false, "lead"
		if err := ss.Start(ctx, store.SessionStart{ID: sub.SessionKey, Model: "m", As: more}); err != nil {
			t.Fatal(err)
		}
		info, err := ss.Info(ctx, sub.SessionKey)
		if err != nil || info.Identity == nil || *info.Identity != sub || info.AgentID != "checker" {
			t.Fatalf("a later start changed who the session runs as: %v %+v %+v", err, info, info.Identity)
		}
		if list, err := ss.List(ctx, store.SessionFilter{}); err != nil || len(list) != 1 || list[0].Identity == nil || *list[0].Identity != sub {
			t.Fatalf("list: %v %+v", err, list)
		}

		// A session kept before identities were recorded.
		if err := ss.Append(ctx, "old", "/ws", "m", nil); err != nil {
			t.Fatal(err)
		}
		if info, err := ss.Info(ctx, "old"); err != nil || info.Identity != nil {
			t.Fatalf("an old session has an identity: %v %+v", err, info.Identity)
		}
		first := tool.Identity{AgentID: "writer", SessionKey: "old", Channel: "cli", Owner: true}
		if err := ss.Start(ctx, store.SessionStart{ID: "old", Model: "m", As: first}); err != nil {
			t.Fatal(err)
		}
		if info, err := ss.Info(ctx, "old"); err != nil || info.Identity == nil || *info.Identity != first || info.AgentID != "writer" {
			t.Fatalf("the old session's first start did not record who it runs as: %v %+v %+v", err, info, info.Identity)
		}

		exec(t, st, "UPDATE sessions SET identity = ? WHERE id = ?", `{"owner": "perhaps"`, sub.SessionKey)
		if _, err := ss.Info(ctx, sub.SessionKey); err == nil || !strings.Contains(err.Error(), "who it runs as cannot be read") {
			t.Fatalf("an unreadable identity: %v", err)
		}
	})
}

// TestScheduleIdentity: a schedule keeps the whole identity of who set it.
// One kept before identities were recorded reads as legacy, and stays so
// through updates until it is given an owner.
func TestScheduleIdentity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Schedules("/ws")
		next := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		by := tool.Identity{AgentID: "checker", SessionKey: "agent:checker:subagent:1", Channel: "cli", Sandboxed: true, Subagent: true}
		s := tool.Schedule{ID: "cron_1", Kind: tool.ScheduleEvery, Every: "1h", Enabled: true, NextRun: &next, Anchor: next,
			Payload: tool.SchedulePayload{Text: "wake up", AgentID: "checker", SessionKey: by.SessionKey}, Owner: by}
		if err := ss.Add(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, err := ss.Get(ctx, "cron_1")
		if err != nil || got.Owner != by || got.Legacy {
			t.Fatalf("%v %+v", err, got)
		}

		// As the cron tool kept who set a schedule before.
		exec(t, st, "UPDATE schedules SET owner = ? WHERE id = ?", `{"channel":"cli","agentId":"checker","sessionKey":"agent:checker:subagent:1"}`, "cron_1")
		old, err := ss.Get(ctx, "cron_1")
		if err != nil || !old.Legacy || old.Owner.AgentID != "checker" || old.Owner.Owner || old.Owner.Subagent {
			t.Fatalf("an old schedule: %v %+v", err, old)
		}
		old.Name = "renamed"
		if ok, err := ss.Update(ctx, old, old.NextRun, nil); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if got, err := ss.Get(ctx, "cron_1"); err != nil || !got.Legacy || got.Name != "renamed" {
			t.Fatalf("an update made an old schedule's owner up: %v %+v", err, got)
		}
		old.Owner, old.Legacy = tool.Identity{Channel: "cli", Owner: true}, false
		if ok, err := ss.Update(ctx, old, old.NextRun, nil); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if got, err := ss.Get(ctx, "cron_1"); err != nil || got.Legacy || got.Owner != old.Owner {
			t.Fatalf("an old schedule given an owner: %v %+v", err, got)
		}
		// As toolbelt cron add kept a person's schedule before: the owner
		// at the command line then as now.
		exec(t, st, "UPDATE schedules SET owner = ? WHERE id = ?", `{"channel":"cli"}`, "cron_1")
		if got, err := ss.Get(ctx, "cron_1"); err != nil || got.Legacy || got.Owner != (tool.Identity{Channel: "cli", Owner: true}) {
			t.Fatalf("a person's old schedule: %v %+v", err, got)
		}
		if ok, err := ss.Update(ctx, old, old.NextRun, nil); err != nil || !ok {
			t.Fatal(ok, err)
		}
		var raw string
		if err := st.Read(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT owner FROM schedules WHERE id = ?", "cron_1").Scan(&raw)
		}); err != nil || !json.Valid([]byte(raw)) || !strings.Contains(raw, `"owner":true`) {
			t.Fatalf("owner column %q: %v", raw, err)
		}
	})
}
