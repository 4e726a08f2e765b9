package toolbelt_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// scripted answers questions in order, as a person at a terminal would.
type scripted struct {
	answers []ask.Answer
	asked   []ask.Question
}

func (s *scripted) Ask(_ context.Context, q ask.Question) (ask.Answer, error) {
	s.asked = append(s.asked, q)
	if len(s.answers) == 0 {
		return ask.Answer{}, errors.New("no answer left")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	a.By = "terminal"
	return a, nil
}

func openRequests(t *testing.T, yaml string) *toolbelt.Toolbelt {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: t.TempDir(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	return tb
}

// TestToolRequestsAtTheTerminal: where no MCP client answers, a form is
// asked field by field of the person at the terminal — choices for enums
// and booleans, words converted to numbers, a blank answer taking the
// default, a wrong one asked again — and a completion comes from the
// configured model; toolRequests' deny refuses a kind, and without a
// person or a model the request says what is missing.
func TestToolRequestsAtTheTerminal(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "Hello, Ada.")})
	tb := openRequests(t, fmt.Sprintf("model: anthropic/claude-test\nproviders:\n  anthropic:\n    url: %s\n", model.URL))
	person := &scripted{answers: []ask.Answer{
		{Text: "forty"}, {Text: "41"}, // age: asked again
		{Text: ""},                     // name: blank, its default
		{Chosen: []string{"Inactive"}}, // status
		{Chosen: []string{"yes"}},      // verified
	}}
	form := interact.Form{Message: "About you", Schema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"age":      map[string]any{"type": "integer"},
			"name":     map[string]any{"type": "string", "default": "Ada"},
			"status":   map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "active", "title": "Active"}, map[string]any{"const": "inactive", "title": "Inactive"}}},
			"verified": map[string]any{"type": "boolean"},
		},
		"required": []any{"age"},
	}}
	ctx := context.Background()
	reply, err := tb.ToolRequests(person).Elicit(ctx, form)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"age": int64(41), "name": "Ada", "status": "inactive", "verified": true}
	if reply.Action != interact.Accept || !reflect.DeepEqual(reply.Content, want) || reply.By != "terminal" {
		t.Errorf("reply = %+v, want accept %v", reply, want)
	}
	if len(person.asked) != 5 || !strings.HasPrefix(person.asked[1].Question, `"forty" is not a whole number.`) {
		t.Errorf("asked %+v", person.asked)
	}

	declined := &scripted{answers: []ask.Answer{{Declined: true}}}
	if r, err := tb.ToolRequests(declined).Elicit(ctx, form); err != nil || r.Action != interact.Decline {
		t.Errorf("declined: %+v, %v", r, err)
	}
	if _, err := tb.ToolRequests(nil).Elicit(ctx, form); !errors.Is(err, interact.ErrUnsupported) {
		t.Errorf("nobody to ask: %v", err)
	}

	c, err := tb.ToolRequests(nil).Sample(ctx, interact.Prompt{SystemPrompt: "Be brief.", Messages: []interact.Message{{Role: "user", Text: "Greet Ada"}}, MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "Hello, Ada." || c.By != "model anthropic/claude-test" {
		t.Errorf("completion = %+v", c)
	}

	denied := openRequests(t, "toolRequests:\n  sampling: deny\n")
	if _, err := denied.ToolRequests(nil).Sample(ctx, interact.Prompt{Messages: []interact.Message{{Role: "user", Text: "hi"}}}); !errors.Is(err, interact.ErrForbidden) {
		t.Errorf("denied sampling: %v", err)
	}
	if _, err := denied.ToolRequests(nil).Elicit(ctx, form); !errors.Is(err, interact.ErrUnsupported) {
		t.Errorf("elicitation is allowed but nobody is there: %v", err)
	}
}
