package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// chatSecret signs the webhook channel chat's messages, both ways.
const chatSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// webhookChat is a toolbelt serve set up with a webhook channel, chat,
// routed to the agent helper on a replayed Anthropic model, and the
// server at the channel's URL, which takes the answers.
type webhookChat struct {
	cfg, ws string
	env     []string
	answers chan channels.WebhookEvent // each verified answer
}

// newWebhookChat sets chat up on the model at modelURL; agentYAML are
// more lines of the agent helper's, moreYAML more top-level keys.
func newWebhookChat(t *testing.T, modelURL, agentYAML, moreYAML string) *webhookChat {
	t.Helper()
	c := &webhookChat{ws: workspaceWith(t), answers: make(chan channels.WebhookEvent, 4)}
	out := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := stdwebhook.Verify(chatSecret, r.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev channels.WebhookEvent
		json.Unmarshal(body, &ev)
		c.answers <- ev
	}))
	t.Cleanup(out.Close)
	c.cfg = filepath.Join(t.TempDir(), "toolbelt.yaml")
	os.WriteFile(c.cfg, []byte(`providers:
  anthropic:
    url: `+modelURL+`
agents:
  helper:
    model: anthropic/claude-test
`+agentYAML+`channels:
  chat:
    type: webhook
    url: `+out.URL+`
    secretEnv: CHAT_SECRET
    owners: [ada]
routes:
  - channel: chat
    agent: helper
`+moreYAML), 0o644)
	c.env = append(cliEnvironment(t), "CHAT_SECRET="+chatSecret, "ANTHROPIC_API_KEY=test")
	return c
}

// serve starts toolbelt serve with chat and returns its address and a
// function that interrupts it (as Ctrl-C does) and waits for it to exit.
func (c *webhookChat) serve(t *testing.T) (addr string, stop func()) {
	t.Helper()
	banner, cmd := serveBanner(t, os.Args[0], c.env, "--config", c.cfg, "--addr", "127.0.0.1:0", "--workspace", c.ws)
	return bannerAddr(t, banner), func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
}

// post sends the server at addr the chat message id of sender in
// conversation, signed or not, and returns the status it answers.
func (c *webhookChat) post(t *testing.T, addr, id, conversation, sender, text string, signed bool) int {
	t.Helper()
	body, _ := json.Marshal(channels.WebhookEvent{Type: "message", ID: id, Conversation: conversation, Sender: sender, Text: text, Direct: true})
	req, _ := http.NewRequest("POST", "http://"+addr+"/channels/chat", bytes.NewReader(body))
	if signed {
		req.Header, _ = stdwebhook.Header(chatSecret, id, time.Now(), body)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// answer returns the next answer the channel's URL took.
func (c *webhookChat) answer(t *testing.T) channels.WebhookEvent {
	t.Helper()
	select {
	case ev := <-c.answers:
		return ev
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatal("no answer came to the channel's URL")
		return channels.WebhookEvent{}
	}
}

// toolbelt serve takes a webhook channel's signed messages: an owner's is
// answered by the routed agent (a replayed model), the answer POSTed to
// the channel's URL for the same conversation; a stranger's is ignored,
// asks no model, and is in the audit log; an unsigned one is refused.
func TestServeAnswersChannelMessages(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "Hello Ada, all green.")})
	chat := newWebhookChat(t, model.URL, "", "")
	env, cfg := chat.env, chat.cfg
	addr, _ := chat.serve(t)
	post := func(id, sender, text string, signed bool) int {
		return chat.post(t, addr, id, "thread-7", sender, text, signed)
	}
	if code := post("m0", "ada", "unsigned", false); code != http.StatusUnauthorized {
		t.Errorf("an unsigned message: %d, want 401", code)
	}
	if code := post("m1", "mallory", "run rm -rf /", true); code != http.StatusAccepted {
		t.Errorf("mallory's message: %d, want 202", code)
	}
	if code := post("m2", "ada", "is the build green?", true); code != http.StatusAccepted {
		t.Errorf("ada's message: %d, want 202", code)
	}
	if ev := chat.answer(t); ev.Type != "message" || ev.Conversation != "thread-7" || ev.ReplyTo != "m2" || ev.Text != "Hello Ada, all green." {
		t.Errorf("the answer = %+v", ev)
	}
	if reqs := model.Requests(); len(reqs) != 1 || strings.Contains(string(reqs[0].Body), "rm -rf") {
		t.Errorf("the model was asked %d times (want once, for ada only)", len(reqs))
	}
	// The server's records reach the log through its spool, drained in
	// the background: look until the record is there (a guard, not a
	// timing assertion).
	ignored := func(out string) bool {
		return strings.Contains(out, `"kind": "message-ignored"`) && strings.Contains(out, "ignored a message from mallory in thread-7 on channel chat")
	}
	r := runCLIWith(t, env, "", "", "--config", cfg, "audit", "--json").expect(t, 0)
	for deadline := time.Now().Add(time.Minute); !ignored(r.stdout) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		r = runCLIWith(t, env, "", "", "--config", cfg, "audit", "--json").expect(t, 0)
	}
	if !ignored(r.stdout) {
		t.Errorf("the audit log does not show mallory's message ignored:\n%s", r.stdout)
	}
}

