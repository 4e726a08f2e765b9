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

func pendingRequest(id, ws string, created time.Time) store.PendingApproval {
	return store.PendingApproval{
		ID: id, CallID: "call-" + id, Workspace: ws, Tool: "exec", Args: json.RawMessage(`{"command":"make deploy"}`),
		Caller: tool.Identity{Channel: "cron", SessionKey: "s1", Principal: "ada"}, Reason: "high-risk call",
		Always: "this exact action, in this workspace", Effects: "$ make deploy", Created: created, Expires: created.Add(5 * time.Minute),
	}
}

// TestPending: requests are added, read back whole, listed waiting first
// and newest first, and decided once.
func TestPending(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		q := st.Pending()
		t0 := time.Now().Add(-time.Minute)
		for i, id := range []string{"a", "b", "c"} {
			ws := "/ws/one"
			if id == "c" {
				ws = "/ws/two"
			}
			if err := q.Add(ctx, pendingRequest(id, ws, t0.Add(time.Duration(i)*time.Second))); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Add(ctx, pendingRequest("a", "/ws/one", t0)); err == nil {
			t.Fatal("the same id added twice")
		}
		got, err := q.Get(ctx, "a")
		want := pendingRequest("a", "/ws/one", t0)
		want.State = store.PendingWaiting
		if err != nil || got.CallID != want.CallID || string(got.Args) != string(want.Args) || got.Caller != want.Caller ||
			got.Always != want.Always || got.Effects != want.Effects || got.State != want.State || !got.Expires.Equal(want.Expires) {
			t.Fatalf("Get: %+v, %v; want %+v", got, err, want)
		}
		if _, err := q.Get(ctx, "nope"); !errors.Is(err, store.ErrNoPending) {
			t.Fatalf("Get of an unknown id: %v", err)
		}

		if err := q.Decide(ctx, "a", store.PendingDecision{Allow: true, Grant: store.GrantSession, By: "console (ada)"}); err != nil {
			t.Fatal(err)
		}
		err = q.Decide(ctx, "a", store.PendingDecision{Reason: "changed my mind", By: "console (bob)"})
		if !errors.Is(err, store.ErrDecided) || !strings.Contains(err.Error(), "allowed by console (ada)") {
			t.Fatalf("deciding twice: %v", err)
		}
		if err := q.Decide(ctx, "b", store.PendingDecision{Allow: true, Grant: "forever"}); err == nil {
			t.Fatal("an unknown grant was accepted")
		}
		if err := q.Decide(ctx, "b", store.PendingDecision{Reason: "not on Fridays", By: "console (bob)"}); err != nil {
			t.Fatal(err)
		}
		a, _ := q.Get(ctx, "a")
		b, _ := q.Get(ctx, "b")
		if a.State != store.PendingAllowed || a.Grant != store.GrantSession || a.By != "console (ada)" || a.Decided.IsZero() {
			t.Errorf("allowed: %+v", a)
		}
		if b.State != store.PendingDenied || b.DenyReason != "not on Fridays" || b.By != "console (bob)" {
			t.Errorf("denied: %+v", b)
		}

		list, err := q.List(ctx, store.PendingFilter{})
		if err != nil || ids(list) != "c b a" {
			t.Fatalf("List: %s, %v; want c (waiting), then b, a (newest first)", ids(list), err)
		}
		for _, tt := range []struct {
			f    store.PendingFilter
			want string
		}{
			{store.PendingFilter{Workspace: "/ws/one"}, "b a"},
			{store.PendingFilter{State: store.PendingWaiting}, "c"},
			{store.PendingFilter{State: store.PendingDenied}, "b"},
			{store.PendingFilter{Limit: 2}, "c b"},
		} {
			if list, err := q.List(ctx, tt.f); err != nil || ids(list) != tt.want {
				t.Errorf("List(%+v): %s, %v; want %s", tt.f, ids(list), err, tt.want)
			}
		}
	})
}

