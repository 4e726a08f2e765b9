package dir

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// person answers forms and prompts as a test's person and model would.
type person struct {
	mu     sync.Mutex
	forms  []interact.Form
	prompt []interact.Prompt
}

func (p *person) Elicit(_ context.Context, f interact.Form) (interact.Reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forms = append(p.forms, f)
	return interact.Reply{Action: interact.Accept, Content: map[string]any{"name": "Ada"}, By: "test person"}, nil
}

func (p *person) Sample(_ context.Context, pr interact.Prompt) (interact.Completion, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompt = append(p.prompt, pr)
	return interact.Completion{Role: "assistant", Text: "four", Model: "test-model", By: "test model"}, nil
}

// records keeps audit records in memory.
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

// TestInteractiveHandler: an interactive handler asks for input and for a
// completion with lines on standard error, reads each answer as a line of
// standard input after its request, and answers with them; the call's
// audit record lists both requests (what was asked, not the answers);
// toolRequests' deny reaches the handler as an error line, and the
// handler of a tool not declared interactive has its standard input
// closed after the request.
func TestInteractiveHandler(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	script := `read -r req
printf '%s\n' '{"elicit": {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}' >&2
read -r reply
printf '%s\n' '{"progress": 50, "message": "asked"}' >&2
printf '%s\n' '{"sample": {"messages": [{"role": "user", "text": "2+2? password=hunter2"}], "maxTokens": 10}}' >&2
read -r completion
printf '{"success": true, "result": {"reply": %s, "completion": %s}}\n' "$reply" "$completion"
`
	folder := writeTool(t, parent, "chat", map[string]string{
		"metadata.json": meta("chat", map[string]any{"interactive": true}),
		"schema.json":   `{"type":"object","properties":{}}`,
		"handler.sh":    script,
	})
	plain := shTool(t, parent, "plain", `printf '{"success": true, "result": "read to the end"}'`, nil)

	run := func(rules interact.Rules) (*person, *records, tool.ResultMessage, tool.ResultMessage) {
		reg := registry.New()
		for _, f := range []string{folder, plain} {
			dt, err := Load(f, Options{Trusted: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := reg.Register(dt.Tool()); err != nil {
				t.Fatal(err)
			}
		}
		p, recs := &person{}, &records{}
		tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}
		interact.Service.Set(tc, interact.Govern(p, rules))
		r := invoke.New(reg, tc, invoke.WithAudit(recs))
		defer r.Close()
		msg := r.Run(context.Background(), tool.Call{ID: "c1", Name: "chat", Arguments: json.RawMessage(`{}`)})
		other := r.Run(context.Background(), tool.Call{ID: "c2", Name: "plain", Arguments: json.RawMessage(`{"text": "x"}`)})
		return p, recs, msg, other
	}

	p, recs, msg, other := run(interact.Rules{})
	if msg.IsError {
		t.Fatalf("chat: %s", text(msg))
	}
	got := text(msg)
	for _, want := range []string{`"action": "accept"`, `"name": "Ada"`, `"text": "four"`, `"model": "test-model"`} {
		if !strings.Contains(got, want) {
			t.Errorf("result %q lacks %s", got, want)
		}
	}
	if len(p.forms) != 1 || p.forms[0].Message != "Your name?" || len(p.prompt) != 1 || p.prompt[0].MaxTokens != 10 {
		t.Errorf("asked forms %+v, prompts %+v", p.forms, p.prompt)
	}
	if other.IsError || text(other) != "read to the end" {
		t.Errorf("plain = %q (error %v)", text(other), other.IsError)
	}
	if len(recs.recs) != 2 {
		t.Fatalf("%d audit records", len(recs.recs))
	}
	reqs := recs.recs[0].Requests
	if len(reqs) != 2 || reqs[0].Kind != "elicitation" || reqs[0].Outcome != "accept" || reqs[0].By != "test person" ||
		strings.Join(reqs[0].Fields, ",") != "name" || reqs[1].Kind != "sampling" || reqs[1].Outcome != "completed" || reqs[1].Model != "test-model" {
		t.Errorf("requests in the audit record = %+v", reqs)
	}
	b, _ := json.Marshal(recs.recs[0])
	if strings.Contains(string(b), "Ada") || strings.Contains(string(b), "four") || strings.Contains(string(b), "hunter2") {
		t.Errorf("the audit record keeps an answer or a secret: %s", b)
	}

	p, recs, msg, _ = run(interact.Rules{Elicitation: "deny", Sampling: "deny"})
	if len(p.forms)+len(p.prompt) != 0 {
		t.Errorf("denied requests reached the client: %+v %+v", p.forms, p.prompt)
	}
	if got := text(msg); !strings.Contains(got, `"error"`) || !strings.Contains(got, "toolRequests.elicitation: deny") {
		t.Errorf("denied: %q", got)
	}
	if reqs := recs.recs[0].Requests; len(reqs) != 2 || reqs[0].Outcome != "denied" || reqs[1].Outcome != "denied" {
		t.Errorf("denied requests in the audit record = %+v", reqs)
	}
}

// TestInteractiveMetadata: interactive handlers are started per call.
func TestInteractiveMetadata(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	f := shTool(t, parent, "both", `true`, map[string]any{"interactive": true, "persistent": true})
	_, err := Load(f, Options{Trusted: true})
	if err == nil || !strings.Contains(err.Error(), "cannot be persistent") {
		t.Errorf("Load = %v", err)
	}
}

// chatty answers every prompt with a long completion.
type chatty struct{ person }

func (*chatty) Sample(context.Context, interact.Prompt) (interact.Completion, error) {
	return interact.Completion{Role: "assistant", Text: strings.Repeat("x", 4096)}, nil
}

// TestInteractiveHandlerThatDoesNotRead: a handler that asks many times
// and never reads its answers cannot hold its call past the call's time
// limit once the answers fill its standard input's pipe.
func TestInteractiveHandlerThatDoesNotRead(t *testing.T) {
	t.Parallel()
	folder := writeTool(t, t.TempDir(), "asker", map[string]string{
		"metadata.json": meta("asker", map[string]any{"interactive": true, "timeout": 1}),
		"schema.json":   `{"type":"object","properties":{}}`,
		"handler.sh": `i=0
while [ $i -lt 200 ]; do printf '%s\n' '{"sample": {"messages": [{"role": "user", "text": "more"}], "maxTokens": 10}}' >&2; i=$((i+1)); done
printf '{"success": true, "result": "done"}\n'
`,
	})
	dt, err := Load(folder, Options{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := reg.Register(dt.Tool()); err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}
	interact.Service.Set(tc, interact.Govern(&chatty{}, interact.Rules{}))
	r := invoke.New(reg, tc)
	defer r.Close()
	ran := make(chan tool.ResultMessage, 1)
	go func() {
		ran <- r.Run(context.Background(), tool.Call{ID: "c1", Name: "asker", Arguments: json.RawMessage(`{}`)})
	}()
	select {
	case <-ran:
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatal("the call of a handler that does not read its answers never ended")
	}
}
