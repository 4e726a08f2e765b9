package nodes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// fast are the registry's timings in tests: heartbeats and polls often.
var fast = nodes.Options{Heartbeat: 200 * time.Millisecond, Poll: 20 * time.Millisecond}

// gateway is a hub on its own store and HTTP server, as a toolbelt serve
// process is.
type gateway struct {
	reg *nodes.Registry
	hub *nodes.Hub
	srv *httptest.Server
}

func startGateway(t *testing.T, dsn, id string) *gateway {
	t.Helper()
	reg := nodes.NewRegistry(storetest.Open(t, dsn), fast)
	hub := nodes.NewHub(reg, nodes.HubOptions{ID: id})
	if err := hub.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := &gateway{reg: reg, hub: hub, srv: httptest.NewServer(hub)}
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
		if err != nil || len(list) != 1 || !list[0].Online || list[0].Gateway != "gw-a" || list[0].ApprovedBy != "owner" || len(list[0].Capabilities) != len(nodes.AllCapabilities) {
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
		if got, _ := a.reg.Node(ctx, id); got.Gateway != "gw-b" {
			t.Errorf("held by %q, want gw-b", got.Gateway)
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