// TestPendingExpiry: a request past its expiry reads as expired, cannot
// be decided, and Await marks it expired; a cancelled one cannot be
// decided either.
func TestPendingExpiry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		c := newClock()
		st.SetClock(c.Now)
		q := st.Pending()
		for _, id := range []string{"late", "waited", "gone"} {
			if err := q.Add(ctx, pendingRequest(id, "/ws", c.Now())); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Cancel(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		if err := q.Decide(ctx, "gone", store.PendingDecision{Allow: true, By: "console"}); !errors.Is(err, store.ErrDecided) || !strings.Contains(err.Error(), "cancelled") {
			t.Fatalf("deciding a cancelled request: %v", err)
		}
		c.Advance(5*time.Minute + time.Second)
		if p, err := q.Get(ctx, "late"); err != nil || p.State != store.PendingExpired {
			t.Fatalf("past its expiry: %q, %v", p.State, err)
		}
		if err := q.Decide(ctx, "late", store.PendingDecision{Allow: true, By: "console"}); !errors.Is(err, store.ErrExpired) {
			t.Fatalf("deciding after expiry: %v", err)
		}
		p, err := q.Await(ctx, "waited")
		if err != nil || p.State != store.PendingExpired {
			t.Fatalf("Await past its expiry: %+v, %v", p, err)
		}
		// Marked so: it stays expired with the clock put back.
		c.Advance(-time.Hour)
		if p, err := q.Get(ctx, "waited"); err != nil || p.State != store.PendingExpired {
			t.Fatalf("after Await: %q, %v", p.State, err)
		}
		if err := q.Decide(ctx, "waited", store.PendingDecision{Allow: true, By: "console"}); !errors.Is(err, store.ErrExpired) {
			t.Fatalf("deciding after Await expired it: %v", err)
		}
		if list, err := q.List(ctx, store.PendingFilter{State: store.PendingWaiting}); err != nil || ids(list) != "late" {
			t.Fatalf("waiting with the clock put back: %s, %v", ids(list), err)
		}
	})
}

// TestPendingAcrossStores: two handles on one database, as two processes
// have, see each other's requests; Await in one returns when the other
// decides, and ends with its context.
func TestPendingAcrossStores(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		caller, console := storetest.Open(t, dsn).Pending(), storetest.Open(t, dsn).Pending()
		if err := caller.Add(ctx, pendingRequest("x", "/ws", time.Now())); err != nil {
			t.Fatal(err)
		}
		if list, err := console.List(ctx, store.PendingFilter{State: store.PendingWaiting}); err != nil || ids(list) != "x" {
			t.Fatalf("the other store lists %s, %v", ids(list), err)
		}
		done := make(chan store.PendingApproval)
		go func() {
			p, err := caller.Await(ctx, "x")
			if err != nil {
				t.Error(err)
			}
			done <- p
		}()
		if err := console.Decide(ctx, "x", store.PendingDecision{Allow: true, Grant: store.GrantWorkspace, By: "console (ada)"}); err != nil {
			t.Fatal(err)
		}
		if p := <-done; p.State != store.PendingAllowed || p.Grant != store.GrantWorkspace || p.By != "console (ada)" {
			t.Fatalf("Await returned %+v", p)
		}

		if err := caller.Add(ctx, pendingRequest("y", "/ws", time.Now())); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := caller.Await(cctx, "y"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Await with its context ended: %v", err)
		}
	})
}

// TestConsoleHeartbeat: a console is live while it beat within
// ConsoleLive, seen from another handle.
func TestConsoleHeartbeat(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		c := newClock()
		serve, run := storetest.Open(t, dsn), storetest.Open(t, dsn)
		serve.SetClock(c.Now)
		run.SetClock(c.Now)
		if url, ok, err := run.Pending().Console(ctx); err != nil || ok || url != "" {
			t.Fatalf("before any beat: %q %v %v", url, ok, err)
		}
		if err := serve.Pending().Beat(ctx, "http://127.0.0.1:7777"); err != nil {
			t.Fatal(err)
		}
		if url, ok, err := run.Pending().Console(ctx); err != nil || !ok || url != "http://127.0.0.1:7777" {
			t.Fatalf("after a beat: %q %v %v", url, ok, err)
		}
		c.Advance(store.ConsoleLive)
		if url, ok, err := run.Pending().Console(ctx); err != nil || ok || url != "http://127.0.0.1:7777" {
			t.Fatalf("a beat %s old: %q %v %v", store.ConsoleLive, url, ok, err)
		}
	})
}

func ids(ps []store.PendingApproval) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return strings.Join(out, " ")
}
