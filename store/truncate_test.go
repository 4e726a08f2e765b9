package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// TestTruncateSession: Truncate keeps a session's first messages and
// deletes the rest (another session's stay), says how many it deleted,
// lets the transcript go on after what it kept, and refuses a running
// session, one the store does not hold and a negative count, changing
// nothing.
func TestTruncateSession(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ss := st.Sessions()
		msgs := func(n int, text string) []store.SessionMessage {
			var out []store.SessionMessage
			for i := range n {
				out = append(out, store.SessionMessage{Role: "user", Body: json.RawMessage(fmt.Sprintf(`{"text":"%s %d"}`, text, i+1))})
			}
			return out
		}
		texts := func(id string) []string {
			t.Helper()
			got, err := ss.Messages(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range got {
				var b struct{ Text string }
				if err := json.Unmarshal(m.Body, &b); err != nil {
					t.Fatal(err)
				}
				out = append(out, b.Text)
			}
			return out
		}
		for id, n := range map[string]int{"s1": 5, "other": 3} {
			if err := ss.Append(ctx, id, "/ws", "m", msgs(n, id)); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := ss.Truncate(ctx, "s1", 2); err != nil || n != 3 {
			t.Fatalf("truncate to 2: %d deleted, %v", n, err)
		}
		if got := fmt.Sprint(texts("s1")); got != "[s1 1 s1 2]" {
			t.Errorf("kept %s", got)
		}
		if info, err := ss.Info(ctx, "s1"); err != nil || info.Messages != 2 {
			t.Errorf("info after the truncation: %v %+v", err, info)
		}
		if got := len(texts("other")); got != 3 {
			t.Errorf("the other session has %d messages", got)
		}
		if n, err := ss.Truncate(ctx, "s1", 9); err != nil || n != 0 {
			t.Errorf("keeping more than there is: %d deleted, %v", n, err)
		}
		if err := ss.Append(ctx, "s1", "/ws", "m", msgs(1, "next")); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(texts("s1")); got != "[s1 1 s1 2 next 1]" {
			t.Errorf("after an append: %s", got)
		}
		for _, bad := range []struct {
			id   string
			keep int
			want error
		}{{"missing", 0, store.ErrNoSession}, {"busy", 0, store.ErrSessionRunning}, {"s1", -1, nil}} {
			if bad.id == "busy" {
				if err := ss.Start(ctx, store.SessionStart{ID: "busy", Workspace: "/ws", Model: "m"}); err != nil {
					t.Fatal(err)
				}
				if err := ss.Append(ctx, "busy", "/ws", "m", msgs(2, "busy")); err != nil {
					t.Fatal(err)
				}
			}
			n, err := ss.Truncate(ctx, bad.id, bad.keep)
			if err == nil || bad.want != nil && !errors.Is(err, bad.want) || n != 0 {
				t.Errorf("truncating %s to %d: %d deleted, %v; want %v", bad.id, bad.keep, n, err, bad.want)
			}
		}
		if got := len(texts("busy")); got != 2 {
			t.Errorf("the running session has %d messages", got)
		}
		if got := len(texts("s1")); got != 3 {
			t.Errorf("a refused truncation left %d messages", got)
		}
		if n, err := ss.Truncate(ctx, "s1", 0); err != nil || n != 3 || len(texts("s1")) != 0 {
			t.Errorf("truncate to 0: %d deleted, %v", n, err)
		}
	})
}
