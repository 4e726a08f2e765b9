package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/tool"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// nodeCmd runs this machine as a node of a gateway.
type nodeCmd struct {
	workspaceFlags
	Gateway  []string `required:"" help:"The gateway's URL (toolbelt serve's, e.g. http://HOST:7420); repeat it for gateways sharing one PostgreSQL store: the node connects to the first that answers, and moves to the next when it goes." placeholder:"URL"`
	Name     string   `help:"The node's name, shown to the owner (default: the host name)."`
	State    string   `help:"Directory of the node's identity and token (default: node/ in the data directory)." placeholder:"DIR"`
	Pair     bool     `help:"Forget the node's token and ask the gateway to pair it again."`
	Offer    []string `help:"The capabilities to offer (default: all of run, notify, read, write, status)." placeholder:"CAP,…"`
	Insecure bool     `help:"Allow a gateway on another machine over plain http:// or ws:// (unencrypted: its token and calls can be read on the way); use it only on a network you trust. wss:// (https://) and this machine's loopback need no flag."`
}

func (c *nodeCmd) Run(e *env) error {
	if !c.Insecure {
		for _, g := range c.Gateway {
			switch err := nodes.CheckTransport(g); {
			case errors.Is(err, nodes.ErrInsecure):
				return fmt.Errorf("--gateway %v: use wss:// (https://, a TLS proxy in front of toolbelt serve), or pass --insecure on a network you trust", err)
			case err != nil:
				return fmt.Errorf("--gateway %q: %w", g, err)
			}
		}
	}
	for _, o := range c.Offer {
		if !slices.Contains(nodes.AllCapabilities, o) {
			return fmt.Errorf("--offer %s: not a capability; use some of %s", o, strings.Join(nodes.AllCapabilities, ", "))
		}
	}
	offer := c.Offer
	if len(offer) == 0 {
		offer = nodes.AllCapabilities
	}
	state, err := c.stateDir(e)
	if err != nil {
		return err
	}
	if c.Pair {
		if err := os.Remove(filepath.Join(state, "node.json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	ws, tb, err := c.root(e, pipelineRoot)
	if err != nil {
		return err
	}
	// Calls from the gateway run as the gateway's, never as this
	// machine's owner: the node's own policy and approvals decide.
	tc, err := tb.Context(tool.Identity{Workspace: ws, Channel: "node", Principal: "gateway"})
	if err != nil {
		return err
	}
	runner, closer, err := e.runner(tc, runFlags{}, invoke.Config{})
	if err != nil {
		return err
	}
	defer closer.Close()
	id, err := nodes.LoadIdentity(state, c.Name)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	started := time.Now()
	info := map[string]string{"os": runtime.GOOS, "arch": runtime.GOARCH, "host": host, "workspace": ws, "version": buildVersion()}
	ctx, stop := e.interruptible()
	defer stop()
	cl := &nodes.Client{
		Gateways: c.Gateway, StateDir: state, Name: id.Name, Capabilities: offer, Info: info, Logger: e.log,
		Say: func(format string, args ...any) { fmt.Fprintf(e.stdout, "toolbelt node: "+format+"\n", args...) },
		Handle: func(ctx context.Context, capability string, params json.RawMessage, progress func(string)) tool.Result {
			switch capability {
			case nodetool.Notify:
				var in struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(params, &in) != nil || strings.TrimSpace(in.Text) == "" {
					return tool.Errorf("notify needs params {\"text\": \"…\"}; got %s", params)
				}
				fmt.Fprintf(e.stdout, "toolbelt node: notification: %s\n", in.Text)
				return tool.Textf("shown on node %s", id.Name)
			case nodetool.Status:
				b, _ := json.MarshalIndent(map[string]any{"id": id.ID, "name": id.Name, "capabilities": offer, "info": info,
					"up": time.Since(started).Round(time.Second).String()}, "", "  ")
				return tool.Text(string(b))
			}
			name := map[string]string{nodetool.Run: "exec", nodetool.Read: "read", nodetool.Write: "write"}[capability]
			msg := runner.Run(ctx, tool.Call{ID: tool.NewCallID("node"), Name: name, Arguments: params}, invoke.OnUpdate(func(r tool.Result) {
				for _, b := range r.Content {
					if b.Type == tool.TextContent && strings.TrimSpace(b.Text) != "" {
						progress(b.Text)
					}
				}
			}))
			return tool.Result{Content: msg.Content, Details: msg.Details, IsError: msg.IsError}
		},
	}
	fmt.Fprintf(e.stdout, "toolbelt node: %s (%s) for the workspace %s; state in %s\n", id.Name, id.ID, ws, state)
	return cl.Run(ctx) // a refusal exits 2, saying why
}

// stateDir is where the node keeps its identity: --state, else node/ in
// the data directory.
func (c *nodeCmd) stateDir(e *env) (string, error) {
	if c.State != "" {
		return filepath.Abs(c.State)
	}
	_, dir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return "", err
	}
	if dir == "" { // state in PostgreSQL: the node's identity stays on this machine
		if dir, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("give the node's state directory with --state: %w", err)
		}
		dir = filepath.Join(dir, "toolbelt")
	}
	return filepath.Join(dir, "node"), nil
}

// nodesCmd lists and answers the nodes paired with the gateways on this
// store.
type nodesCmd struct {
	List    nodesListCmd   `cmd:"" default:"withargs" help:"List the paired nodes (online or not, where, last seen) and the pairing requests waiting (the default)."`
	Approve nodesAnswerCmd `cmd:"" help:"Approve a node's pairing request by the code it shows: it gets its token and connects."`
	Reject  nodesRejectCmd `cmd:"" help:"Reject a node's pairing request by the code it shows: it is refused and stops."`
	Remove  nodesRemoveCmd `cmd:"" help:"Unpair a node (by name or id): its connection is closed and its token no longer admits it; it must pair again."`
}

type nodesListCmd struct {
	JSON bool `name:"json" help:"Print JSON: {nodes: [{id, name, capabilities, info, online, gateway, lastSeen, pairedAt, approvedBy}], pending: [{code, nodeId, name, gateway, requested, expires, state}]}."`
}

// listedNodes is what toolbelt nodes --json prints.
type listedNodes struct {
	Nodes   []nodetool.Node    `json:"nodes"`
	Pending []nodetool.Pairing `json:"pending"`
}

func (c *nodesListCmd) Run(e *env) error {
	reg, err := e.nodes()
	if err != nil {
		return err
	}
	ctx := context.Background()
	list, err := reg.Nodes(ctx)
	if err != nil {
		return err
	}
	pending, err := reg.Pending(ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, listedNodes{append([]nodetool.Node{}, list...), append([]nodetool.Pairing{}, pending...)})
	}
	if len(list) == 0 && len(pending) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No nodes are paired. On the other machine: toolbelt node --gateway http://THIS-GATEWAY:7420")
		return err
	}
	if len(list) > 0 {
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tID\tSTATE\tGATEWAY\tLAST SEEN\tCAPABILITIES")
		for _, n := range list {
			state, seen := "offline", "never"
			if n.Online {
				state = "online"
			}
			if !n.LastSeen.IsZero() {
				seen = n.LastSeen.Local().Format(time.DateTime)
			}
			tableRow(tw, n.Name, n.ID, state, cmp.Or(n.Gateway, "-"), seen, strings.Join(n.Capabilities, ","))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		if len(list) > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintln(e.stdout, "Waiting to pair (toolbelt nodes approve CODE, or reject CODE):")
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tNODE\tID\tHOST\tGATEWAY\tEXPIRES")
		for _, p := range pending {
			tableRow(tw, p.Code, p.Name, p.NodeID, p.Info["host"], p.Gateway, p.Expires.Local().Format(time.TimeOnly))
		}
		return tw.Flush()
	}
	return nil
}

