package client_test

//lint:file-ignore SA1019 sampling is deprecated from protocol version 2026-07-28 (SEP-2577) but stays in the protocol for its deprecation window and clients on earlier versions use it: Toolbelt supports it both ways (issue 32).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/tool"
)

// askingServer is an MCP server whose tools ask the client, in rounds as
// the current protocol has servers do (input requests, the call made
// again with the answers): confirm for input (elicitation), complete for
// a completion (sampling); each answers with what it got.
func askingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "confirm", Description: "Asks the user to confirm.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res, ok := req.Params.InputResponses["sure"].(*mcp.ElicitResult); ok {
				b, _ := json.Marshal(res.Content)
				return textResult(fmt.Sprintf("action=%s content=%s", res.Action, b)), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"sure": &mcp.ElicitParams{Message: "Delete the branch?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"sure": map[string]any{"type": "boolean"}, "why": map[string]any{"type": "string", "default": "none given"}},
			}}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "connect", Description: "Sends the user to connect an account.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res, ok := req.Params.InputResponses["login"].(*mcp.ElicitResult); ok {
				return textResult(fmt.Sprintf("action=%s content=%v", res.Action, res.Content)), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"login": &mcp.ElicitParams{Mode: "url", Message: "Connect your account",
				URL: "https://auth.example.com/connect?session=s3cr3t", ElicitationID: "e-1"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "complete", Description: "Asks the client's model.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res, ok := req.Params.InputResponses["gen"].(*mcp.CreateMessageWithToolsResult); ok {
				return textResult("completion=" + res.Content[0].(*mcp.TextContent).Text + " model=" + res.Model), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"gen": &mcp.CreateMessageParams{MaxTokens: 20,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hi"}}}}}}, nil
		})
	return srv
}

// frontDoor is the person and the model of the calls' front door.
type frontDoor struct {
	mu      sync.Mutex
	forms   []interact.Form
	prompts []interact.Prompt
}

func (f *frontDoor) Elicit(_ context.Context, form interact.Form) (interact.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forms = append(f.forms, form)
	return interact.Reply{Action: interact.Accept, Content: map[string]any{"sure": true}, By: "terminal"}, nil
}

func (f *frontDoor) Sample(_ context.Context, p interact.Prompt) (interact.Completion, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, p)
	return interact.Completion{Role: "assistant", Text: "hi", Model: "test-model", By: "model test/test-model"}, nil
}

// auditRecords keeps audit records in memory.
type auditRecords struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (a *auditRecords) Append(_ context.Context, r audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
	return nil
}

// TestImportedServersRequests: an imported server's elicitation and
// sampling requests reach the front door of the call that runs its tool
// only when its entry allows them, and toolRequests still governs them;
// elicitation is declined when off, sampling refused; each passed-on
// request is in the call's audit record.
func TestImportedServersRequests(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		entry          config.MCPServer
		rules          interact.Rules
		confirm, compl string
		forms, prompts int
		outcomes       string
	}{
		{name: "off", confirm: "action=decline content=null", compl: "JSON-RPC error", outcomes: ""},
		{name: "on", entry: config.MCPServer{Elicitation: true, Sampling: true},
			confirm: `action=accept content={"sure":true,"why":"none given"}`, compl: "completion=hi model=test-model",
			forms: 1, prompts: 1, outcomes: "elicitation:accept sampling:completed"},
		{name: "denied by toolRequests", entry: config.MCPServer{Elicitation: true, Sampling: true}, rules: interact.Rules{Elicitation: "deny", Sampling: "deny"},
			confirm: "action=decline content=null", compl: "toolRequests.sampling: deny", outcomes: "elicitation:denied sampling:denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := askingServer()
			transport := func(ctx context.Context, _ string) (mcp.Transport, error) {
				ct, st := mcp.NewInMemoryTransports()
				ss, err := srv.Connect(ctx, st, nil)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { _ = ss.Close() })
				return ct, nil
			}
			_, reg := start(t, map[string]config.MCPServer{"a": c.entry}, client.Options{Transport: transport})
			door, recs := &frontDoor{}, &auditRecords{}
			tc := &tool.Context{}
			interact.Service.Set(tc, interact.Govern(door, c.rules))
			r := invoke.New(reg, tc, invoke.WithAudit(recs))
			defer r.Close()
			ctx := context.Background()
			confirm := r.Run(ctx, tool.Call{ID: "c1", Name: "a__confirm", Arguments: json.RawMessage(`{}`)})
			compl := r.Run(ctx, tool.Call{ID: "c2", Name: "a__complete", Arguments: json.RawMessage(`{}`)})
			if got := resultText(confirm); !strings.Contains(got, c.confirm) {
				t.Errorf("confirm = %q, want %q", got, c.confirm)
			}
			if got := resultText(compl); !strings.Contains(got, c.compl) {
				t.Errorf("complete = %q, want %q", got, c.compl)
			}
			if len(door.forms) != c.forms || len(door.prompts) != c.prompts {
				t.Errorf("the front door got %d forms and %d prompts, want %d and %d", len(door.forms), len(door.prompts), c.forms, c.prompts)
			}
			if c.forms > 0 && door.forms[0].Message != "mcp server a asks: Delete the branch?" {
				t.Errorf("form message = %q", door.forms[0].Message)
			}
			var outcomes []string
			for _, rec := range recs.recs {
				for _, q := range rec.Requests {
					outcomes = append(outcomes, q.Kind+":"+q.Outcome)
				}
			}
			if got := strings.Join(outcomes, " "); got != c.outcomes {
				t.Errorf("audited requests = %q, want %q", got, c.outcomes)
			}
		})
	}
}

