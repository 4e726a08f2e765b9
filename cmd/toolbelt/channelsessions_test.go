package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// A conversation's session survives a restart of toolbelt serve: the
// second server's model is asked with the first server's turn in its
// history, the session is in the store (toolbelt sessions), and a retry of
// the first message after the restart is acknowledged without asking the
// model again.
func TestServeChannelSessionsSurviveRestart(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	model := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Noted: the release is on Friday.")},
		llmtest.Response{Body: llmtest.Anthropic("", "You said Friday.")})
	answers := make(chan channels.WebhookEvent, 4)
	out := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev channels.WebhookEvent
		json.Unmarshal(body, &ev)
		answers <- ev
	}))
	defer out.Close()
	ws := workspaceWith(t)
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	os.WriteFile(cfg, []byte(`providers:
  anthropic:
    url: `+model.URL+`
agents:
  helper:
    model: anthropic/claude-test
channels:
  chat:
    type: webhook
    url: `+out.URL+`
    secretEnv: CHAT_SECRET
    owners: [ada]
routes:
  - channel: chat
    agent: helper
`), 0o644)
	env := append(cliEnvironment(t), "CHAT_SECRET="+secret, "ANTHROPIC_API_KEY=test")
	serve := func() (addr string, stop func()) {
		banner, cmd := serveBanner(t, os.Args[0], env, "--config", cfg, "--addr", "127.0.0.1:0", "--workspace", ws)
		m := regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+)/mcp`).FindStringSubmatch(banner)
		if m == nil {
			t.Fatalf("banner:\n%s", banner)
		}
		return m[1], func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	}
	post := func(addr, id, text string) int {
		body, _ := json.Marshal(channels.WebhookEvent{Type: "message", ID: id, Conversation: "thread-9", Sender: "ada", Text: text, Direct: true})
		req, _ := http.NewRequest("POST", "http://"+addr+"/channels/chat", bytes.NewReader(body))
		req.Header, _ = stdwebhook.Header(secret, id, time.Now(), body)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	answer := func() channels.WebhookEvent {
		select {
		case ev := <-answers:
			return ev
		case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
			t.Fatal("no answer came to the channel's URL")
			return channels.WebhookEvent{}
		}
	}

	addr, stop := serve()
	if code := post(addr, "m1", "the release is on Friday"); code != http.StatusAccepted {
		t.Fatalf("first message: %d", code)
	}
	if ev := answer(); ev.Text != "Noted: the release is on Friday." {
		t.Fatalf("first answer: %+v", ev)
	}
	stop()

	addr, stop = serve()
	defer stop()
	if code := post(addr, "m1", "the release is on Friday"); code != http.StatusOK {
		t.Errorf("a retry of m1 after the restart: %d, want 200", code)
	}
	if code := post(addr, "m2", "when is the release?"); code != http.StatusAccepted {
		t.Fatalf("second message: %d", code)
	}
	if ev := answer(); ev.Text != "You said Friday." || ev.ReplyTo != "m2" || ev.Conversation != "thread-9" {
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