type nodesAnswerCmd struct {
	Code string `arg:"" help:"The pairing code the node shows, e.g. ABCD-EFGH."`
	JSON bool   `name:"json" help:"Print the answered request as JSON: {code, nodeId, name, gateway, requested, expires, state, decidedBy}."`
}

func (c *nodesAnswerCmd) Run(e *env) error { return c.answer(e, true) }

type nodesRejectCmd struct{ nodesAnswerCmd }

func (c *nodesRejectCmd) Run(e *env) error { return c.answer(e, false) }

// answer approves or rejects the request with c.Code, for the person at
// this terminal.
func (c *nodesAnswerCmd) answer(e *env, approve bool) error {
	reg, err := e.nodes()
	if err != nil {
		return err
	}
	by := "cli"
	if u, err := user.Current(); err == nil {
		by = "cli:" + u.Username
	}
	decide := reg.Reject
	if approve {
		decide = reg.Approve
	}
	p, err := decide(context.Background(), c.Code, by)
	var refused *nodetool.Refused
	if errors.As(err, &refused) {
		printError(e.stderr, err)
		return exitCode(exitToolError)
	}
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, p)
	}
	_, err = fmt.Fprintf(e.stdout, "Pairing %s of node %s (%s): %s; the gateway %s tells the node.\n", p.Code, p.Name, p.NodeID, p.State, p.Gateway)
	return err
}

type nodesRemoveCmd struct {
	Node string `arg:"" help:"The node's name or id (toolbelt nodes lists them)."`
	JSON bool   `name:"json" help:"Print the removed node as JSON: {id, name, capabilities, info, online, gateway, lastSeen, pairedAt, approvedBy}."`
}

// Run removes the node: the store forgets it, and the gateway holding its
// connection closes it at its next heartbeat.
func (c *nodesRemoveCmd) Run(e *env) error {
	reg, err := e.nodes()
	if err != nil {
		return err
	}
	n, err := reg.Remove(context.Background(), c.Node)
	var refused *nodetool.Refused
	if errors.As(err, &refused) {
		printError(e.stderr, err)
		return exitCode(exitToolError)
	}
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, n)
	}
	_, err = fmt.Fprintf(e.stdout, "Removed node %s (%s): its connection closes, and it must pair again (toolbelt node --pair).\n", n.Name, n.ID)
	return err
}

// nodes returns the registry of the nodes on the store.
func (e *env) nodes() (*nodes.Registry, error) {
	tb, err := e.root(stateRoot, "")
	if err != nil {
		return nil, err
	}
	return tb.Nodes()
}

// serveNodes serves the nodes' WebSocket at nodes.Path on mux, for the
// gateway id (its address), and says on stdout when a node asks to pair.
func (e *env) serveNodes(mux *http.ServeMux, id string) (stop func(context.Context) error, err error) {
	reg, err := e.tb.Nodes()
	if err != nil {
		return nil, err
	}
	hub := nodes.NewHub(reg, nodes.HubOptions{ID: id, Logger: e.log, Announce: func(p nodetool.Pairing) {
		fmt.Fprintf(e.stdout, "toolbelt: node %s (%s, host %s) asks to pair: code %s; approve it with: toolbelt nodes approve %s\n",
			p.Name, p.NodeID, cmp.Or(p.Info["host"], "unknown"), p.Code, p.Code)
	}})
	if err := hub.Start(context.Background()); err != nil {
		return nil, err
	}
	// The nodes authenticate with their own tokens (or ask to pair), not
	// with the MCP token.
	mux.Handle("GET "+nodes.Path, hub)
	return hub.Stop, nil
}
