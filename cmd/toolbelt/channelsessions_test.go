package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// A conversation's session survives a restart of toolbelt serve: the
// second server's model is asked with the first server's turn in its
// history, the session is in the store (toolbelt sessions), and a retry of
// the first message after the restart is acknowledged without asking the
// model again.
func TestServeChannelSessionsSurviveRestart(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Noted: the release is on Friday.")},
		llmtest.Response{Body: llmtest.Anthropic("", "You said Friday.")})
	chat := newWebhookChat(t, model.URL, "", "")
	env, cfg := chat.env, chat.cfg
	post := func(addr, id, text string) int { return chat.post(t, addr, id, "thread-9", "ada", text, true) }

	addr, stop := chat.serve(t)
	if code := post(addr, "m1", "the release is on Friday"); code != http.StatusAccepted {
		t.Fatalf("first message: %d", code)
	}
	if ev := chat.answer(t); ev.Text != "Noted: the release is on Friday." {
		t.Fatalf("first answer: %+v", ev)
	}
	stop()

	addr, stop = chat.serve(t)
	defer stop()
	if code := post(addr, "m1", "the release is on Friday"); code != http.StatusOK {
		t.Errorf("a retry of m1 after the restart: %d, want 200", code)
	}
	if code := post(addr, "m2", "when is the release?"); code != http.StatusAccepted {
		t.Fatalf("second message: %d", code)
	}
	if ev := chat.answer(t); ev.Text != "You said Friday." || ev.ReplyTo != "m2" || ev.Conversation != "thread-9" {
		t.Errorf("second answer: %+v", ev)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2 (the retry is not a turn)", len(reqs))
	}
	for _, want := range []string{"the release is on Friday", "Noted: the release is on Friday.", "when is the release?"} {
		if !strings.Contains(string(reqs[1].Body), want) {
			t.Errorf("the second server's request lacks %q of the session's history:\n%s", want, reqs[1].Body)
		}
	}
	r := runCLIWith(t, env, "", "", "--config", cfg, "sessions", "--json").expect(t, 0)
	if !strings.Contains(r.stdout, "agent:helper:chat:thread-9") {
		t.Errorf("toolbelt sessions does not list the conversation's session:\n%s", r.stdout)
	}
}
