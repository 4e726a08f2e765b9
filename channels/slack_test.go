package channels_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

const (
	slackToken   = "xoxb-1234-5678-abcdefghijkl"
	slackSigning = "8f742231b10e8888abcd99yyyzzz85a5"
)

// env is an Options.Getenv over a map.
func env(vars map[string]string) channels.Options {
	return channels.Options{Getenv: func(k string) string { return vars[k] }}
}

// apiCall is one request a fake API took: its method and arguments.
type apiCall struct {
	Method string
	Args   map[string]any
}

// slackFake is Slack's Web API as documented: POST /api/METHOD with a
// bearer token, JSON or form-encoded arguments, {"ok":…} answers; an
// upload URL that takes a file's bytes.
type slackFake struct {
	*httptest.Server
	t       *testing.T
	mu      sync.Mutex
	calls   []apiCall
	uploads map[string][]byte
	ts      int
	limited []string // Retry-After values of the next 429 answers
	posted  chan apiCall
}

func newSlackFake(t *testing.T) *slackFake {
	f := &slackFake{t: t, uploads: map[string][]byte{}, posted: make(chan apiCall, 10)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *slackFake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if id, ok := strings.CutPrefix(r.URL.Path, "/upload/"); ok {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "the upload URL takes no token", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.uploads[id] = body
		f.mu.Unlock()
		fmt.Fprintf(w, "OK - %d", len(body))
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	reply := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	if r.Header.Get("Authorization") != "Bearer "+slackToken {
		reply(map[string]any{"ok": false, "error": "not_authed"})
		return
	}
	f.mu.Lock()
	if len(f.limited) > 0 {
		w.Header().Set("Retry-After", f.limited[0])
		f.limited = f.limited[1:]
		f.mu.Unlock()
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	f.mu.Unlock()
	args := map[string]any{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		if err := json.Unmarshal(body, &args); err != nil {
			reply(map[string]any{"ok": false, "error": "invalid_json"})
			return
		}
	case "application/x-www-form-urlencoded":
		form, _ := url.ParseQuery(string(body))
		for k := range form {
			args[k] = form.Get(k)
		}
	default:
		reply(map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{method, args})
	f.mu.Unlock()
	switch method {
	case "auth.test":
		reply(map[string]any{"ok": true, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T1"})
	case "chat.postMessage":
		if args["channel"] == "CNOPE" {
			reply(map[string]any{"ok": false, "error": "channel_not_found"})
			return
		}
		f.mu.Lock()
		f.ts++
		ts := fmt.Sprintf("1700000100.%06d", f.ts)
		f.mu.Unlock()
		f.posted <- apiCall{method, args}
		reply(map[string]any{"ok": true, "channel": args["channel"], "ts": ts, "message": map[string]any{"text": args["text"], "user": "UBOT", "ts": ts}})
	case "reactions.add", "chat.update", "chat.delete":
		reply(map[string]any{"ok": true})
	case "conversations.history":
		reply(map[string]any{"ok": true, "messages": []map[string]any{
			{"type": "message", "user": "UBOT", "text": "on it", "ts": "1700000002.000200", "thread_ts": "1700000001.000100"},
			{"type": "message", "user": "UADA", "text": "deploy?", "ts": "1700000001.000100"},
		}})
	case "conversations.replies":
		reply(map[string]any{"ok": true, "messages": []map[string]any{
			{"type": "message", "user": "UADA", "text": "deploy?", "ts": args["ts"], "thread_ts": args["ts"]},
			{"type": "message", "user": "UBOT", "text": "on it", "ts": "1700000002.000200", "thread_ts": args["ts"]},
		}})
	case "files.getUploadURLExternal":
		if ct != "application/x-www-form-urlencoded" || args["filename"] == "" || args["length"] == "" {
			reply(map[string]any{"ok": false, "error": "invalid_arguments"})
			return
		}
		reply(map[string]any{"ok": true, "upload_url": f.URL + "/upload/F1", "file_id": "F1"})
	case "files.completeUploadExternal":
		files, _ := args["files"].([]any)
		f.mu.Lock()
		_, uploaded := f.uploads["F1"]
		f.mu.Unlock()
		if len(files) != 1 || !uploaded {
			reply(map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		reply(map[string]any{"ok": true, "files": files})
	default:
		reply(map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// limit makes the next answers 429s asking to wait retryAfter each.
func (f *slackFake) limit(retryAfter ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited = retryAfter
}

// call returns the args of the last call of method.
func (f *slackFake) call(method string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].Method == method {
			return f.calls[i].Args
		}
	}
	return nil
}

func slackChannel(f *slackFake, owners ...string) config.Channel {
	return config.Channel{Type: "slack", TokenEnv: "SLACK_TOKEN", SigningSecretEnv: "SLACK_SIGNING", APIURL: f.URL + "/api", Owners: owners}
}

var slackEnv = env(map[string]string{"SLACK_TOKEN": slackToken, "SLACK_SIGNING": slackSigning})

// Each action of the Slack channel is the Web API call Slack documents.
func TestSlackActions(t *testing.T) {
	t.Parallel()
	f := newSlackFake(t)
	a, err := channels.New("team", slackChannel(f), slackEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	m, err := a.Send(ctx, channels.Outgoing{Target: "C1", Text: "build is green", ReplyTo: "1700000001.000100",
		Attachments: []channels.Attachment{{Name: "report.txt", MIMEType: "text/plain", Data: []byte("all green\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	if post := f.call("chat.postMessage"); post["channel"] != "C1" || post["text"] != "build is green" || post["thread_ts"] != "1700000001.000100" {
		t.Errorf("chat.postMessage got %v, want the text in thread 1700000001.000100", post)
	}
	if m.ID != "1700000100.000001" || m.Conversation != "C1/1700000001.000100" {
		t.Errorf("sent = %+v", m)
	}
	if up := f.call("files.getUploadURLExternal"); up["filename"] != "report.txt" || up["length"] != "10" {
		t.Errorf("files.getUploadURLExternal got %v", up)
	}
	f.mu.Lock()
	uploaded := string(f.uploads["F1"])
	f.mu.Unlock()
	if uploaded != "all green\n" {
		t.Errorf("uploaded %q", uploaded)
	}
	if done := f.call("files.completeUploadExternal"); done["channel_id"] != "C1" || done["thread_ts"] != "1700000001.000100" {
		t.Errorf("files.completeUploadExternal got %v", done)
	}

	if _, err := a.Send(ctx, channels.Outgoing{Target: "C1/1700000001.000100", Text: "more", ReplyTo: "1700000009.000900"}); err != nil {
		t.Fatal(err)
	}
	if post := f.call("chat.postMessage"); post["thread_ts"] != "1700000001.000100" {
		t.Errorf("a thread's target: thread_ts %v, want the thread's", post["thread_ts"])
	}

	if err := a.React(ctx, "C1/1700000001.000100", "1700000001.000100", "👍"); err != nil {
		t.Fatal(err)
	}
	if r := f.call("reactions.add"); r["channel"] != "C1" || r["timestamp"] != "1700000001.000100" || r["name"] != "thumbsup" {
		t.Errorf("reactions.add got %v", r)
	}
	if err := a.React(ctx, "C1", "1700000001.000100", "🦩"); err == nil || !strings.Contains(err.Error(), "emoji's name") {
		t.Errorf("an unknown emoji character: %v", err)
	}
	if err := a.Edit(ctx, "C1", "1700000100.000001", "build is red"); err != nil {
		t.Fatal(err)
	}
	if u := f.call("chat.update"); u["channel"] != "C1" || u["ts"] != "1700000100.000001" || u["text"] != "build is red" {
		t.Errorf("chat.update got %v", u)
	}
	if err := a.Delete(ctx, "C1", "1700000100.000001"); err != nil {
		t.Fatal(err)
	}
	if d := f.call("chat.delete"); d["channel"] != "C1" || d["ts"] != "1700000100.000001" {
		t.Errorf("chat.delete got %v", d)
	}

	got, err := a.Read(ctx, "C1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "deploy?" || got[0].Sender != "UADA" || got[1].Text != "on it" || got[1].ReplyTo != "1700000001.000100" ||
		got[0].Conversation != "C1/1700000001.000100" || got[1].Conversation != "C1/1700000001.000100" {
		t.Errorf("read C1 = %+v, want oldest first in the thread's conversation", got)
	}
	if got, err := a.Read(ctx, "C1/1700000001.000100", 1); err != nil || len(got) != 1 || got[0].Text != "on it" {
		t.Errorf("read a thread's latest = %+v, %v", got, err)
	}
	if r := f.call("conversations.replies"); r["channel"] != "C1" || r["ts"] != "1700000001.000100" {
		t.Errorf("conversations.replies got %v", r)
	}

	_, err = a.Send(ctx, channels.Outgoing{Target: "CNOPE", Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") || !strings.Contains(err.Error(), "channel id") {
		t.Errorf("an unknown channel: %v", err)
	}
	if _, err := a.Send(ctx, channels.Outgoing{Target: "#general", Text: "hi"}); err == nil || !strings.Contains(err.Error(), "not a Slack conversation") {
		t.Errorf("a channel's name as target: %v", err)
	}
}

// A 429 is waited out as Retry-After asks, within a bound; a longer wait
// is an error saying when to try again. Errors never carry the token.
func TestSlackRateLimitAndAuth(t *testing.T) {
	t.Parallel()
	f := newSlackFake(t)
	a, _ := channels.New("team", slackChannel(f), slackEnv)
	ctx := context.Background()
	f.limit("1")
	if _, err := a.Send(ctx, channels.Outgoing{Target: "C1", Text: "after a wait"}); err != nil {
		t.Errorf("a send after one 429: %v", err)
	}
	f.limit("3600")
	_, err := a.Send(ctx, channels.Outgoing{Target: "C1", Text: "too soon"})
	if err == nil || !strings.Contains(err.Error(), "rate limiting") || !strings.Contains(err.Error(), "1h0m0s") {
		t.Errorf("a 429 asking for an hour: %v", err)
	}
	bad, _ := channels.New("team", slackChannel(f), env(map[string]string{"SLACK_TOKEN": "xoxb-wrong", "SLACK_SIGNING": slackSigning}))
	err = bad.Start(ctx, func(channels.Message) {})
	if err == nil || !strings.Contains(err.Error(), "not_authed") || !strings.Contains(err.Error(), "$SLACK_TOKEN") || strings.Contains(err.Error(), "xoxb-wrong") {
		t.Errorf("a wrong token: %v", err)
	}
	unset, _ := channels.New("team", slackChannel(f), env(nil))
	if err := unset.Start(ctx, func(channels.Message) {}); err == nil || !strings.Contains(err.Error(), "$SLACK_SIGNING, which is not set") {
		t.Errorf("no signing secret: %v", err)
	}
}

// slackEvents posts Events API requests to a started hub's handlers,
// signed with secret at time at.
type slackEvents struct {
	t      *testing.T
	url    string
	secret string
}

func serveHub(t *testing.T, hub *channels.Hub) string {
	mux := http.NewServeMux()
	for p, h := range hub.Handlers() {
		mux.Handle("POST "+p, h)
	}
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s.URL
}

func (e slackEvents) post(body string, at time.Time, sign bool) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	if sign {
		mac := hmac.New(sha256.New, []byte(e.secret))
		fmt.Fprintf(mac, "v0:%s:%s", ts, body)
		req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func slackEvent(id string, ev map[string]any) string {
	b, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": "T1", "event_id": id, "event_time": 1700000001, "event": ev})
	return string(b)
}

// The Events API's requests: the challenge answered, signatures and
// timestamps checked, a retry and a message's second event (app_mention)
// dropped, the bot's own messages, other bots' and edits ignored; a
// mention taken out of the text.
func TestSlackEvents(t *testing.T) {
	t.Parallel()
	f := newSlackFake(t)
	hub, err := channels.NewHub(map[string]config.Channel{"team": slackChannel(f)}, slackEnv)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan channels.Message, 10)
	ctx := context.Background()
	if err := hub.Start(ctx, func(m channels.Message) { got <- m }); err != nil {
		t.Fatal(err)
	}
	defer hub.Stop(ctx)
	ev := slackEvents{t, serveHub(t, hub) + "/channels/team", slackSigning}
	now := time.Now()

	if code, body := ev.post(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`, now, true); code != 200 || !strings.Contains(body, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P") {
		t.Errorf("url_verification: %d %s", code, body)
	}
	msg := map[string]any{"type": "message", "channel": "C1", "channel_type": "channel", "user": "UADA", "text": "<@UBOT> deploy?", "ts": "1700000001.000100"}
	if code, _ := ev.post(slackEvent("Ev1", msg), now, false); code != http.StatusUnauthorized {
		t.Errorf("an unsigned event: %d, want 401", code)
	}
	if code, _ := ev.post(slackEvent("Ev1", msg), now.Add(-6*time.Minute), true); code != http.StatusUnauthorized {
		t.Errorf("an event signed six minutes ago: %d, want 401", code)
	}
	for _, id := range []string{"Ev1", "Ev1"} { // the second a retry
		if code, _ := ev.post(slackEvent(id, msg), now, true); code != 200 {
			t.Errorf("event %s: %d", id, code)
		}
	}
	mention := map[string]any{"type": "app_mention", "channel": "C1", "user": "UADA", "text": "<@UBOT> deploy?", "ts": "1700000001.000100"}
	ev.post(slackEvent("Ev2", mention), now, true)
	for i, m := range []map[string]any{
		{"type": "message", "channel": "C1", "user": "UBOT", "text": "on it", "ts": "1700000002.000200"},
		{"type": "message", "subtype": "bot_message", "channel": "C1", "bot_id": "B2", "text": "beep", "ts": "1700000003.000300"},
		{"type": "message", "subtype": "message_changed", "channel": "C1", "ts": "1700000004.000400"},
	} {
		ev.post(slackEvent("Ev"+strconv.Itoa(3+i), m), now, true)
	}
	reply := map[string]any{"type": "message", "channel": "D9", "channel_type": "im", "user": "UADA", "text": "and now?", "ts": "1700000005.000500", "thread_ts": "1700000001.000100"}
	ev.post(slackEvent("Ev6", reply), now, true)

	first := receive(t, got)
	if first.ID != "1700000001.000100" || first.Conversation != "C1/1700000001.000100" || first.Sender != "UADA" || first.Text != "deploy?" || !first.Mention || first.Direct {
		t.Errorf("first message = %+v", first)
	}
	second := receive(t, got)
	if second.ID != "1700000005.000500" || second.Conversation != "D9/1700000001.000100" || second.ReplyTo != "1700000001.000100" || !second.Direct || !second.Mention {
		t.Errorf("second message = %+v (a retry, a second event or a bot's message came through?)", second)
	}
	select {
	case m := <-got:
		t.Errorf("one more message came: %+v", m)
	default:
	}
}

// Two gateways on one store, Slack's events reaching both (the same
// message's message and app_mention events, and retries): each message is
// passed on by exactly one of them, once.
func TestSlackEventsOnceAcrossGateways(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		f := newSlackFake(t)
		got := make(chan channels.Message, 100)
		var gateways []slackEvents
		for range 2 {
			o := slackEnv
			o.State = storetest.Open(t, dsn).ChannelState()
			hub, err := channels.NewHub(map[string]config.Channel{"team": slackChannel(f)}, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := hub.Start(context.Background(), func(m channels.Message) { got <- m }); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { hub.Stop(context.Background()) })
			gateways = append(gateways, slackEvents{t, serveHub(t, hub) + "/channels/team", slackSigning})
		}
		const n = 10
		var wg sync.WaitGroup
		for i := range n {
			ts := fmt.Sprintf("1700000001.%06d", i)
			for j, kind := range []string{"message", "app_mention", "message", "app_mention"} {
				ev := map[string]any{"type": kind, "channel": "C1", "channel_type": "channel", "user": "UADA", "text": "<@UBOT> deploy?", "ts": ts}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if code, body := gateways[j%2].post(slackEvent(fmt.Sprintf("Ev%d-%s", i, kind), ev), time.Now(), true); code != 200 {
						t.Errorf("%s of %s: %d %s", kind, ts, code, body)
					}
				}()
			}
		}
		wg.Wait()
		taken := map[string]int{}
		for len(got) > 0 {
			taken[(<-got).ID]++
		}
		for i := range n {
			if ts := fmt.Sprintf("1700000001.%06d", i); taken[ts] != 1 {
				t.Errorf("message %s was passed on %d times, want once", ts, taken[ts])
			}
		}
	})
}

// An owner's message in a Slack thread is answered by the routed agent's
// session in that thread; a stranger's is ignored and audited, and no
// model is asked for it.
func TestSlackAnsweredByAgent(t *testing.T) {
	t.Parallel()
	f := newSlackFake(t)
	model := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "Deployed, Ada.")})
	sessions, turns := replayed(t, model)
	hub, err := channels.NewHub(map[string]config.Channel{"team": slackChannel(f, "UADA")}, slackEnv)
	if err != nil {
		t.Fatal(err)
	}
	recs := newRecords()
	router := channels.NewRouter(hub, []config.Route{{Channel: "team", Room: "C1", Mention: true, Agent: "helper"}}, sessions, recs, nil)
	ctx := context.Background()
	if err := router.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer router.Stop(ctx)
	ev := slackEvents{t, serveHub(t, hub) + "/channels/team", slackSigning}

	ev.post(slackEvent("Ev1", map[string]any{"type": "app_mention", "channel": "C1", "user": "UMAL", "text": "<@UBOT> rm -rf /", "ts": "1700000000.000050"}), time.Now(), true)
	rec := receive(t, recs.got)
	if rec.Kind != audit.KindMessageIgnored || rec.Principal != "UMAL" || rec.Channel != "team" {
		t.Errorf("audit record = %+v, want UMAL's message ignored", rec)
	}
	ev.post(slackEvent("Ev2", map[string]any{"type": "app_mention", "channel": "C1", "user": "UADA", "text": "<@UBOT> deploy please",
		"ts": "1700000003.000300", "thread_ts": "1700000001.000100"}), time.Now(), true)
	post := receive(t, f.posted)
	if post.Args["channel"] != "C1" || post.Args["thread_ts"] != "1700000001.000100" || post.Args["text"] != "Deployed, Ada." {
		t.Errorf("the answer = %v, want it in thread 1700000001.000100 of C1", post.Args)
	}
	turn := receive(t, turns)
	if want := "agent:helper:team:c1/1700000001.000100"; turn.SessionKey != want || !turn.Owner || turn.Message.Text != "deploy please" {
		t.Errorf("turn = %+v, want session %s", turn, want)
	}
	if reqs := model.Requests(); len(reqs) != 1 || bytes.Contains(reqs[0].Body, []byte("rm -rf")) {
		t.Errorf("the model was asked %d times (want once, for UADA only)", len(reqs))
	}
}
