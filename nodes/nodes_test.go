package nodes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// fast are the registry's timings in tests: heartbeats and polls often.
var fast = nodes.Options{Heartbeat: 200 * time.Millisecond, Poll: 20 * time.Millisecond}

// gateway is a hub on its own store and HTTP server, as a toolbelt serve
// process is.
type gateway struct {
	st  *store.Store
	reg *nodes.Registry
	hub *nodes.Hub
	srv *httptest.Server
	log *syncbuf.Buffer // what the hub logs
}

func startGateway(t *testing.T, dsn, id string) *gateway {
	t.Helper()
	return startGatewayWith(t, dsn, id, fast)
}

// startGatewayWith is startGateway with the registry's options o.
func startGatewayWith(t *testing.T, dsn, id string, o nodes.Options) *gateway {
	t.Helper()
	st := storetest.Open(t, dsn)
	reg := nodes.NewRegistry(st, o)
	log := &syncbuf.Buffer{}
	hub := nodes.NewHub(reg, nodes.HubOptions{ID: id, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err := hub.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := &gateway{st: st, reg: reg, hub: hub, srv: httptest.NewServer(hub), log: log}
	t.Cleanup(g.stop)
	return g
}

// stop stops the gateway: its nodes' connections end.
func (g *gateway) stop() {
	_ = g.hub.Stop(context.Background())
	g.srv.Close()
}

// node is a Client running until the test ends (or stop).
type node struct {
	said            chan string
	runs, cancelled atomic.Int32
	// block, when set, makes run wait for it (or the call's end).
	block chan struct{}
	stop  context.CancelFunc
	done  chan error
	state string
}

func startNode(t *testing.T, state string, gateways ...string) *node {
	t.Helper()
	n := &node{said: make(chan string, 100), state: state}
	c := &nodes.Client{
		Gateways: gateways, StateDir: state, Name: "lab", Capabilities: nodes.AllCapabilities,
		Say: func(f string, a ...any) {
			t.Logf("node: "+f, a...)
			select {
			case n.said <- fmt.Sprintf(f, a...):
			default:
			}
		},
		Heartbeat: fast.Heartbeat, MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
		Handle: func(ctx context.Context, capability string, params json.RawMessage, progress func(string)) tool.Result {
			n.runs.Add(1)
			progress("starting " + capability)
			if n.block != nil {
				select {
				case <-n.block:
				case <-ctx.Done():
					n.cancelled.Add(1)
					return tool.Errorf("cancelled")
				}
			}
			return tool.Textf("%s ran %s", capability, params)
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.stop, n.done = cancel, make(chan error, 1)
	go func() { n.done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-n.done })
	return n
}

// await waits for what n says to contain want, and returns it.
func (n *node) await(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s := <-n.said:
			if strings.Contains(s, want) {
				return s
			}
		case err := <-n.done:
			n.done <- err // for the cleanup
			t.Fatalf("the node stopped (%v) before saying %q", err, want)
		case <-timeout:
			t.Fatalf("the node did not say %q", want)
		}
	}
}

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pair starts a node on gateways and approves its code through reg.
func pair(t *testing.T, reg *nodes.Registry, gateways ...string) *node {
	t.Helper()
	n := startNode(t, t.TempDir(), gateways...)
	said := n.await(t, "pairing code ")
	code := strings.Fields(strings.TrimPrefix(said, "pairing code "))[0]
	code = strings.TrimSuffix(code, ":")
	pending, err := reg.Pending(context.Background())
	if err != nil || len(pending) != 1 || pending[0].Code != code || pending[0].Name != "lab" {
		t.Fatalf("pending %+v %v; the node said %q", pending, err, said)
	}
	if _, err := reg.Approve(context.Background(), strings.ToLower(strings.ReplaceAll(code, "-", "")), "owner"); err != nil {
		t.Fatal(err)
	}
	n.await(t, "connected to ")
	return n
}

// TestNodesAcrossGateways: a node pairs through one gateway with a code the
// owner approves from another process on the store, runs calls that any
// process queues (progress streamed, an idempotency key running a call
// once), moves to the other gateway when its own stops, and is offline —
// failing calls at once with when it was last seen — once it stops.
func TestNodesAcrossGateways(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		a, b := startGateway(t, dsn, "gw-a"), startGateway(t, dsn, "gw-b")
		n := pair(t, b.reg, a.srv.URL, b.srv.URL)
		ctx := context.Background()
		list, err := b.reg.Nodes(ctx)
		if err != nil || len(list) != 1 || !list[0].Online || list[0].Gateway != a.hub.ID() || list[0].ApprovedBy != "owner" || len(list[0].Capabilities) != len(nodes.AllCapabilities) {
			t.Fatalf("nodes: %+v %v", list, err)
		}
		id := list[0].ID
		st, err := os.ReadFile(filepath.Join(n.state, "node.json"))
		if err != nil || !strings.Contains(string(st), `"token": "tbn_`) {
			t.Fatalf("the node's state: %s %v", st, err)
		}
		if info, _ := os.Stat(filepath.Join(n.state, "node.json")); info.Mode().Perm() != 0o600 {
			t.Errorf("node.json is %v, want 0600", info.Mode().Perm())
		}

		// Gateway b queues; gateway a, which holds the node, runs it.
		var progress []string
		res, err := b.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"date"}`), IdempotencyKey: "k1"},
			func(s string) { progress = append(progress, s) })
		if err != nil || res.IsError || res.Content[0].Text != `run ran {"command":"date"}` {
			t.Fatalf("invoke: %+v %v", res, err)
		}
		if strings.Join(progress, "|") != "starting run" {
			t.Errorf("progress %q", progress)
		}
		// A retry with its key is the same call: it does not run again.
		again, err := a.reg.Invoke(ctx, nodetool.Request{Node: id, Capability: "run", Params: json.RawMessage(`{ "command": "date" }`), IdempotencyKey: "k1"}, nil)
		if err != nil || again.Content[0].Text != res.Content[0].Text || n.runs.Load() != 1 {
			t.Fatalf("retry: %+v %v, runs %d", again, err, n.runs.Load())
		}
		_, err = a.reg.Invoke(ctx, nodetool.Request{Node: id, Capability: "run", Params: json.RawMessage(`{"command":"rm -rf /"}`), IdempotencyKey: "k1"}, nil)
		var refused *nodetool.Refused
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), `the idempotency key "k1" was used for another call`) {
			t.Errorf("another call with the key: %v", err)
		}
		// The same key from another session is another call: it runs, and
		// never sees the first one's result.
		other, err := a.reg.Invoke(ctx, nodetool.Request{Node: id, Capability: "run", Params: json.RawMessage(`{"command":"date"}`), IdempotencyKey: "k1", Scope: "another session"}, nil)
		if err != nil || other.IsError || n.runs.Load() != 2 {
			t.Errorf("the same key in another scope: %+v %v, runs %d (want 2)", other, err, n.runs.Load())
		}
		_, err = a.reg.Invoke(ctx, nodetool.Request{Node: "nobody", Capability: "run"}, nil)
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "the paired nodes are lab ("+id+")") {
			t.Errorf("an unknown node: %v", err)
		}

		// Gateway a stops: the node moves to b, and calls still run.
		a.stop()
		n.await(t, "connected to gw-b")
		res, err = a.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "read", Params: json.RawMessage(`{"path":"x"}`)}, nil)
		if err != nil || res.Content[0].Text != `read ran {"path":"x"}` {
			t.Fatalf("invoke after the move: %+v %v", res, err)
		}
		if got, _ := a.reg.Node(ctx, id); got.Gateway != b.hub.ID() {
			t.Errorf("held by %q, want %s", got.Gateway, b.hub.ID())
		}

		// The node stops: a call fails at once, saying when it was seen.
		n.stop()
		<-n.done
		n.done <- nil
		eventually(t, "the node is offline", func() bool { got, _ := b.reg.Node(ctx, id); return !got.Online })
		_, err = b.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "status"}, nil)
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "node lab is offline: last seen ") {
			t.Errorf("an offline node: %v", err)
		}
		// The outcome of a finished call is still answered by its key.
		again, err = b.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"date"}`), IdempotencyKey: "k1"}, nil)
		if err != nil || again.Content[0].Text != `run ran {"command":"date"}` {
			t.Errorf("a finished call's retry while offline: %+v %v", again, err)
		}
	})
}

