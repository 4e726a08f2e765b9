// Package nodes is the nodes tool: the owner's agent lists the machines
// paired with the gateway (toolbelt node), answers their pairing requests,
// and invokes what a node can do there — run a command, read or write a
// file in the node's workspace, show a notification, report its status.
// The nodes themselves, their pairing and their connections are package
// nodes at the module's root (github.com/toolbelt/toolbelt/nodes), which
// implements Service; this package holds only the tool and the vocabulary
// it needs, so the core tool set links no database.
package nodes

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Name is the tool's name.
const Name = "nodes"

// Capabilities a node can advertise: run a command through the node's own
// pipeline (its exec tool, policy, sandbox and approvals), show a
// notification, read or write a file inside its workspace, report its
// status; where it has a browser, picture a page (screenshot) and show
// and picture its canvas (canvas).
const (
	Run        = "run"
	Notify     = "notify"
	Read       = "read"
	Write      = "write"
	Status     = "status"
	Screenshot = "screenshot"
	Canvas     = "canvas"
)

// Node is a paired node as the gateways' shared store knows it.
type Node struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Capabilities []string          `json:"capabilities"`
	Info         map[string]string `json:"info,omitempty"`
	// Online says that a gateway holds the node's connection and heard
	// from it lately; Gateway names that gateway.
	Online     bool      `json:"online"`
	Gateway    string    `json:"gateway,omitempty"`
	LastSeen   time.Time `json:"lastSeen,omitzero"`
	PairedAt   time.Time `json:"pairedAt"`
	ApprovedBy string    `json:"approvedBy"`
}

// Pairing is a node's request to pair, waiting for the owner.
type Pairing struct {
	Code      string            `json:"code"`
	NodeID    string            `json:"nodeId"`
	Name      string            `json:"name"`
	Info      map[string]string `json:"info,omitempty"`
	Gateway   string            `json:"gateway"`
	Requested time.Time         `json:"requested"`
	Expires   time.Time         `json:"expires"`
	// State is pending, approved or rejected.
	State     string `json:"state"`
	DecidedBy string `json:"decidedBy,omitempty"`
}

// Request is one call to a node's capability.
type Request struct {
	// Node is the node's id or name.
	Node       string          `json:"node"`
	Capability string          `json:"capability"`
	Params     json.RawMessage `json:"params,omitempty"`
	// IdempotencyKey makes a retried request the same call: it runs on
	// the node at most once, and a retry gets its outcome.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// Caller is who asks, for the record.
	Caller string `json:"caller,omitempty"`
	// Scope is where the idempotency key holds: the calling workspace,
	// session and caller. The same key from elsewhere is another call.
	Scope string `json:"-"`
}

// Service is what the tool works with: the nodes, their pairing requests,
// and calls to them.
type Service interface {
	// Nodes returns the paired nodes, by name.
	Nodes(ctx context.Context) ([]Node, error)
	// Node returns the paired node whose id or name is ref.
	Node(ctx context.Context, ref string) (Node, error)
	// Pending returns the pairing requests waiting for the owner.
	Pending(ctx context.Context) ([]Pairing, error)
	// Approve and Reject answer the pairing request with code, for by.
	Approve(ctx context.Context, code, by string) (Pairing, error)
	Reject(ctx context.Context, code, by string) (Pairing, error)
	// Invoke runs r on its node and returns the node's result; progress
	// receives what the node reports while it runs. An offline node
	// fails at once, saying since when; a node lost mid-call gives an
	// error result saying the call was interrupted.
	Invoke(ctx context.Context, r Request, progress func(string)) (tool.Result, error)
}

// ServiceKey is the key of the nodes a tool context carries; without it
// the tool is unavailable.
var ServiceKey = tool.NewService[Service]()

// Args are the tool's arguments.
type Args struct {
	Action         string         `json:"action" enum:"status,describe,pending,approve,reject,invoke,notify" jsonschema:"status: the paired nodes, online or not. describe: one node (node): its capabilities and what it runs on. pending: pairing requests waiting for approval. approve / reject: answer a pairing request (code). invoke: run a capability on a node (node, capability, params, idempotencyKey). notify: show a notification on a node (node, text)."`
	Node           string         `json:"node,omitempty" jsonschema:"The node, by id or name (describe, invoke, notify)."`
	Code           string         `json:"code,omitempty" jsonschema:"The pairing code the node shows (approve, reject), e.g. ABCD-EFGH."`
	Capability     string         `json:"capability,omitempty" enum:"run,notify,read,write,status,screenshot,canvas" jsonschema:"What to invoke (invoke). run: a command through the node's own exec tool and policy (params: command, and optionally workdir, timeout). read: a file in the node's workspace (params: path, optionally offset, limit). write: a file there (params: path, content). notify: params: text. status: what the node runs on. screenshot (nodes with a browser): a PNG of a page (params: url, optionally fullPage, width, height; no url: the node's current tab). canvas (nodes with a browser): the node's canvas tool (params: action present, navigate, hide, a2ui_push, a2ui_reset, snapshot, eval with its arguments); what it shows comes back as a PNG."`
	Params         map[string]any `json:"params,omitempty" jsonschema:"The capability's parameters (invoke)."`
	IdempotencyKey string         `json:"idempotencyKey,omitempty" maxLength:"200" jsonschema:"A key of your choosing (invoke, notify): retrying with the same key returns the first call's outcome instead of running it again."`
	Text           string         `json:"text,omitempty" jsonschema:"The notification's text (notify)."`
}

const description = "Work with the machines paired with this gateway (nodes): list them, answer pairing requests, " +
	"and invoke a node's capabilities — run a command there (under the node's own policy), read or write a file in its workspace, " +
	"show a notification, get its status, and where it has a browser take a screenshot of a page or show and picture its canvas. A call to an offline node fails at once; a node lost mid-call reports the call as interrupted."

