package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// execSQL runs q on st, failing the test on an error.
func execSQL(t testing.TB, st *store.Store, q string, args ...any) {
	t.Helper()
	ctx := context.Background()
	if err := st.Write(ctx, func(tx *store.Tx) error { _, err := tx.Exec(ctx, q, args...); return err }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// addNode records a paired node held by gateway, heard from now by a
// gateway of the default heartbeat.
func addNode(t testing.TB, st *store.Store, id, gateway string) {
	t.Helper()
	now := time.Now()
	execSQL(t, st, "INSERT INTO nodes ("+nodeColumns+", token_sha256) VALUES (?, ?, '[\"run\"]', '{}', ?, 'owner', ?, ?, ?, 'x')",
		id, id, now.UnixNano(), gateway, now.UnixNano(), now.Add(3*DefaultHeartbeat).UnixNano())
}

// addCall records a call to node in state, created and last updated at
// created, cancelled or not.
func addCall(t *testing.T, st *store.Store, id, node, state string, created time.Time, cancel bool) {
	t.Helper()
	execSQL(t, st, "INSERT INTO node_calls (id, node_id, idem_key, capability, params, caller, state, gateway, progress, result, cancel, created_ns, updated_ns) "+
		"VALUES (?, ?, ?, 'run', '{}', '', ?, '', '', '', ?, ?, ?)", id, node, id, state, cancel, created.UnixNano(), created.UnixNano())
}

// states returns the state of each call.
func states(t *testing.T, st *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	err := st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT id, state FROM node_calls")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, state string
			if err := rows.Scan(&id, &state); err != nil {
				return err
			}
			out[id] = state
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTakeSendsOnlyLiveCallsOfNodesHeldHere: a gateway takes a node's
// queued calls only while it holds the node; a call its caller cancelled,
// or one older than takeWithin (its caller gave up), is never sent: it
// fails, having not run.
func TestTakeSendsOnlyLiveCallsOfNodesHeldHere(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := NewRegistry(st, Options{})
		addNode(t, st, "node-a", "gw#1")
		now := time.Now()
		addCall(t, st, "fresh", "node-a", queued, now, false)
		addCall(t, st, "cancelled", "node-a", queued, now, true)
		addCall(t, st, "stale", "node-a", queued, now.Add(-takeWithin-time.Second), false)

		if got, err := r.take(ctx, "node-a", "gw#2"); err != nil || len(got) != 0 {
			t.Errorf("another gateway took %+v (%v)", got, err)
		}
		if s := states(t, st); s["fresh"] != queued {
			t.Errorf("after another gateway's take: %v", s)
		}
		got, err := r.take(ctx, "node-a", "gw#1")
		if err != nil || len(got) != 1 || got[0].ID != "fresh" {
			t.Fatalf("took %+v (%v), want the fresh call only", got, err)
		}
		if s := states(t, st); s["fresh"] != running || s["cancelled"] != failed || s["stale"] != failed {
			t.Errorf("states %v", s)
		}
		res, err := r.wait(ctx, "stale", nil)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "it did not run") {
			t.Errorf("the stale call's outcome: %+v %v", res, err)
		}
	})
}

// TestHubPrunesFinishedCalls: a gateway's hub deletes the rows of calls
// that finished more than CallRetention ago, and keeps the others — a
// call still running on a node its gateway holds however old.
func TestHubPrunesFinishedCalls(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		r := NewRegistry(st, Options{Poll: 10 * time.Millisecond, Heartbeat: time.Hour})
		h := NewHub(r, HubOptions{ID: "gw"})
		addNode(t, st, "node-a", h.ID())
		old, recent := time.Now().Add(-CallRetention-time.Hour), time.Now().Add(-time.Hour)
		addCall(t, st, "old-done", "node-a", done, old, false)
		addCall(t, st, "old-failed", "node-a", failed, old, false)
		addCall(t, st, "old-interrupted", "node-a", interrupted, old, false)
		addCall(t, st, "recent-done", "node-a", done, recent, false)
		addCall(t, st, "old-running", "node-a", running, old, false)
		execSQL(t, st, "UPDATE node_calls SET gateway = ? WHERE id = 'old-running'", h.ID())
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer h.Stop(context.Background())
		for deadline := time.Now().Add(30 * time.Second); len(states(t, st)) != 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never pruned: %v", states(t, st))
			}
		}
		if s := states(t, st); s["recent-done"] != done || s["old-running"] != running {
			t.Errorf("kept %v", s)
		}
	})
}

