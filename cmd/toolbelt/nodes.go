package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	"github.com/toolbelt/toolbelt/tools/browser"
	canvastool "github.com/toolbelt/toolbelt/tools/canvas"
	nodetool "github.com/toolbelt/toolbelt/tools/nodes"
)

// nodeCmd runs this machine as a node of a gateway.
type nodeCmd struct {
	workspaceFlags
	Gateway  []string `required:"" help:"The gateway's URL (toolbelt serve's, e.g. http://HOST:7420); repeat it for gateways sharing one PostgreSQL store: the node connects to the first that answers, and moves to the next when it goes." placeholder:"URL"`
	Name     string   `help:"The node's name, shown to the owner (default: the host name)."`
	State    string   `help:"Directory of the node's identity and token (default: node/ in the data directory)." placeholder:"DIR"`
	Pair     bool     `help:"Forget the node's token and ask the gateway to pair it again."`
	Offer    []string `help:"The capabilities to offer (default: all of run, notify, read, write, status, and screenshot, canvas when Chromium is here)." placeholder:"CAP,…"`
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
	offer, err := c.offers(tb.Browser())
	if err != nil {
		return err
	}
	// The canvas is served on this machine's loopback, for a person here
	// to open and for the browser to picture.
	if slices.Contains(offer, nodetool.Canvas) {
		srv, err := e.serveLoopbackCanvas(tb.Canvas())
		if err != nil {
			return err
		}
		defer srv.Close()
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
	h := &nodeHandler{e: e, runner: runner, id: id, offer: offer, info: info, started: started}
	cl := &nodes.Client{
		Gateways: c.Gateway, StateDir: state, Name: id.Name, Capabilities: offer, Info: info, Logger: e.log,
		Say:    func(format string, args ...any) { fmt.Fprintf(e.stdout, "toolbelt node: "+format+"\n", args...) },
		Handle: h.handle,
	}
	fmt.Fprintf(e.stdout, "toolbelt node: %s (%s) for the workspace %s; state in %s\n", id.Name, id.ID, ws, state)
	if slices.Contains(offer, nodetool.Canvas) {
		fmt.Fprintf(e.stdout, "toolbelt node: the canvas is at %s\n", tb.Canvas().URL(canvastool.Session(tc)))
	}
	return cl.Run(ctx) // a refusal exits 2, saying why
}

// offers returns the capabilities the node offers: --offer, or all of
// them; those that need a browser only when Chromium is here (b, the
// root's browser, can start it).
func (c *nodeCmd) offers(b *browser.Manager) ([]string, error) {
	var noBrowser error = errors.New("the browser tool is not here")
	if b != nil {
		noBrowser = b.Available()
	}
	if len(c.Offer) == 0 {
		if noBrowser == nil {
			return nodes.AllCapabilities, nil
		}
		return slices.DeleteFunc(slices.Clone(nodes.AllCapabilities), func(c string) bool { return slices.Contains(nodes.BrowserCapabilities, c) }), nil
	}
	for _, o := range c.Offer {
		if noBrowser != nil && slices.Contains(nodes.BrowserCapabilities, o) {
			return nil, fmt.Errorf("--offer %s needs a browser on this machine: %v", o, noBrowser)
		}
	}
	return c.Offer, nil
}

// nodeHandler runs the gateway's calls on the node, through the node's
// own pipeline (runner): its policy, sandbox and approvals.
type nodeHandler struct {
	e       *env
	runner  *invoke.Runner
	id      nodes.Identity
	offer   []string
	info    map[string]string
	started time.Time
}

// handle runs a call of capability with params.
func (h *nodeHandler) handle(ctx context.Context, capability string, params json.RawMessage, progress func(string)) tool.Result {
	switch capability {
	case nodetool.Notify:
		var in struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(params, &in) != nil || strings.TrimSpace(in.Text) == "" {
			return tool.Errorf("notify needs params {\"text\": \"…\"}; got %s", params)
		}
		fmt.Fprintf(h.e.stdout, "toolbelt node: notification: %s\n", in.Text)
		return tool.Textf("shown on node %s", h.id.Name)
	case nodetool.Status:
		b, _ := json.MarshalIndent(map[string]any{"id": h.id.ID, "name": h.id.Name, "capabilities": h.offer, "info": h.info,
			"up": time.Since(h.started).Round(time.Second).String()}, "", "  ")
		return tool.Text(string(b))
	case nodetool.Screenshot:
		return h.screenshot(ctx, params, progress)
	case nodetool.Canvas:
		return h.canvas(ctx, params, progress)
	}
	name := map[string]string{nodetool.Run: "exec", nodetool.Read: "read", nodetool.Write: "write"}[capability]
	return h.run(ctx, name, params, progress)
}

// run runs the node's tool name with args through its pipeline.
func (h *nodeHandler) run(ctx context.Context, name string, args json.RawMessage, progress func(string)) tool.Result {
	msg := h.runner.Run(ctx, tool.Call{ID: tool.NewCallID("node"), Name: name, Arguments: args}, invoke.OnUpdate(func(r tool.Result) {
		for _, b := range r.Content {
			if b.Type == tool.TextContent && strings.TrimSpace(b.Text) != "" {
				progress(b.Text)
			}
		}
	}))
	return tool.Result{Content: msg.Content, Details: msg.Details, IsError: msg.IsError}
}

// picture are the params of a screenshot: the page, and the picture's
// size.
type picture struct {
	URL      string `json:"url,omitempty"`
	FullPage bool   `json:"fullPage,omitempty"`
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`
}

// screenshot pictures the page at params.url with the node's browser tool
// (its network rules: private hosts only when the node's
// tools.browser.allowHosts lists them), or without a url the node's
// canvas, as a PNG.
func (h *nodeHandler) screenshot(ctx context.Context, params json.RawMessage, progress func(string)) tool.Result {
	var p picture
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return tool.Errorf("screenshot takes params {\"url\", \"fullPage\", \"width\", \"height\"} (all optional; no url pictures the node's canvas): %v; got %s", err, params)
	}
	if p.URL == "" {
		if !slices.Contains(h.offer, nodetool.Canvas) {
			return tool.Errorf("screenshot needs params.url here: this node does not offer its canvas, which a screenshot without url pictures")
		}
		args, _ := json.Marshal(map[string]any{"action": "snapshot", "fullPage": p.FullPage, "width": p.Width, "height": p.Height})
		return h.run(ctx, "canvas", dropZeros(args), progress)
	}
	args, _ := json.Marshal(map[string]any{"action": "screenshot", "url": p.URL, "fullPage": p.FullPage, "width": p.Width, "height": p.Height})
	return h.run(ctx, "browser", dropZeros(args), progress)
}

// dropZeros removes the keys of the JSON object args whose values are
// zero (false, 0), so that the tool's defaults apply.
func dropZeros(args []byte) json.RawMessage {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	maps.DeleteFunc(m, func(_ string, v any) bool { return v == false || v == float64(0) })
	b, _ := json.Marshal(m)
	return b
}

// showing are the canvas actions that change what the canvas shows: the
// canvas capability adds a picture of it after them.
var showing = []string{"present", "navigate", "hide", "a2ui_push", "a2ui_reset"}

// canvas runs the node's canvas tool with params (its arguments); after
// an action that changes what the canvas shows, it adds a PNG of the
// canvas as the node's browser renders it, so that the caller sees it.
func (h *nodeHandler) canvas(ctx context.Context, params json.RawMessage, progress func(string)) tool.Result {
	var in struct {
		Action   string `json:"action"`
		FullPage bool   `json:"fullPage"`
		Width    int    `json:"width"`
		Height   int    `json:"height"`
	}
	if err := json.Unmarshal(params, &in); err != nil || in.Action == "" {
		return tool.Errorf("canvas takes the canvas tool's arguments, e.g. {\"action\": \"present\", \"html\": \"…\"} (actions: present, navigate, hide, a2ui_push, a2ui_reset, snapshot, eval); got %s", params)
	}
	res := h.run(ctx, "canvas", params, progress)
	if res.IsError || !slices.Contains(showing, in.Action) {
		return res
	}
	args, _ := json.Marshal(map[string]any{"action": "snapshot", "fullPage": in.FullPage, "width": in.Width, "height": in.Height})
	pic := h.run(ctx, "canvas", dropZeros(args), progress)
	if pic.IsError {
		res.Content = append(res.Content, tool.Content{Type: tool.TextContent, Text: "No picture of the canvas could be taken:"})
	}
	res.Content = append(res.Content, pic.Content...)
	return res
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
// connection closes it when it next looks at the store.
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