// TestNodeLostMidCall: a call whose node goes away while it runs is
// reported interrupted, never done; a call cancelled by its caller is
// cancelled on the node.
func TestNodeLostMidCall(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGateway(t, dsn, "gw")
		n := pair(t, g.reg, g.srv.URL)
		n.block = make(chan struct{})
		ctx := context.Background()

		cctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := g.reg.Invoke(cctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"sleep 100"}`)}, func(s string) {
				if s == "starting run" {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled call: %v", err)
			}
		}()
		wg.Wait()
		eventually(t, "the node saw the cancel", func() bool { return n.cancelled.Load() == 1 })

		got := make(chan tool.Result, 1)
		go func() {
			res, err := g.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"sleep 100"}`)}, func(s string) {
				if s == "starting run" {
					n.stop() // the node goes away mid-call
				}
			})
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		res := <-got
		if !res.IsError || !strings.Contains(res.Content[0].Text, "the call was interrupted") {
			t.Errorf("a call whose node left: %+v", res)
		}
	})
}

// TestUnpairedNodeRefused: a node whose token the store does not know is
// refused and stops; so is one whose pairing the owner rejects.
func TestUnpairedNodeRefused(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGateway(t, dsn, "gw")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "node.json"), []byte(`{"id":"node-forged","name":"x","token":"tbn_guess"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		n := startNode(t, dir, g.srv.URL)
		var refused *nodes.RefusedError
		if err := <-n.done; !errors.As(err, &refused) || !strings.Contains(err.Error(), "not paired with the gateway, or its token is wrong") {
			t.Fatalf("a forged token: %v", err)
		}
		n.done <- nil

		n = startNode(t, t.TempDir(), g.srv.URL)
		code := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(n.await(t, "pairing code "), "pairing code "))[0], ":")
		if _, err := g.reg.Reject(context.Background(), code, "owner"); err != nil {
			t.Fatal(err)
		}
		if err := <-n.done; !errors.As(err, &refused) || !strings.Contains(err.Error(), "rejected") {
			t.Fatalf("a rejected node: %v", err)
		}
		n.done <- nil
		if list, _ := g.reg.Nodes(context.Background()); len(list) != 0 {
			t.Errorf("paired: %+v", list)
		}
		if _, err := g.reg.Approve(context.Background(), code, "owner"); err == nil || !strings.Contains(err.Error(), "no pairing request with code "+code+" is waiting") {
			t.Errorf("approving a rejected code: %v", err)
		}
	})
}

// exec runs the statement q on g's store (a test breaking or mending it).
func (g *gateway) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	ctx := context.Background()
	if err := g.st.Write(ctx, func(tx *store.Tx) error { _, err := tx.Exec(ctx, q, args...); return err }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// runningCall returns the id of the call running on a node (the only one).
func (g *gateway) runningCall(t *testing.T) string {
	t.Helper()
	var id string
	eventually(t, "a call runs", func() bool {
		ctx := context.Background()
		return g.st.Read(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT id FROM node_calls WHERE state = 'running'").Scan(&id)
		}) == nil
	})
	return id
}

// TestStoreErrorIsTryAgainLater: a gateway whose store fails while it
// checks a node's token closes the connection with 1013 (try again later),
// not 1008, saying nothing of the database (it logs that); the node tries
// again with backoff instead of giving up, and connects once the store
// answers.
func TestStoreErrorIsTryAgainLater(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGateway(t, dsn, "gw")
		n := pair(t, g.reg, g.srv.URL)
		n.stop()
		<-n.done
		n.done <- nil

		g.exec(t, "ALTER TABLE nodes RENAME TO nodes_away")
		again := startNode(t, n.state, g.srv.URL)
		said := again.await(t, "cannot take the node now")
		if !strings.Contains(said, "(the gateway cannot reach its store now: try again later)") || strings.Contains(said, "table") {
			t.Errorf("the node was told %q", said)
		}
		again.await(t, "cannot take the node now") // it tries again, and again
		if !strings.Contains(g.log.String(), "checking a node's token failed") {
			t.Errorf("the gateway did not log the store's error:\n%s", g.log.String())
		}
		g.exec(t, "ALTER TABLE nodes_away RENAME TO nodes")
		again.await(t, "connected to ")
	})
}

// TestGatewayIDsAreTheirOwn: two hubs made with one ID (one configuration
// on one host) name themselves apart in the store.
func TestGatewayIDsAreTheirOwn(t *testing.T) {
	t.Parallel()
	reg := nodes.NewRegistry(storetest.Open(t, filepath.Join(t.TempDir(), store.DefaultFile)), fast)
	a, b := nodes.NewHub(reg, nodes.HubOptions{ID: "host:7420"}), nodes.NewHub(reg, nodes.HubOptions{ID: "host:7420"})
	if a.ID() == b.ID() || !strings.HasPrefix(a.ID(), "host:7420#") || !strings.HasPrefix(b.ID(), "host:7420#") {
		t.Errorf("the ids %q and %q", a.ID(), b.ID())
	}
}

// TestCheckTransport: plain ws:// (or http://) is refused for another
// machine, and fine for this machine's loopback; wss:// always is.
func TestCheckTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url      string
		insecure bool
	}{
		{"http://127.0.0.1:7420", false},
		{"ws://localhost:7420/nodes/ws", false},
		{"http://[::1]:7420", false},
		{"127.0.0.2:7420", false},
		{"https://gw.example.com", false},
		{"wss://10.0.0.1:7420", false},
		{"http://10.0.0.1:7420", true},
		{"ws://gw.example.com:7420", true},
		{"gw.example.com:7420", true},
		{"http://127.0.0.1.example.com", true},
	} {
		err := nodes.CheckTransport(tc.url)
		if got := errors.Is(err, nodes.ErrInsecure); got != tc.insecure {
			t.Errorf("%s: %v, want insecure %v", tc.url, err, tc.insecure)
		}
	}
	if err := nodes.CheckTransport("ftp://gw"); err == nil || errors.Is(err, nodes.ErrInsecure) {
		t.Errorf("ftp://: %v", err)
	}
}

// rawNode is a node's WebSocket driven by hand, as a stranger's would be.
type rawNode struct{ ws *websocket.Conn }

func dialNode(t *testing.T, g *gateway, hello map[string]any) *rawNode {
	t.Helper()
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, strings.Replace(g.srv.URL, "http", "ws", 1)+nodes.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	hello["type"], hello["version"] = "hello", nodes.ProtocolVersion
	if err := wsjson.Write(ctx, ws, hello); err != nil {
		t.Fatal(err)
	}
	return &rawNode{ws}
}

// read reads the gateway's next message, or its close.
func (r *rawNode) read(t *testing.T) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard against hanging
	defer cancel()
	var m map[string]any
	err := wsjson.Read(ctx, r.ws, &m)
	return m, err
}

// TestStrangerCannotTakeANodesPlace: a hello without a token that names a
// node waiting to pair leaves that node's request in place (the stranger
// is told to try later), and one naming a paired node is refused without
// touching it; the node pairs, and reconnects, as before.
func TestStrangerCannotTakeANodesPlace(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGateway(t, dsn, "gw")
		ctx := context.Background()
		n := startNode(t, t.TempDir(), g.srv.URL)
		code := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(n.await(t, "pairing code "), "pairing code "))[0], ":")
		id, err := nodes.LoadIdentity(n.state, "")
		if err != nil {
			t.Fatal(err)
		}
		stranger := dialNode(t, g, map[string]any{"node": id.ID, "name": "lab"})
		_, err = stranger.read(t)
		if websocket.CloseStatus(err) != websocket.StatusTryAgainLater || !strings.Contains(err.Error(), "is waiting already") {
			t.Errorf("a stranger's hello with a waiting node's id: %v", err)
		}
		if p, err := g.reg.Pending(ctx); err != nil || len(p) != 1 || p[0].Code != code {
			t.Fatalf("the requests waiting: %+v %v", p, err)
		}
		if _, err := g.reg.Approve(ctx, code, "owner"); err != nil {
			t.Fatal(err)
		}
		n.await(t, "connected to ")

		stranger = dialNode(t, g, map[string]any{"node": id.ID, "name": "lab"})
		_, err = stranger.read(t)
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), "is paired already") {
			t.Errorf("a stranger's hello with a paired node's id: %v", err)
		}
		if p, _ := g.reg.Pending(ctx); len(p) != 0 {
			t.Errorf("the stranger's request waits: %+v", p)
		}
		if res, err := g.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "status"}, nil); err != nil || res.IsError {
			t.Errorf("the paired node after the stranger: %+v %v", res, err)
		}
		n.stop()
		<-n.done
		n.done <- nil
		startNode(t, n.state, g.srv.URL).await(t, "connected to ") // its token still admits it

		bad := dialNode(t, g, map[string]any{"node": "../../x y"})
		if _, err := bad.read(t); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("a node id with slashes and spaces: %v", err)
		}
	})
}

// TestAnswersOnlyFromTheCallsNode: progress and a result a node sends for
// a call sent to another node are ignored (and logged); the call gets its
// own node's answer.
func TestAnswersOnlyFromTheCallsNode(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		// Heartbeats slower than fast: the node's call must not be cut by
		// a reconnection on a busy machine.
		g := startGatewayWith(t, dsn, "gw", nodes.Options{Heartbeat: 2 * time.Second, Poll: fast.Poll})
		ctx := context.Background()
		n := pair(t, g.reg, g.srv.URL)
		n.block = make(chan struct{})

		// Another node, paired by hand.
		other := dialNode(t, g, map[string]any{"node": "node-other", "name": "other"})
		m, err := other.read(t)
		if err != nil || m["type"] != "pairing" {
			t.Fatalf("pairing: %v %v", m, err)
		}
		if _, err := g.reg.Approve(ctx, m["code"].(string), "owner"); err != nil {
			t.Fatal(err)
		}
		if m, err = other.read(t); err != nil || m["type"] != "paired" {
			t.Fatalf("paired: %v %v", m, err)
		}
		other = dialNode(t, g, map[string]any{"node": "node-other", "name": "other", "token": m["token"], "capabilities": []string{"status"}})
		if m, err = other.read(t); err != nil || m["type"] != "welcome" {
			t.Fatalf("welcome: %v %v", m, err)
		}
		other.ws.CloseRead(ctx) // it answers the gateway's heartbeats from now on

		got := make(chan tool.Result, 1)
		var progress []string
		go func() {
			res, err := g.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"make"}`)}, func(s string) { progress = append(progress, s) })
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		call := g.runningCall(t)
		for _, forged := range []map[string]any{
			{"type": "progress", "id": call, "text": "forged progress"},
			{"type": "result", "id": call, "result": map[string]any{"content": []map[string]any{{"type": "text", "text": "forged result"}}}},
		} {
			if err := wsjson.Write(ctx, other.ws, forged); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, "the gateway ignored the other node's answers", func() bool {
			return strings.Count(g.log.String(), "ignored a node's answer to a call not sent to it") == 2
		})
		close(n.block)
		res := <-got
		if res.IsError || res.Content[0].Text != `run ran {"command":"make"}` || slices.Contains(progress, "forged progress") {
			t.Errorf("the call's result %+v, progress %q", res, progress)
		}
	})
}

