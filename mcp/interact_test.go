package mcp_test

//lint:file-ignore SA1019 sampling is deprecated from protocol version 2026-07-28 (SEP-2577) but stays in the protocol for its deprecation window and clients on earlier versions use it: Toolbelt supports it both ways (issue 32).

import (
	"context"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// registerAsking registers interview, a tool that asks its caller's side
// for a name (elicitation), then for a greeting (sampling), and answers
// with both, or with the first error.
func registerAsking(t *testing.T, reg *registry.Registry) {
	t.Helper()
	factory := func(tc *tool.Context) (*tool.Tool, error) {
		c, ok := interact.Service.Get(tc)
		if !ok {
			return nil, &tool.NotHere{Reason: "nobody to ask"}
		}
		tt, err := tool.New("interview", "Asks for a name and greets it.", func(ctx context.Context, _ struct{}, _ tool.Invocation) (tool.Result, error) {
			r, err := c.Elicit(ctx, interact.Form{Message: "Your name?", Schema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
			}})
			if err != nil {
				return tool.Errorf("elicit: %v", err), nil
			}
			name, _ := r.Content["name"].(string)
			comp, err := c.Sample(ctx, interact.Prompt{Messages: []interact.Message{{Role: "user", Text: "Greet " + name}}, MaxTokens: 30})
			if err != nil {
				return tool.Errorf("sample: %v", err), nil
			}
			return tool.Text(r.Action + " " + name + " by " + r.By + "; " + comp.Text + " (" + comp.Model + ")"), nil
		})
		return &tt, err
	}
	if err := reg.RegisterFactory(factory, tool.Meta{ID: "interview", Description: "Asks for a name and greets it.", ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
}

// clientSide counts what the MCP client was asked.
type clientSide struct {
	mu              sync.Mutex
	forms, messages int
}

func (c *clientSide) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			c.mu.Lock()
			c.forms++
			c.mu.Unlock()
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			c.mu.Lock()
			c.messages++
			c.mu.Unlock()
			text := req.Params.Messages[0].Content.(*sdk.TextContent).Text
			return &sdk.CreateMessageResult{Role: "assistant", Content: &sdk.TextContent{Text: "Hello! (" + text + ")"}, Model: "client-model"}, nil
		},
	}
}

// stand-in is Options.Interact: the fallback for clients without the
// capabilities.
type standIn struct{}

func (standIn) Elicit(context.Context, interact.Form) (interact.Reply, error) {
	return interact.Reply{Action: "accept", Content: map[string]any{"name": "Bob"}, By: "terminal"}, nil
}

func (standIn) Sample(context.Context, interact.Prompt) (interact.Completion, error) {
	return interact.Completion{Role: "assistant", Text: "Hi Bob", Model: "configured-model", By: "model"}, nil
}

// TestToolsAskTheClient: a tool of Toolbelt's asks the MCP client that
// made the call for input and for a completion — directly while the call
// runs for a client on a protocol before 2026-07-28, in rounds for a later
// one; without the capabilities the request goes to Options.Interact, or
// fails saying why; toolRequests' deny keeps it from the client; every
// request is in the call's audit record.
func TestToolsAskTheClient(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		version  string // the client's protocol version; "" the latest
		bare     bool   // the client declares neither capability
		opts     mcp.Options
		want     string
		asked    int // forms and messages the client got, each
		outcomes string
	}{
		{name: "directly", version: "2025-11-25", want: "accept Ada by mcp client test-client; Hello! (Greet Ada) (client-model)", asked: 1, outcomes: "elicitation:accept sampling:completed"},
		{name: "in rounds", want: "accept Ada by mcp client test-client; Hello! (Greet Ada) (client-model)", asked: 1, outcomes: "elicitation:accept sampling:completed"},
		{name: "no capability", version: "2025-11-25", bare: true, want: "the MCP client does not support elicitation", outcomes: "elicitation:unsupported"},
		{name: "no capability, a stand-in", version: "2025-11-25", bare: true, opts: mcp.Options{Interact: standIn{}},
			want: "accept Bob by terminal; Hi Bob (configured-model)", outcomes: "elicitation:accept sampling:completed"},
		{name: "denied", version: "2025-11-25", opts: mcp.Options{ToolRequests: interact.Rules{Elicitation: "deny"}},
			want: "toolRequests.elicitation: deny", outcomes: "elicitation:denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := registry.New()
			registerAsking(t, reg)
			recs := &records{}
			c.opts.Logger = quietLog
			srv := mcp.New(reg, &tool.Context{}, c.opts, invoke.WithAudit(recs))
			t.Cleanup(srv.Close)
			side := &clientSide{}
			copts := side.options()
			if c.bare {
				copts = nil
			}
			var sopts *sdk.ClientSessionOptions
			if c.version != "" {
				sopts = &sdk.ClientSessionOptions{ProtocolVersion: c.version}
			}
			cs := connectTo(t, srv, copts, sopts)
			res := callTool(t, cs, "interview", map[string]any{})
			if got := texts(res); !strings.Contains(got, c.want) {
				t.Errorf("result = %q, want %q", got, c.want)
			}
			if side.forms != c.asked || side.messages != c.asked {
				t.Errorf("the client got %d forms and %d prompts, want %d each", side.forms, side.messages, c.asked)
			}
			var outcomes []string
			for _, q := range recs.last().Requests {
				outcomes = append(outcomes, q.Kind+":"+q.Outcome)
			}
			if got := strings.Join(outcomes, " "); got != c.outcomes {
				t.Errorf("audited requests = %q, want %q", got, c.outcomes)
			}
		})
	}
}