// Register adds nodes to reg; it is unavailable, with the reason, in a
// context without nodes.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(factory, tool.Meta{
		ID: Name, Label: "Nodes", Description: description, OpenWorld: true, OwnerOnly: true, ExternalContent: true,
		Risk: tool.RiskHigh, Source: tool.SourceCore,
	})
}

func factory(tc *tool.Context) (*tool.Tool, error) {
	svc, ok := ServiceKey.Get(tc)
	if !ok {
		return nil, &tool.NotHere{Reason: "no store holds paired nodes here: nodes are paired with toolbelt serve (see docs/nodes.md)"}
	}
	t, err := tool.New(Name, description, func(ctx context.Context, in Args, inv tool.Invocation) (tool.Result, error) {
		return run(ctx, svc, inv, in)
	})
	if err != nil {
		return nil, err
	}
	t.Preview, err = tool.NewPreview(Name, func(_ context.Context, in Args, _ tool.Invocation) (tool.Effects, error) {
		return tool.Effects{Summary: effect(in)}, nil
	})
	return &t, err
}

// effect says in a line what a call does, for the person asked to approve.
func effect(in Args) string {
	switch in.Action {
	case "invoke":
		p, _ := json.Marshal(in.Params)
		return fmt.Sprintf("%s on node %s: %s", in.Capability, in.Node, p)
	case "notify":
		return fmt.Sprintf("notify node %s: %s", in.Node, in.Text)
	case "approve", "reject":
		return fmt.Sprintf("%s the pairing request %s", in.Action, in.Code)
	}
	return in.Action + " nodes"
}

func run(ctx context.Context, svc Service, inv tool.Invocation, in Args) (tool.Result, error) {
	need := func(name, v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("action %s needs %s", in.Action, name)
		}
		return nil
	}
	caller := cmp.Or(inv.Context.Principal, inv.Context.AgentID, "agent")
	switch in.Action {
	case "status":
		list, err := svc.Nodes(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return listing(list), nil
	case "describe":
		if err := need("node", in.Node); err != nil {
			return tool.Errorf("%s", err.Error()), nil
		}
		n, err := svc.Node(ctx, in.Node)
		if err != nil {
			return tool.Errorf("%s", err.Error()), nil
		}
		b, _ := json.MarshalIndent(n, "", "  ")
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: string(b)}}, Details: n}, nil
	case "pending":
		list, err := svc.Pending(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		if len(list) == 0 {
			return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: "No pairing requests are waiting."}}, Details: []Pairing{}}, nil
		}
		var b strings.Builder
		for _, p := range list {
			fmt.Fprintf(&b, "%s  node %s (%s) asked %s, expires %s\n", p.Code, p.Name, p.NodeID, p.Requested.UTC().Format(time.RFC3339), p.Expires.UTC().Format(time.RFC3339))
		}
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: b.String()}}, Details: list}, nil
	case "approve", "reject":
		if err := need("code", in.Code); err != nil {
			return tool.Errorf("%s", err.Error()), nil
		}
		answer := svc.Approve
		if in.Action == "reject" {
			answer = svc.Reject
		}
		p, err := answer(ctx, in.Code, caller)
		if err != nil {
			return tool.Errorf("%s", err.Error()), nil
		}
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: fmt.Sprintf("Pairing %s of node %s: %s.", p.Code, p.Name, p.State)}}, Details: p}, nil
	case "invoke", "notify":
		if err := need("node", in.Node); err != nil {
			return tool.Errorf("%s", err.Error()), nil
		}
		r := Request{Node: in.Node, Capability: in.Capability, IdempotencyKey: in.IdempotencyKey, Caller: caller,
			Scope: inv.Context.Workspace + "\x00" + inv.Context.SessionKey + "\x00" + caller}
		if in.Action == "notify" {
			if err := need("text", in.Text); err != nil {
				return tool.Errorf("%s", err.Error()), nil
			}
			r.Capability = Notify
			in.Params = map[string]any{"text": in.Text}
		} else if err := need("capability", in.Capability); err != nil {
			return tool.Errorf("%s", err.Error()+" (one of run, notify, read, write, status, screenshot, canvas)"), nil
		}
		if in.Params == nil {
			in.Params = map[string]any{}
		}
		params, err := json.Marshal(in.Params)
		if err != nil {
			return tool.Errorf("%s", "params: "+err.Error()), nil
		}
		r.Params = params
		res, err := svc.Invoke(ctx, r, func(text string) { inv.Update(tool.Text(text)) })
		var refused *Refused
		if errors.As(err, &refused) {
			return tool.Errorf("%s", err.Error()), nil
		}
		return res, err
	}
	return tool.Errorf("%s", fmt.Sprintf("unknown action %q: use status, describe, pending, approve, reject, invoke or notify", in.Action)), nil
}

// Refused is an error of Invoke that the model can act on (an unknown or
// offline node, a capability it lacks), as opposed to a broken store.
type Refused struct{ Reason string }

func (e *Refused) Error() string { return e.Reason }

// listing is the status action's result.
func listing(list []Node) tool.Result {
	if len(list) == 0 {
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: "No nodes are paired. A machine pairs with: toolbelt node --gateway URL; the owner approves its code."}}, Details: []Node{}}
	}
	var b strings.Builder
	for _, n := range list {
		state := "offline"
		if n.Online {
			state = "online via " + n.Gateway
		}
		seen := "never seen"
		if !n.LastSeen.IsZero() {
			seen = "last seen " + n.LastSeen.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(&b, "%s (%s): %s, %s; can %s\n", n.Name, n.ID, state, seen, strings.Join(n.Capabilities, ", "))
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: b.String()}}, Details: list}
}
