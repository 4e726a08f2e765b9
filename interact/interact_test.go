package interact_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/interact"
)

// TestGovern: a request a person could not answer is refused before it
// reaches the client, one without a client says nobody can answer, and
// each is recorded where the call's context says, with what was asked.
func TestGovern(t *testing.T) {
	t.Parallel()
	var got []audit.Request
	ctx := interact.WithRecorder(context.Background(), func(r audit.Request) { got = append(got, r) })
	g := interact.Govern(nil, interact.Rules{})
	cases := []struct {
		name string
		run  func() error
		want string // in the error
		is   error
	}{
		{"no message", func() error { _, err := g.Elicit(ctx, interact.Form{}); return err }, "needs a message", nil},
		{"not an object", func() error {
			_, err := g.Elicit(ctx, interact.Form{Message: "x", Schema: map[string]any{"type": "string"}})
			return err
		}, `must be {"type": "object"`, nil},
		{"nobody", func() error {
			_, err := g.Elicit(ctx, interact.Form{Message: "Name?", Schema: map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{}, "a": map[string]any{}}}})
			return err
		}, "no front door answers", interact.ErrUnsupported},
		{"no messages", func() error { _, err := g.Sample(ctx, interact.Prompt{}); return err }, "at least one message", nil},
		{"bad role", func() error {
			_, err := g.Sample(ctx, interact.Prompt{Messages: []interact.Message{{Role: "system", Text: "x"}}})
			return err
		}, `role "system"`, nil},
		{"too many tokens", func() error {
			_, err := g.Sample(ctx, interact.Prompt{Messages: []interact.Message{{Role: "user", Text: "x"}}, MaxTokens: interact.MaxSampleTokens + 1})
			return err
		}, "give a number from 1 to 8192", nil},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	outcomes := []string{}
	for _, r := range got {
		outcomes = append(outcomes, r.Kind+":"+r.Outcome)
	}
	if strings.Join(outcomes, " ") != "elicitation:invalid elicitation:invalid elicitation:unsupported sampling:invalid sampling:invalid sampling:invalid" {
		t.Errorf("recorded %v", outcomes)
	}
	if strings.Join(got[2].Fields, ",") != "a,b" || got[2].Message != "Name?" {
		t.Errorf("recorded %+v", got[2])
	}
	// Outside the pipeline nothing is recorded, and nothing breaks.
	if _, err := g.Sample(context.Background(), interact.Prompt{Messages: []interact.Message{{Role: "user", Text: "hi"}}}); !errors.Is(err, interact.ErrUnsupported) {
		t.Errorf("sample without a client: %v", err)
	}
}

// urlClient fails every request, naming the address it was given.
type urlClient struct{}

func (urlClient) Elicit(_ context.Context, f interact.Form) (interact.Reply, error) {
	return interact.Reply{}, errors.New("nobody went to " + f.URL)
}

func (urlClient) Sample(context.Context, interact.Prompt) (interact.Completion, error) {
	return interact.Completion{}, interact.ErrUnsupported
}

// TestURLRequests: a url-mode request is refused for plain http to another
// machine (loopback is fine), and neither its audit record nor the error a
// tool gets carries more of the address than its host: its path and query
// may hold tokens.
func TestURLRequests(t *testing.T) {
	t.Parallel()
	var got []audit.Request
	ctx := interact.WithRecorder(context.Background(), func(r audit.Request) { got = append(got, r) })
	g := interact.Govern(urlClient{}, interact.Rules{})
	form := func(u string) interact.Form {
		return interact.Form{Message: "Sign in", Mode: interact.ModeURL, URL: u}
	}
	if _, err := g.Elicit(ctx, form("http://pay.example.com/checkout?token=s3cret")); err == nil || !strings.Contains(err.Error(), "use https") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("plain http to another machine: %v", err)
	}
	_, err := g.Elicit(ctx, form("https://pay.example.com/checkout?token=s3cret"))
	if err == nil || err.Error() != "nobody went to the address at pay.example.com" {
		t.Errorf("a failed request's error: %v", err)
	}
	if _, err := g.Elicit(ctx, form("http://127.0.0.1:8080/done")); err == nil || strings.Contains(err.Error(), "use https") {
		t.Errorf("plain http to loopback: %v", err)
	}
	for _, r := range got {
		if strings.Contains(r.Reason, "s3cret") || strings.Contains(r.Reason, "/checkout") || r.Mode != interact.ModeURL {
			t.Errorf("recorded %+v", r)
		}
	}
	if len(got) != 3 || got[1].Host != "pay.example.com" || got[1].Outcome != "failed" {
		t.Errorf("recorded %+v", got)
	}
}