func resultText(m tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range m.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestImportedServerURLElicitation: an imported server's url-mode request
// for input reaches the call's front door as a url-mode form (its message,
// address and id), governed by toolRequests like a form, and is audited
// with the address's host only; the server gets the person's action and
// no content.
func TestImportedServerURLElicitation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		rules          interact.Rules
		result, audits string
		forms          int
	}{
		{name: "allowed", result: "action=accept content=map[]", audits: "elicitation:accept:url:auth.example.com", forms: 1},
		{name: "denied", rules: interact.Rules{Elicitation: "deny"}, result: "action=decline", audits: "elicitation:denied:url:auth.example.com"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := askingServer()
			transport := func(ctx context.Context, _ string) (mcp.Transport, error) {
				ct, st := mcp.NewInMemoryTransports()
				ss, err := srv.Connect(ctx, st, nil)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { _ = ss.Close() })
				return ct, nil
			}
			_, reg := start(t, map[string]config.MCPServer{"a": {Elicitation: true}}, client.Options{Transport: transport})
			door, recs := &frontDoor{}, &auditRecords{}
			tc := &tool.Context{}
			interact.Service.Set(tc, interact.Govern(door, c.rules))
			r := invoke.New(reg, tc, invoke.WithAudit(recs))
			defer r.Close()
			got := resultText(r.Run(context.Background(), tool.Call{ID: "c1", Name: "a__connect", Arguments: json.RawMessage(`{}`)}))
			if !strings.Contains(got, c.result) {
				t.Errorf("connect = %q, want %q", got, c.result)
			}
			if len(door.forms) != c.forms {
				t.Fatalf("the front door got %d forms, want %d", len(door.forms), c.forms)
			}
			if c.forms > 0 {
				if f := door.forms[0]; f.Mode != interact.ModeURL || f.URL != "https://auth.example.com/connect?session=s3cr3t" || f.ID != "e-1" || f.Message != "mcp server a asks: Connect your account" || f.Schema != nil {
					t.Errorf("form = %+v", f)
				}
			}
			var audits []string
			for _, rec := range recs.recs {
				b, _ := json.Marshal(rec)
				if strings.Contains(string(b), "s3cr3t") || strings.Contains(string(b), "/connect") {
					t.Errorf("the audit record holds more of the address than its host: %s", b)
				}
				for _, q := range rec.Requests {
					audits = append(audits, q.Kind+":"+q.Outcome+":"+q.Mode+":"+q.Host)
				}
			}
			if got := strings.Join(audits, " "); got != c.audits {
				t.Errorf("audited requests = %q, want %q", got, c.audits)
			}
		})
	}
}