// TestPairingLimits: one source has at most maxPendingPerSource requests
// waiting, whatever ids it claims, while others still ask; a node id
// waiting or paired cannot ask again, and its request or record stays.
func TestPairingLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := NewRegistry(st, Options{})
		var codes []string
		for i := range maxPendingPerSource {
			p, err := r.requestPairing(ctx, "node-"+string(rune('a'+i)), "x", nil, "203.0.113.9", "gw")
			if err != nil {
				t.Fatal(err)
			}
			codes = append(codes, p.Code)
		}
		var refused *pairingRefused
		_, err := r.requestPairing(ctx, "node-z", "x", nil, "203.0.113.9", "gw")
		if !errors.As(err, &refused) || refused.Permanent || !strings.Contains(err.Error(), "from this address are already waiting") {
			t.Errorf("one source's request beyond its limit: %v", err)
		}
		if _, err := r.requestPairing(ctx, "node-y", "x", nil, "198.51.100.7", "gw"); err != nil {
			t.Errorf("another source: %v", err)
		}
		_, err = r.requestPairing(ctx, "node-a", "stranger", nil, "198.51.100.7", "gw")
		if !errors.As(err, &refused) || refused.Permanent {
			t.Errorf("a waiting node's id: %v", err)
		}
		pending, err := r.Pending(ctx)
		if err != nil || len(pending) != maxPendingPerSource+1 || pending[0].Code != codes[0] || pending[0].Name != "x" {
			t.Errorf("pending %+v %v", pending, err)
		}
		p, err := r.Approve(ctx, codes[0], "owner")
		if err != nil {
			t.Fatal(err)
		}
		token, err := r.completePairing(ctx, p, []string{"run"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.requestPairing(ctx, "node-a", "stranger", nil, "198.51.100.7", "gw")
		if !errors.As(err, &refused) || !refused.Permanent || !strings.Contains(err.Error(), "is paired already") {
			t.Errorf("a paired node's id: %v", err)
		}
		if err := r.authenticate(ctx, "node-a", token); err != nil {
			t.Errorf("the paired node's token after the stranger: %v", err)
		}
	})
}

// TestSource: a connection's pairing source is its IP address, or its
// IPv6 /64.
func TestSource(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"203.0.113.9:4711":          "203.0.113.9",
		"[::ffff:203.0.113.9]:4711": "203.0.113.9",
		"[2001:db8:1:2:3::4]:80":    "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:81": "2001:db8:1:2::/64",
		"[::1]:80":                  "::1",
	} {
		if got := Source(addr); got != want {
			t.Errorf("Source(%q) = %q, want %q", addr, got, want)
		}
	}
	if Source("[2001:db8:1:3::1]:1") == "2001:db8:1:2::/64" {
		t.Error("another /64 is the same source")
	}
}

// TestInterruptOrphans: a running call is ended as interrupted, naming
// its gateway, when that gateway no longer holds its node — removed, held
// by another gateway, or not heard from for offlineAfter — and kept while
// its gateway holds the node and records its heartbeats.
func TestInterruptOrphans(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := NewRegistry(st, Options{})
		addNode(t, st, "node-live", "gw#1")
		addNode(t, st, "node-moved", "gw#2")
		addNode(t, st, "node-stale", "gw#1")
		execSQL(t, st, "UPDATE nodes SET seen_ns = ?, offline_after_ns = ? WHERE id = 'node-stale'",
			time.Now().Add(-r.offlineAfter()-time.Second).UnixNano(), r.offlineAfter().Nanoseconds())
		for id, node := range map[string]string{"live": "node-live", "moved": "node-moved", "stale": "node-stale", "removed": "node-gone"} {
			addCall(t, st, id, node, running, time.Now(), false)
		}
		addCall(t, st, "queued", "node-gone", queued, time.Now(), false)
		execSQL(t, st, "UPDATE node_calls SET gateway = 'gw#1' WHERE state = ?", running)
		if err := r.interruptOrphans(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"live": running, "moved": interrupted, "stale": interrupted, "removed": interrupted, "queued": queued}
		if s := states(t, st); !maps.Equal(s, want) {
			t.Errorf("states %v, want %v", s, want)
		}
		res, err := r.wait(ctx, "stale", nil)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "the call was interrupted: gateway gw#1, which ran it, stopped answering or lost the node") {
			t.Errorf("the stale gateway's call: %+v %v", res, err)
		}
	})
}

