package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestApprovalFormSaysWhatAlwaysCovers: the question put to the MCP
// client's user says what an answer for the session or workspace covers, as the tool's preview
// has it, and the answer holds; when the preview says it is not offered,
// the form has no such choice (the client cannot give it) and the question
// says why.
func TestApprovalFormSaysWhatAlwaysCovers(t *testing.T) {
	t.Parallel()
	build := tool.Must(tool.New("build", "Builds.", func(context.Context, struct {
		Big bool `json:"big"`
	}, tool.Invocation) (tool.Result, error) {
		return tool.Text("built"), nil
	}))
	build.Meta = tool.Meta{Risk: tool.RiskHigh}
	build.Preview = func(_ context.Context, call tool.Call, _ *tool.Context) (tool.Effects, error) {
		if strings.Contains(string(call.Arguments), "true") {
			return tool.Effects{Summary: "build", NoAlways: "the workspace has too many files"}, nil
		}
		return tool.Effects{Summary: "build", WorkspaceHash: "h", AlwaysCovers: "this command, while the workspace's files stay as they are now"}, nil
	}
	reg := registry.New()
	if err := reg.Register(build); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var questions []*sdk.ElicitParams
	srv := mcp.New(reg, &tool.Context{Identity: tool.Identity{Owner: true}}, mcp.Options{Logger: quietLog})
	t.Cleanup(srv.Close)
	cs := connectTo(t, srv, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		questions = append(questions, req.Params)
		decision := "allow once"
		if form, _ := json.Marshal(req.Params.RequestedSchema); strings.Contains(string(form), `"allow for this session"`) {
			decision = "allow for this session"
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}}, nil)
	asked := func(args map[string]any) (*sdk.ElicitParams, string) {
		t.Helper()
		mu.Lock()
		before := len(questions)
		mu.Unlock()
		if res := callTool(t, cs, "build", args); res.IsError {
			t.Fatalf("%v: %s", args, texts(res))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(questions) == before {
			return nil, ""
		}
		form, err := json.Marshal(questions[len(questions)-1].RequestedSchema)
		if err != nil {
			t.Fatal(err)
		}
		return questions[len(questions)-1], string(form)
	}
	q, form := asked(map[string]any{"big": false})
	if q == nil || !strings.Contains(q.Message, "Allowing it for this session or in this workspace covers this command, while the workspace's files stay as they are now") || !strings.Contains(form, `"allow in this workspace"`) {
		t.Errorf("offered: %+v\n%s", q, form)
	}
	if q, _ := asked(map[string]any{"big": false}); q != nil {
		t.Error("the answer for this session did not hold")
	}
	for range 2 {
		q, form := asked(map[string]any{"big": true})
		if q == nil || !strings.Contains(q.Message, "Only once is offered: the workspace has too many files.") || strings.Contains(form, `"allow for this session"`) || strings.Contains(form, `"allow in this workspace"`) {
			t.Errorf("not offered: %+v\n%s", q, form)
		}
	}
}