// TestRemovedNodeMustPairAgain: the owner removes a node while a call runs
// on it: the call is interrupted, the gateway closes the node's
// connection, and the node, refused, stops; it is no longer listed.
func TestRemovedNodeMustPairAgain(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGateway(t, dsn, "gw")
		ctx := context.Background()
		n := pair(t, g.reg, g.srv.URL)
		n.block = make(chan struct{})
		got := make(chan tool.Result, 1)
		go func() {
			res, err := g.reg.Invoke(ctx, nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"make"}`)}, nil)
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		g.runningCall(t)
		removed, err := g.reg.Remove(ctx, "lab")
		if err != nil || removed.Name != "lab" {
			t.Fatalf("remove: %+v %v", removed, err)
		}
		if res := <-got; !res.IsError || !strings.Contains(res.Content[0].Text, "the call was interrupted: the owner removed node lab") {
			t.Errorf("the running call: %+v", res)
		}
		var refused *nodes.RefusedError
		if err := <-n.done; !errors.As(err, &refused) || !strings.Contains(err.Error(), "the owner removed this node") {
			t.Errorf("the removed node: %v", err)
		}
		n.done <- nil
		if list, err := g.reg.Nodes(ctx); err != nil || len(list) != 0 {
			t.Errorf("nodes: %+v %v", list, err)
		}
		var nope *nodetool.Refused
		if _, err := g.reg.Remove(ctx, "lab"); !errors.As(err, &nope) {
			t.Errorf("removing it again: %v", err)
		}
	})
}

// refusedWithin waits for n to stop, refused for why.
func (n *node) refusedWithin(t *testing.T, why string) {
	t.Helper()
	select {
	case err := <-n.done:
		n.done <- nil // for the cleanup
		var refused *nodes.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), why) {
			t.Fatalf("the node stopped with %v, want a refusal saying %q", err, why)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the node was not refused (%q)", why)
	}
}

// TestRemovedNodeClosedAtOnce: removing a node closes its connection at
// once, not at the gateway's next heartbeat (an hour away here): removed
// by another process on the store (toolbelt nodes remove), the gateway
// holding it sees that at its next look at the store; removed through the
// gateway's own registry (the console), its hub is told.
func TestRemovedNodeClosedAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		g := startGatewayWith(t, dsn, "gw", nodes.Options{Heartbeat: time.Hour, Poll: fast.Poll})
		cli := nodes.NewRegistry(storetest.Open(t, dsn), fast)
		for _, reg := range []*nodes.Registry{cli, g.reg} {
			n := pair(t, g.reg, g.srv.URL)
			if _, err := reg.Remove(context.Background(), "lab"); err != nil {
				t.Fatal(err)
			}
			n.refusedWithin(t, "the owner removed this node")
		}
		if !strings.Contains(g.log.String(), "closing a removed node's connection") {
			t.Errorf("the gateway's log:\n%s", g.log)
		}
	})
}

// TestCallsOfADeadGatewayEnd: a gateway dies (here it loses its store, so
// it records nothing more, as a killed process does) while a call runs on
// its node, and the call's caller dies with it. Another gateway on the
// store ends the call, left running, as interrupted, naming the dead
// gateway, once its heartbeats are past the stale bound; a retry with the
// call's idempotency key gets that answer, and the call did not run again.
func TestCallsOfADeadGatewayEnd(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		a, b := startGateway(t, dsn, "gw-a"), startGateway(t, dsn, "gw-b")
		n := pair(t, a.reg, a.srv.URL)
		n.block = make(chan struct{})
		req := nodetool.Request{Node: "lab", Capability: "run", Params: json.RawMessage(`{"command":"make"}`), IdempotencyKey: "k1"}
		ended := make(chan error, 1)
		go func() { _, err := a.reg.Invoke(context.Background(), req, nil); ended <- err }()
		id := a.runningCall(t)
		if err := a.st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-ended; err == nil {
			t.Error("the dead gateway's caller got a result")
		}
		eventually(t, "the dead gateway's call ends", func() bool { return b.callState(t, id) != "running" })
		if s := b.callState(t, id); s != "interrupted" {
			t.Fatalf("the call's state: %s", s)
		}
		res, err := b.reg.Invoke(context.Background(), req, nil)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "the call was interrupted: gateway "+a.hub.ID()+", which ran it, stopped answering") {
			t.Errorf("the retry: %+v %v", res, err)
		}
		if runs := n.runs.Load(); runs != 1 {
			t.Errorf("the node ran the call %d times", runs)
		}
	})
}

// callState returns the state of the call id.
func (g *gateway) callState(t *testing.T, id string) string {
	t.Helper()
	ctx := context.Background()
	var state string
	if err := g.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT state FROM node_calls WHERE id = ?", id).Scan(&state)
	}); err != nil {
		t.Fatal(err)
	}
	return state
}