// TestLivenessIsTheHoldingGatewaysOwn: gateways with different heartbeats
// share one store, and each judges a node by the heartbeat of the gateway
// holding it. One with a short heartbeat neither reports a node offline
// nor interrupts its running call while the gateway holding it, with a
// long heartbeat, is within three of its own heartbeats of the last;
// one with a long heartbeat reports a short one's node offline, and ends
// its call, once that gateway is three of its own heartbeats late.
func TestLivenessIsTheHoldingGatewaysOwn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		slow := NewRegistry(st, Options{Heartbeat: time.Hour})
		quick := NewRegistry(st, Options{Heartbeat: time.Millisecond})
		addNode(t, st, "node-slow", "")
		addNode(t, st, "node-quick", "")
		if err := slow.attach(ctx, "node-slow", "gw-slow", []string{"run"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := quick.attach(ctx, "node-quick", "gw-quick", []string{"run"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := slow.beat(ctx, "node-slow", "gw-slow"); err != nil {
			t.Fatal(err)
		}
		addCall(t, st, "on-slow", "node-slow", running, time.Now(), false)
		addCall(t, st, "on-quick", "node-quick", running, time.Now(), false)
		execSQL(t, st, "UPDATE node_calls SET gateway = 'gw-slow' WHERE id = 'on-slow'")
		execSQL(t, st, "UPDATE node_calls SET gateway = 'gw-quick' WHERE id = 'on-quick'")
		// Past three of the quick gateway's heartbeats: it stopped beating.
		time.Sleep(10 * time.Millisecond)

		for _, r := range []*Registry{quick, slow} {
			n, err := r.Node(ctx, "node-slow")
			if err != nil || !n.Online || n.Gateway != "gw-slow" {
				t.Errorf("the slow gateway's node, seen by the gateway of heartbeat %s: %+v %v", r.o.Heartbeat, n, err)
			}
			n, err = r.Node(ctx, "node-quick")
			if err != nil || n.Online {
				t.Errorf("the stopped quick gateway's node, seen by the gateway of heartbeat %s: %+v %v", r.o.Heartbeat, n, err)
			}
		}
		c, err := quick.readCall(ctx, "id = ?", "on-slow")
		if err != nil {
			t.Fatal(err)
		}
		if err := quick.check(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := quick.interruptOrphans(ctx); err != nil {
			t.Fatal(err)
		}
		if s := states(t, st); s["on-slow"] != running {
			t.Errorf("the quick gateway ended the slow one's call: %v", s)
		}
		if err := slow.interruptOrphans(ctx); err != nil {
			t.Fatal(err)
		}
		if s := states(t, st); s["on-slow"] != running || s["on-quick"] != interrupted {
			t.Errorf("after the slow gateway's sweep: %v", s)
		}
	})
}

// TestLivenessOfRowsOfEarlierGateways: a node's row no gateway of this
// version has recorded a heartbeat in (no offline period) is judged as
// gateways of earlier versions judge it — offline three heartbeats of the
// reader's own after the last; a row one has is judged by its period from
// the last heartbeat, whoever recorded that one.
func TestLivenessOfRowsOfEarlierGateways(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := NewRegistry(st, Options{Heartbeat: time.Minute})
		now := time.Now()
		for id, row := range map[string]struct {
			seen    time.Time
			offline time.Duration
		}{
			"node-fresh": {seen: now.Add(-time.Minute)},
			"node-stale": {seen: now.Add(-4 * time.Minute)},
			// Held by a gateway of this version with a 10 s heartbeat, then
			// taken by an earlier one, which records heartbeats only.
			"node-taken": {seen: now.Add(-10 * time.Second), offline: 30 * time.Second},
			"node-left":  {seen: now.Add(-time.Minute), offline: 30 * time.Second},
		} {
			addNode(t, st, id, "gw-old")
			execSQL(t, st, "UPDATE nodes SET seen_ns = ?, offline_after_ns = ? WHERE id = ?", row.seen.UnixNano(), row.offline.Nanoseconds(), id)
			addCall(t, st, "on-"+id, id, running, now, false)
		}
		execSQL(t, st, "UPDATE node_calls SET gateway = 'gw-old'")
		for id, online := range map[string]bool{"node-fresh": true, "node-stale": false, "node-taken": true, "node-left": false} {
			if n, err := r.Node(ctx, id); err != nil || n.Online != online {
				t.Errorf("%s: %+v %v, want online %v", id, n, err, online)
			}
		}
		c, err := r.readCall(ctx, "id = ?", "on-node-taken")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.check(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := r.interruptOrphans(ctx); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"on-node-fresh": running, "on-node-stale": interrupted, "on-node-taken": running, "on-node-left": interrupted}
		if s := states(t, st); !maps.Equal(s, want) {
			t.Errorf("states %v, want %v", s, want)
		}
	})
}

