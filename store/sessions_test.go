package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/store/storetest"
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