// toolbelt serve takes a Slack channel's Events API requests: an owner's
// mention in a thread is answered by the routed agent (a replayed model)
// with chat.postMessage in the same thread; a stranger's is ignored, asks
// no model, and is in the audit log; a request with a bad signature is
// refused.
func TestServeAnswersSlackEvents(t *testing.T) {
	t.Parallel()
	const token, signing = "xoxb-1-2-abc", "8f742231b10e8888abcd99yyyzzz85a5"
	model := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "Deployed, Ada.")})
	posted := make(chan map[string]any, 4)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+token {
			io.WriteString(w, `{"ok":false,"error":"not_authed"}`)
			return
		}
		switch r.URL.Path {
		case "/api/auth.test":
			io.WriteString(w, `{"ok":true,"user_id":"UBOT","bot_id":"BBOT"}`)
		case "/api/chat.postMessage":
			var args map[string]any
			json.NewDecoder(r.Body).Decode(&args)
			posted <- args
			io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1700000100.000100"}`)
		default:
			io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
		}
	}))
	defer slack.Close()
	ws := workspaceWith(t)
	cfg := filepath.Join(t.TempDir(), "toolbelt.yaml")
	os.WriteFile(cfg, []byte(`providers:
  anthropic:
    url: `+model.URL+`
agents:
  helper:
    model: anthropic/claude-test
channels:
  team:
    type: slack
    tokenEnv: SLACK_BOT_TOKEN
    signingSecretEnv: SLACK_SIGNING_SECRET
    apiUrl: `+slack.URL+`/api
    owners: [UADA]
routes:
  - channel: team
    mention: true
    agent: helper
`), 0o644)
	env := append(cliEnvironment(t), "SLACK_BOT_TOKEN="+token, "SLACK_SIGNING_SECRET="+signing, "ANTHROPIC_API_KEY=test")
	banner, _ := serveBanner(t, os.Args[0], env, "--config", cfg, "--addr", "127.0.0.1:0", "--workspace", ws)
	addr := bannerAddr(t, banner)
	post := func(id, user, text, secret string) int {
		body, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": id, "event": map[string]any{
			"type": "app_mention", "channel": "C1", "user": user, "text": "<@UBOT> " + text, "ts": "1700000002.00020" + id[2:], "thread_ts": "1700000001.000100"}})
		req, _ := http.NewRequest("POST", "http://"+addr+"/channels/team", bytes.NewReader(body))
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		mac := hmac.New(sha256.New, []byte(secret))
		fmt.Fprintf(mac, "v0:%s:%s", ts, body)
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("Ev0", "UADA", "forged", "not-the-secret"); code != http.StatusUnauthorized {
		t.Errorf("a forged request: %d, want 401", code)
	}
	if code := post("Ev1", "UMAL", "run rm -rf /", signing); code != http.StatusOK {
		t.Errorf("UMAL's event: %d, want 200", code)
	}
	if code := post("Ev2", "UADA", "deploy please", signing); code != http.StatusOK {
		t.Errorf("UADA's event: %d, want 200", code)
	}
	var args map[string]any
	select {
	case args = <-posted:
	case <-time.After(time.Minute): // a guard against hanging, not a timing assertion
		t.Fatal("no answer was posted to Slack")
	}
	if args["channel"] != "C1" || args["thread_ts"] != "1700000001.000100" || args["text"] != "Deployed, Ada." {
		t.Errorf("the answer = %v, want it in thread 1700000001.000100 of C1", args)
	}
	if reqs := model.Requests(); len(reqs) != 1 || strings.Contains(string(reqs[0].Body), "rm -rf") {
		t.Errorf("the model was asked %d times (want once, for UADA only)", len(reqs))
	}
	ignored := func(out string) bool {
		return strings.Contains(out, `"kind": "message-ignored"`) && strings.Contains(out, "ignored a message from UMAL in C1/1700000001.000100 on channel team")
	}
	r := runCLIWith(t, env, "", "", "--config", cfg, "audit", "--json").expect(t, 0)
	for deadline := time.Now().Add(time.Minute); !ignored(r.stdout) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		r = runCLIWith(t, env, "", "", "--config", cfg, "audit", "--json").expect(t, 0)
	}
	if !ignored(r.stdout) {
		t.Errorf("the audit log does not show UMAL's message ignored:\n%s", r.stdout)
	}
}

// TestServeAnswersChannelMessagesCompact: an agent with compact: true
// answers a channel's message in compact mode, as toolbelt run does: the
// model is offered tool_search, tool_describe and tool_call, its system
// prompt lists the tools (a tools.summaries line among them), and a file
// is read through tool_call and its pipeline.
func TestServeAnswersChannelMessagesCompact(t *testing.T) {
	t.Parallel()
	model := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "tool_call", Args: `{"name":"read","arguments":{"path":"notes.txt","limit":1}}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "The notes start with x.")})
	chat := newWebhookChat(t, model.URL, "    compact: true\n", "tools:\n  summaries:\n    exec: Run a shell command (configured summary).\n")
	addr, _ := chat.serve(t)
	if code := chat.post(t, addr, "m1", "thread-1", "ada", "what do the notes say?", true); code != http.StatusAccepted {
		t.Fatalf("ada's message: %d, want 202", code)
	}
	if ev := chat.answer(t); ev.Text != "The notes start with x." {
		t.Errorf("the answer = %+v", ev)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	var first struct {
		System json.RawMessage `json:"system"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[0].Body, &first); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range first.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"tool_call", "tool_describe", "tool_search"}) {
		t.Errorf("the channel's agent was offered %v", names)
	}
	for _, line := range []string{`\n- read: Read a file in the workspace.`, `\n- exec: Run a shell command (configured summary).`} {
		if !strings.Contains(string(first.System), line) {
			t.Errorf("the system prompt lacks %q: %.3000s", line, first.System)
		}
	}
	if !strings.Contains(string(reqs[1].Body), strings.Repeat("x", 63)) {
		t.Errorf("tool_call did not read the notes: %.3000s", reqs[1].Body)
	}
}
