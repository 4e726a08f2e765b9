package channels_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

const telegramToken = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"

// telegramFake is Telegram's Bot API as documented: POST
// /bot<token>/METHOD with JSON (or multipart for files), answers
// {"ok":true,"result":…} or {"ok":false,"error_code","description"};
// getUpdates long-polls the updates queued with offset.
type telegramFake struct {
	*httptest.Server
	mu      sync.Mutex
	calls   []apiCall
	files   map[string]string // sendDocument's files: name → content
	updates []map[string]any
	queued  chan struct{}
	offsets []float64
	limited []int
	nextID  int
	sent    chan apiCall
}

func newTelegramFake(t *testing.T) *telegramFake {
	f := &telegramFake{files: map[string]string{}, queued: make(chan struct{}, 100), nextID: 500, sent: make(chan apiCall, 10)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// queue adds an update with a message.
func (f *telegramFake) queue(id int, msg map[string]any) {
	f.mu.Lock()
	f.updates = append(f.updates, map[string]any{"update_id": id, "message": msg})
	f.mu.Unlock()
	f.queued <- struct{}{}
}

func (f *telegramFake) serve(w http.ResponseWriter, r *http.Request) {
	reply := func(code int, v map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, _ := strings.Cut(rest, "/")
	if !ok || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if token != telegramToken {
		reply(401, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	f.mu.Lock()
	if len(f.limited) > 0 {
		after := f.limited[0]
		f.limited = f.limited[1:]
		f.mu.Unlock()
		reply(429, map[string]any{"ok": false, "error_code": 429, "description": fmt.Sprintf("Too Many Requests: retry after %d", after), "parameters": map[string]any{"retry_after": after}})
		return
	}
	f.mu.Unlock()
	args := map[string]any{}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &args); err != nil {
			reply(400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: can't parse JSON"})
			return
		}
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			if p.FileName() != "" {
				f.mu.Lock()
				f.files[p.FormName()+":"+p.FileName()] = string(b)
				f.mu.Unlock()
				continue
			}
			args[p.FormName()] = string(b)
		}
	default:
		reply(400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: unsupported content type"})
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{method, args})
	f.mu.Unlock()
	switch method {
	case "getMe":
		reply(200, map[string]any{"ok": true, "result": map[string]any{"id": 42, "is_bot": true, "first_name": "Toolbelt", "username": "toolbelt_bot"}})
	case "getUpdates":
		offset, _ := args["offset"].(float64)
		wait, _ := args["timeout"].(float64)
		f.mu.Lock()
		f.offsets = append(f.offsets, offset)
		f.mu.Unlock()
		deadline := time.After(time.Duration(wait) * time.Second)
		for {
			f.mu.Lock()
			var out []map[string]any
			for _, u := range f.updates {
				if float64(u["update_id"].(int)) >= offset {
					out = append(out, u)
				}
			}
			f.mu.Unlock()
			if len(out) > 0 || wait == 0 {
				reply(200, map[string]any{"ok": true, "result": append([]map[string]any{}, out...)})
				return
			}
			select {
			case <-f.queued:
			case <-deadline:
				reply(200, map[string]any{"ok": true, "result": []any{}})
				return
			case <-r.Context().Done():
				return
			}
		}
	case "sendMessage", "sendDocument":
		if args["chat_id"] == "-1009" {
			reply(400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: chat not found"})
			return
		}
		f.mu.Lock()
		f.nextID++
		id := f.nextID
		f.mu.Unlock()
		f.sent <- apiCall{method, args}
		reply(200, map[string]any{"ok": true, "result": map[string]any{"message_id": id, "date": 1700000000, "text": args["text"],
			"chat": map[string]any{"id": -1001, "type": "supergroup"}, "from": map[string]any{"id": 42, "is_bot": true, "username": "toolbelt_bot"}}})
	case "setMessageReaction", "editMessageText", "deleteMessage":
		if _, ok := args["message_id"].(float64); !ok {
			reply(400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: message_id must be a number"})
			return
		}
		reply(200, map[string]any{"ok": true, "result": true})
	default:
		reply(404, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"})
	}
}

func (f *telegramFake) call(method string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].Method == method {
			return f.calls[i].Args
		}
	}
	return nil
}

func telegramChannel(f *telegramFake, owners ...string) config.Channel {
	return config.Channel{Type: "telegram", TokenEnv: "TG_TOKEN", APIURL: f.URL, Owners: owners}
}

var telegramEnv = env(map[string]string{"TG_TOKEN": telegramToken})

// Each action of the Telegram channel is the Bot API call Telegram
// documents; read returns what the channel sent; 429s are waited out
// within a bound; the token, which is in the API's URLs, is in no error.
func TestTelegramActions(t *testing.T) {
	t.Parallel()
	f := newTelegramFake(t)
	a, err := channels.New("tg", telegramChannel(f), telegramEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := a.Send(ctx, channels.Outgoing{Target: "-1001", Text: "build is green", ReplyTo: "77",
		Attachments: []channels.Attachment{{Name: "report.txt", MIMEType: "text/plain", Data: []byte("all green\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	send := f.call("sendMessage")
	rp, _ := send["reply_parameters"].(map[string]any)
	if send["chat_id"] != "-1001" || send["text"] != "build is green" || rp["message_id"] != 77.0 {
		t.Errorf("sendMessage got %v, want a reply to 77", send)
	}
	if doc := f.call("sendDocument"); doc["chat_id"] != "-1001" || !strings.Contains(fmt.Sprint(doc["reply_parameters"]), `"message_id":77`) {
		t.Errorf("sendDocument got %v", doc)
	}
	f.mu.Lock()
	file := f.files["document:report.txt"]
	f.mu.Unlock()
	if file != "all green\n" {
		t.Errorf("the document sent = %q", file)
	}
	if m.ID != "501" || m.Conversation != "-1001" || m.Sender != "tg" {
		t.Errorf("sent = %+v", m)
	}
	if err := a.React(ctx, "-1001", "501", "thumbsup"); err != nil {
		t.Fatal(err)
	}
	if r := f.call("setMessageReaction"); r["message_id"] != 501.0 || fmt.Sprint(r["reaction"]) != "[map[emoji:👍 type:emoji]]" {
		t.Errorf("setMessageReaction got %v", r)
	}
	if err := a.Edit(ctx, "-1001", "501", "build is red"); err != nil {
		t.Fatal(err)
	}
	if e := f.call("editMessageText"); e["chat_id"] != "-1001" || e["message_id"] != 501.0 || e["text"] != "build is red" {
		t.Errorf("editMessageText got %v", e)
	}
	if err := a.Delete(ctx, "-1001", "501"); err != nil {
		t.Fatal(err)
	}
	if d := f.call("deleteMessage"); d["chat_id"] != "-1001" || d["message_id"] != 501.0 {
		t.Errorf("deleteMessage got %v", d)
	}
	if err := a.Delete(ctx, "-1001", "msg-1"); err == nil || !strings.Contains(err.Error(), "not a Telegram message id") {
		t.Errorf("a messageId that is not a number: %v", err)
	}
	if got, _ := a.Read(ctx, "-1001", 10); len(got) != 1 || got[0].Text != "build is green" {
		t.Errorf("read = %+v, want what was sent", got)
	}
	if _, err := a.Send(ctx, channels.Outgoing{Target: "-1009", Text: "hi"}); err == nil || !strings.Contains(err.Error(), "400 Bad Request: chat not found") {
		t.Errorf("an unknown chat: %v", err)
	}

	f.mu.Lock()
	f.limited = []int{1}
	f.mu.Unlock()
	if _, err := a.Send(ctx, channels.Outgoing{Target: "-1001", Text: "after a wait"}); err != nil {
		t.Errorf("a send after one 429: %v", err)
	}
	f.mu.Lock()
	f.limited = []int{3600}
	f.mu.Unlock()
	if _, err := a.Send(ctx, channels.Outgoing{Target: "-1001", Text: "too soon"}); err == nil || !strings.Contains(err.Error(), "try again in 1h0m0s") {
		t.Errorf("a 429 asking for an hour: %v", err)
	}

	bad, _ := channels.New("tg", telegramChannel(f), env(map[string]string{"TG_TOKEN": "999:wrong"}))
	err = bad.Start(ctx, func(channels.Message) {})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "$TG_TOKEN") || strings.Contains(err.Error(), "999:wrong") {
		t.Errorf("a wrong token: %v", err)
	}
	down, _ := channels.New("tg", config.Channel{Type: "telegram", TokenEnv: "TG_TOKEN", APIURL: "http://127.0.0.1:1"}, telegramEnv)
	if _, err := down.Send(ctx, channels.Outgoing{Target: "1", Text: "hi"}); err == nil || strings.Contains(err.Error(), telegramToken) {
		t.Errorf("an unreachable API: %v (the token must not show)", err)
	}
}

// Messages polled from getUpdates reach the routed agent: an owner's
// mention in a group is answered there, as a reply — the owner known by
// user id, whatever their username now; a stranger's is ignored and
// audited, though they took the owner's old username; the offset moves
// past what was taken.
func TestTelegramAnsweredByAgent(t *testing.T) {
	t.Parallel()
	f := newTelegramFake(t)
	model := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "All green, Ada.")})
	sessions, turns := replayed(t, model)
	hub, err := channels.NewHub(map[string]config.Channel{"tg": telegramChannel(f, "7")}, telegramEnv)
	if err != nil {
		t.Fatal(err)
	}
	recs := newRecords()
	router := channels.NewRouter(hub, []config.Route{{Channel: "tg", Mention: true, Agent: "helper"}}, sessions, recs, nil)
	ctx := context.Background()
	if err := router.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer router.Stop(ctx)

	group := map[string]any{"id": -1001, "type": "supergroup", "title": "ops"}
	f.queue(9001, map[string]any{"message_id": 70, "date": 1700000000, "chat": group, "from": map[string]any{"id": 666, "is_bot": false, "username": "ada"}, "text": "@toolbelt_bot rm -rf /"})
	f.queue(9002, map[string]any{"message_id": 71, "date": 1700000001, "chat": group, "from": map[string]any{"id": 7, "is_bot": false, "username": "ada_renamed"}, "text": "@toolbelt_bot is the build green?"})

	rec := receive(t, recs.got)
	if rec.Kind != audit.KindMessageIgnored || rec.Principal != "666" || !strings.Contains(rec.Note, "from ada (id 666)") {
		t.Errorf("audit record = %+v, want the message of 666, who took the name ada, ignored", rec)
	}
	sent := receive(t, f.sent)
	rp, _ := sent.Args["reply_parameters"].(map[string]any)
	if sent.Args["chat_id"] != "-1001" || sent.Args["text"] != "All green, Ada." || rp["message_id"] != 71.0 {
		t.Errorf("the answer = %v, want a reply to 71 in -1001", sent.Args)
	}
	turn := receive(t, turns)
	if turn.SessionKey != "agent:helper:tg:-1001" || turn.Message.Text != "is the build green?" || !turn.Owner {
		t.Errorf("turn = %+v", turn)
	}
	if len(model.Requests()) != 1 {
		t.Errorf("the model was asked %d times, want once", len(model.Requests()))
	}
	// The answer is kept once sendMessage has answered: read until it is
	// there (a guard, not a timing assertion).
	a, _ := hub.Adapter("tg")
	got, _ := a.Read(ctx, "-1001", 10)
	for deadline := time.Now().Add(time.Minute); len(got) < 3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got, _ = a.Read(ctx, "-1001", 10)
	}
	if len(got) != 3 || got[1].Text != "is the build green?" || got[2].Text != "All green, Ada." {
		t.Errorf("read = %+v, want both messages and the answer", got)
	}
	// The next poll asks for what follows 9002 (looked for until it comes:
	// a guard, not a timing assertion).
	next := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.offsets[len(f.offsets)-1] == 9003
	}
	for deadline := time.Now().Add(time.Minute); !next() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !next() {
		t.Errorf("getUpdates' offsets were %v, want 9003 last", f.offsets)
	}
}
