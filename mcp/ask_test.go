package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// records keeps the audit records of a pipeline.
type records struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (r *records) Append(_ context.Context, rec audit.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

func (r *records) last() audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recs[len(r.recs)-1]
}

func askServer(t *testing.T) (*mcp.Server, *records) {
	t.Helper()
	reg := registry.New()
	if err := ask.Register(reg); err != nil {
		t.Fatal(err)
	}
	recs := &records{}
	srv := mcp.New(reg, &tool.Context{}, mcp.Options{Logger: quietLog}, invoke.WithAudit(recs))
	t.Cleanup(srv.Close)
	return srv, recs
}

// TestAskUserByElicitation: over MCP, ask_user puts the question to the
// client's user as an elicitation form (the options titled with their
// descriptions, a multi-select with multiple, a text field with
// allowText); the client's answer comes back as the call's result, and the
// audit record keeps it.
func TestAskUserByElicitation(t *testing.T) {
	t.Parallel()
	srv, recs := askServer(t)
	var asked *sdk.ElicitParams
	cs := connectTo(t, srv, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = req.Params
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"choices": []any{"postgres", "sqlite"}, "text": "  both, for now "}}, nil
	}}, nil)
	res := callTool(t, cs, "ask_user", map[string]any{
		"question": "Which databases should the tests cover?",
		"options":  []any{map[string]any{"label": "sqlite", "description": "embedded"}, map[string]any{"label": "postgres"}},
		"multiple": true, "allowText": true,
	})
	if res.IsError {
		t.Fatalf("error: %s", texts(res))
	}
	if asked == nil || asked.Message != "Which databases should the tests cover?" {
		t.Fatalf("the client was asked %+v", asked)
	}
	form, _ := json.Marshal(asked.RequestedSchema)
	for _, want := range []string{`"choices"`, `"title":"sqlite — embedded"`, `"const":"postgres"`, `"text"`} {
		if !strings.Contains(string(form), want) {
			t.Errorf("the form lacks %s: %s", want, form)
		}
	}
	// The choices come back in the order offered.
	if got, want := texts(res), `The person chose "sqlite", "postgres" and answered "both, for now".`; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	if rec := recs.last(); rec.Tool != "ask_user" || !strings.Contains(rec.Note, `chose "sqlite", "postgres"`) || !strings.Contains(rec.Note, "mcp client test-client") {
		t.Errorf("audit record: tool %q, note %q", rec.Tool, rec.Note)
	}
}

// TestAskUserDeclinedByElicitation: a user who declines the form is
// reported as declining, not as an answer.
func TestAskUserDeclinedByElicitation(t *testing.T) {
	t.Parallel()
	srv, _ := askServer(t)
	cs := connectTo(t, srv, &sdk.ClientOptions{ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}}, nil)
	res := callTool(t, cs, "ask_user", map[string]any{"question": "Go on?", "options": []any{map[string]any{"label": "yes"}, map[string]any{"label": "no"}}})
	if res.IsError || !strings.Contains(texts(res), "declined to answer") {
		t.Errorf("result (error %v): %s", res.IsError, texts(res))
	}
}

// TestAskUserWithoutElicitation: a client that cannot ask its user is told
// at once that nobody can answer, as an error result.
func TestAskUserWithoutElicitation(t *testing.T) {
	t.Parallel()
	srv, _ := askServer(t)
	cs := connectTo(t, srv, nil, nil)
	res := callTool(t, cs, "ask_user", map[string]any{"question": "Go on?"})
	if !res.IsError || !strings.Contains(texts(res), "Nobody can answer your question here") || !strings.Contains(texts(res), "does not support elicitation") {
		t.Errorf("result (error %v): %s", res.IsError, texts(res))
	}
}