// TestToolsSendTheClientToAnAddress: a tool's url-mode request goes to an
// MCP client that declared url-mode elicitation as elicitation/create
// with mode url (message, address, an elicitationId), directly or in
// rounds; the tool's word that it completed reaches the client as
// notifications/elicitation/complete; a client with forms only is not
// sent there, and the request goes to Options.Interact or fails saying
// so; the audit record keeps the address's host only.
func TestToolsSendTheClientToAnAddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, version string
		url           bool // the client declares url mode
		opts          mcp.Options
		want          string
	}{
		{name: "directly", version: "2025-11-25", url: true, want: "accept by mcp client test-client"},
		{name: "in rounds", url: true, want: "accept by mcp client test-client"},
		{name: "forms only", version: "2025-11-25", want: "the MCP client does not support url-mode elicitation"},
		{name: "forms only, a stand-in", version: "2025-11-25", opts: mcp.Options{Interact: standIn{}}, want: "accept by terminal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			reg := registry.New()
			completed := make(chan struct{})
			factory := func(tc *tool.Context) (*tool.Tool, error) {
				ic, _ := interact.Service.Get(tc)
				tt, err := tool.New("connect", "Sends the person to connect an account.", func(ctx context.Context, _ struct{}, _ tool.Invocation) (tool.Result, error) {
					r, err := ic.Elicit(ctx, interact.Form{Mode: interact.ModeURL, Message: "Connect your account", URL: "https://auth.example.com/connect?s=s3cr3t", ID: "e-7", Completed: completed})
					if err != nil {
						return tool.Errorf("elicit: %v", err), nil
					}
					return tool.Text(r.Action + " by " + r.By), nil
				})
				return &tt, err
			}
			if err := reg.RegisterFactory(factory, tool.Meta{ID: "connect", Description: "Sends the person to connect an account.", ReadOnly: true}); err != nil {
				t.Fatal(err)
			}
			recs := &records{}
			c.opts.Logger = quietLog
			srv := mcp.New(reg, &tool.Context{}, c.opts, invoke.WithAudit(recs))
			t.Cleanup(srv.Close)
			asked := make(chan *sdk.ElicitParams, 2)
			told := make(chan string, 1)
			caps := &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}}
			if c.url {
				caps.Elicitation.URL = &sdk.URLElicitationCapabilities{}
			}
			copts := &sdk.ClientOptions{Capabilities: caps,
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked <- req.Params
					close(completed) // the tool's side sees it done
					return &sdk.ElicitResult{Action: "accept"}, nil
				},
				ElicitationCompleteHandler: func(_ context.Context, req *sdk.ElicitationCompleteNotificationRequest) {
					told <- req.Params.ElicitationID
				},
			}
			var sopts *sdk.ClientSessionOptions
			if c.version != "" {
				sopts = &sdk.ClientSessionOptions{ProtocolVersion: c.version}
			}
			cs := connectTo(t, srv, copts, sopts)
			res := callTool(t, cs, "connect", map[string]any{})
			if got := texts(res); !strings.Contains(got, c.want) {
				t.Errorf("result = %q, want %q", got, c.want)
			}
			if !c.url {
				if len(asked) > 0 {
					t.Error("a client without url mode was sent to the address")
				}
				return
			}
			p := <-asked
			if p.Mode != "url" || p.URL != "https://auth.example.com/connect?s=s3cr3t" || p.ElicitationID != "e-7" || p.Message != "Connect your account" {
				t.Errorf("the client was asked %+v", p)
			}
			if c.version != "" {
				if id := receive(t, told); id != "e-7" {
					t.Errorf("the client was told %s completed", id)
				}
			}
			rec := recs.last()
			if len(rec.Requests) == 0 || rec.Requests[0].Host != "auth.example.com" || rec.Requests[0].Mode != "url" {
				t.Errorf("audited %+v", rec.Requests)
			}
		})
	}
}