// BenchmarkDropRemoved is a hub's look, every Poll, for the nodes the
// owner removed among those it holds: 10 held of 100 paired, none removed.
func BenchmarkDropRemoved(b *testing.B) {
	ctx := context.Background()
	st := storetest.Open(b, filepath.Join(b.TempDir(), store.DefaultFile))
	h := NewHub(NewRegistry(st, Options{}), HubOptions{ID: "gw", Logger: slog.New(slog.DiscardHandler)})
	var links []*link
	for i := range 100 {
		id := fmt.Sprintf("node-%03d", i)
		addNode(b, st, id, h.ID())
		if i%10 == 0 {
			l := &link{node: id}
			l.ready.Store(true)
			links = append(links, l)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if kept := h.dropRemoved(ctx, links); len(kept) != 10 {
			b.Fatalf("kept %d links", len(kept))
		}
	}
}

// wsConn returns the client's end of a WebSocket to a server that reads
// from it until it is closed.
func wsConn(t *testing.T) *websocket.Conn {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	c, _, err := websocket.Dial(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

// TestDropRemovedLooksAfterRemovals: a hub reads the paired nodes, to
// close the connections of those removed, only when a node was removed
// since its last look (Remove, in any process, counts each) or a
// connection is new since then; otherwise one row says nothing changed —
// a node's row deleted without Remove's count goes unnoticed until the
// next removal. A connection that became ready after the look that saw
// its node's removal is looked at too.
func TestDropRemovedLooksAfterRemovals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := NewRegistry(st, Options{})
		h := NewHub(r, HubOptions{ID: "gw", Logger: slog.New(slog.DiscardHandler)})
		newLink := func(node string) *link {
			l := &link{ws: wsConn(t), node: node}
			l.ready.Store(true)
			return l
		}
		nodesOf := func(links []*link) (out []string) {
			for _, l := range links {
				out = append(out, l.node)
			}
			return out
		}
		for _, id := range []string{"node-a", "node-b", "node-c", "node-late"} {
			addNode(t, st, id, h.ID())
		}
		links := h.dropRemoved(ctx, []*link{newLink("node-a"), newLink("node-b"), newLink("node-stranger")})
		if got := nodesOf(links); !slices.Equal(got, []string{"node-a", "node-b"}) {
			t.Fatalf("new links kept: %v", got)
		}

		execSQL(t, st, "DELETE FROM nodes WHERE id = 'node-b'")
		links = h.dropRemoved(ctx, links)
		if got := nodesOf(links); !slices.Equal(got, []string{"node-a", "node-b"}) {
			t.Errorf("with no removal counted, kept %v", got)
		}

		if _, err := r.Remove(ctx, "node-late"); err != nil {
			t.Fatal(err)
		}
		links = h.dropRemoved(ctx, links)
		if got := nodesOf(links); !slices.Equal(got, []string{"node-a"}) {
			t.Errorf("after a removal, kept %v", got)
		}

		// node-late's connection, authenticated before its removal, is
		// ready only now.
		links = h.dropRemoved(ctx, append(links, newLink("node-late"), newLink("node-c")))
		if got := nodesOf(links); !slices.Equal(got, []string{"node-a", "node-c"}) {
			t.Errorf("with new links, kept %v", got)
		}
		h.wg.Wait() // the dropped connections' close handshakes
	})
}
