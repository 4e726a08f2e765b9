package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// TestToolsFollowTheRegistry: the tool list is written once and every
// request of a run carries the same bytes, until a tool is registered
// between turns (here by a tool the model calls): the next request offers
// it, and the model can call it.
func TestToolsFollowTheRegistry(t *testing.T) {
	for _, w := range wires {
		t.Run(w.spec, func(t *testing.T) {
			reg := registry.New()
			shout := tool.Must(tool.New("shout", "Say it loud.", func(ctx context.Context, in readArgs, inv tool.Invocation) (tool.Result, error) {
				return tool.Text(strings.ToUpper(in.Path)), nil
			}))
			shout.Meta = tool.Meta{ReadOnly: true}
			learn := tool.Must(tool.New("learn", "Learn a new tool.", func(ctx context.Context, in waitArgs, inv tool.Invocation) (tool.Result, error) {
				return tool.Text("learned shout"), reg.Register(shout)
			}))
			learn.Meta = tool.Meta{ReadOnly: true}
			if err := reg.Register(learn); err != nil {
				t.Fatal(err)
			}
			s := llmtest.New(t,
				llmtest.Response{Body: w.body("", "", llmtest.Call{ID: "call_1", Name: "learn", Args: `{}`})},
				llmtest.Response{Body: w.body("", "", llmtest.Call{ID: "call_2", Name: "learn", Args: `{}`})},
				llmtest.Response{Body: w.body("", "", llmtest.Call{ID: "call_3", Name: "shout", Args: `{"path":"hi"}`})},
				llmtest.Response{Body: w.body("", "done")})
			a := newAgent(t, w.spec, s, invoke.New(reg, nil))
			tr, err := a.Run(context.Background(), nil, llm.UserText("learn"))
			if err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests", len(reqs))
			}
			tools := func(i int) []string {
				var names []string
				for _, tl := range list(reqs[i].JSON(t)["tools"]) {
					m := obj(tl)
					switch {
					case m["function"] != nil: // Chat Completions
						names = append(names, obj(m["function"])["name"].(string))
					case m["functionDeclarations"] != nil: // Gemini
						for _, f := range list(m["functionDeclarations"]) {
							names = append(names, obj(f)["name"].(string))
						}
					default:
						names = append(names, m["name"].(string))
					}
				}
				return names
			}
			if got := strings.Join(tools(0), ","); got != "learn" {
				t.Errorf("first request offers %s, want learn", got)
			}
			for i := 1; i < 4; i++ {
				if got := strings.Join(tools(i), ","); got != "learn,shout" {
					t.Errorf("request %d offers %s, want learn,shout", i+1, got)
				}
			}
			if got := tr[len(tr)-2].Text(); tr[len(tr)-2].IsError || got != "HI" {
				t.Errorf("the new tool's result: %q (error %v)", got, tr[len(tr)-2].IsError)
			}
		})
	}
}

// TestToolsEncodedOnce: an exporter asked again for the same tools and
// target returns the bytes it encoded the first time; a changed
// description is encoded again.
func TestToolsEncodedOnce(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "a")}, llmtest.Response{Body: llmtest.Chat("", "b")}, llmtest.Response{Body: llmtest.Chat("", "c")})
	a := newAgent(t, "openai/gpt-test", s, runner)
	for range 2 {
		if _, err := a.Run(context.Background(), nil, llm.UserText("hi")); err != nil {
			t.Fatal(err)
		}
	}
	offered := runner.Tools(nil)
	first, err := a.Exporter.Export(offered, a.Client.Target())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := a.Exporter.Export(runner.Tools(nil), a.Client.Target())
	if &first.Tools[0] != &again.Tools[0] {
		t.Errorf("the same tools were encoded again")
	}
	offered[0].Description = "Read a text file."
	changed, _ := a.Exporter.Export(offered, a.Client.Target())
	if &changed.Tools[0] == &first.Tools[0] || !strings.Contains(string(changed.Tools), "Read a text file.") {
		t.Errorf("a changed description kept the old bytes: %s", changed.Tools)
	}
	r := s.Requests()
	if string(r[0].Body[:strings.Index(string(r[0].Body), `"messages"`)]) != string(r[1].Body[:strings.Index(string(r[1].Body), `"messages"`)]) {
		t.Errorf("two runs' requests differ before their messages:\n%s\n%s", r[0].Body, r[1].Body)
	}
}
