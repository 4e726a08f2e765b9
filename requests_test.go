package toolbelt_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
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

// opening is a scripted terminal that can open addresses, and notes them.
type opening struct {
	scripted
	opened []string
}

func (o *opening) OpenURL(url string) error {
	o.opened = append(o.opened, url)
	return nil
}

// TestURLRequestAtTheTerminal: a url-mode request shows the person its
// message and address and asks whether they completed it there; the
// address is opened only when the person chooses to; decline and cancel
// are the person's; a request its asker says is complete is accepted
// without waiting for the person; a request without an http(s) address
// is refused before anyone is asked.
func TestURLRequestAtTheTerminal(t *testing.T) {
	t.Parallel()
	tb := openRequests(t, "")
	ctx := context.Background()
	form := interact.Form{Mode: interact.ModeURL, Message: "Connect your account", URL: "https://auth.example.com/connect?s=1", ID: "e-1"}

	person := &opening{scripted: scripted{answers: []ask.Answer{{Chosen: []string{"Open it in my browser"}}, {Chosen: []string{"Done"}}}}}
	reply, err := tb.ToolRequests(person).Elicit(ctx, form)
	if err != nil || reply.Action != interact.Accept || reply.Content != nil {
		t.Fatalf("done: %+v %v", reply, err)
	}
	if len(person.opened) != 1 || person.opened[0] != form.URL {
		t.Errorf("opened %v", person.opened)
	}
	if q := person.asked[0]; !strings.Contains(q.Question, "Connect your account") || !strings.Contains(q.Question, form.URL) || !slices.Equal(q.Labels(), []string{"Done", "Open it in my browser", "Decline", "Cancel"}) {
		t.Errorf("asked %+v", q)
	}

	for choice, want := range map[string]string{"Decline": interact.Decline, "Cancel": interact.Cancel} {
		person := &opening{scripted: scripted{answers: []ask.Answer{{Chosen: []string{choice}}}}}
		if reply, err := tb.ToolRequests(person).Elicit(ctx, form); err != nil || reply.Action != want || len(person.opened) != 0 {
			t.Errorf("%s: %+v %v, opened %v", choice, reply, err, person.opened)
		}
	}

	// A terminal that cannot open addresses does not offer to.
	plain := &scripted{answers: []ask.Answer{{Chosen: []string{"Done"}}}}
	if reply, err := tb.ToolRequests(plain).Elicit(ctx, form); err != nil || reply.Action != interact.Accept || slices.Contains(plain.asked[0].Labels(), "Open it in my browser") {
		t.Errorf("plain terminal: %+v %v %+v", reply, err, plain.asked)
	}

	completed := make(chan struct{})
	close(completed)
	waiting := &waitingAsker{}
	done := form
	done.Completed = completed
	if reply, err := tb.ToolRequests(waiting).Elicit(ctx, done); err != nil || reply.Action != interact.Accept {
		t.Errorf("completed: %+v %v", reply, err)
	}

	for _, bad := range []string{"", "javascript:alert(1)", "file:///etc/passwd", "https://user:pw@auth.example.com/"} {
		f := form
		f.URL = bad
		person := &scripted{}
		if _, err := tb.ToolRequests(person).Elicit(ctx, f); err == nil || len(person.asked) != 0 {
			t.Errorf("url %q: %v, asked %d", bad, err, len(person.asked))
		}
	}
}

// waitingAsker answers nothing: it waits until its question is given up.
type waitingAsker struct{}

func (waitingAsker) Ask(ctx context.Context, _ ask.Question) (ask.Answer, error) {
	<-ctx.Done()
	return ask.Answer{}, ctx.Err()
}
