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

	"github.com/coder/websocket"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

const discordToken = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"

// discordFake is Discord's REST API (v10) and Gateway as documented: REST
// with "Bot TOKEN", JSON errors {"message","code"}, 429s with
// retry_after; a Gateway that says hello, takes identify (checking the
// token and intents), heartbeats (acked) and resume, and dispatches what
// the test sends.
type discordFake struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	calls    []apiCall
	files    map[string]string
	limited  []float64
	nextID   int
	posted   chan apiCall
	conn     *websocket.Conn
	seq      int64
	identify []map[string]any
	resumes  []map[string]any
	beats    []any
	ready    chan string // "READY" or "RESUMED", as sent
}

func newDiscordFake(t *testing.T) *discordFake {
	f := &discordFake{t: t, files: map[string]string{}, nextID: 1000, posted: make(chan apiCall, 10), ready: make(chan string, 10)}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *discordFake) wsURL() string { return "ws" + strings.TrimPrefix(f.URL, "http") + "/gateway" }

func (f *discordFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gateway" {
		f.gateway(w, r)
		return
	}
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v10")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bot "+discordToken || !strings.HasPrefix(r.Header.Get("User-Agent"), "DiscordBot (") {
		reply(401, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	f.mu.Lock()
	if len(f.limited) > 0 {
		after := f.limited[0]
		f.limited = f.limited[1:]
		f.mu.Unlock()
		reply(429, map[string]any{"message": "You are being rate limited.", "retry_after": after, "global": false})
		return
	}
	f.mu.Unlock()
	args := map[string]any{}
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &args)
	case "multipart/form-data":
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			if p.FormName() == "payload_json" {
				json.Unmarshal(b, &args)
				continue
			}
			f.mu.Lock()
			f.files[p.FormName()+":"+p.FileName()] = string(b)
			f.mu.Unlock()
		}
	}
	key := r.Method + " " + path
	f.mu.Lock()
	f.calls = append(f.calls, apiCall{key, args})
	f.mu.Unlock()
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case key == "GET /gateway/bot":
		reply(200, map[string]any{"url": f.wsURL(), "shards": 1, "session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1}})
	case len(parts) >= 3 && parts[0] == "channels" && parts[1] == "999":
		reply(404, map[string]any{"message": "Unknown Channel", "code": 10003})
	case r.Method == "POST" && len(parts) == 3 && parts[2] == "messages":
		f.mu.Lock()
		f.nextID++
		id := fmt.Sprint(f.nextID)
		f.mu.Unlock()
		f.posted <- apiCall{key, args}
		reply(200, map[string]any{"id": id, "channel_id": parts[1], "content": args["content"], "timestamp": "2026-11-30T00:00:00+00:00",
			"author": map[string]any{"id": "BOT1", "username": "toolbelt", "bot": true}})
	case r.Method == "GET" && len(parts) == 3 && parts[2] == "messages":
		if r.URL.Query().Get("limit") != "5" {
			reply(400, map[string]any{"message": "want limit=5", "code": 50035})
			return
		}
		reply(200, []map[string]any{
			{"id": "12", "channel_id": parts[1], "content": "on it", "timestamp": "2026-11-30T00:00:02+00:00", "author": map[string]any{"id": "BOT1", "username": "toolbelt", "bot": true}, "message_reference": map[string]any{"message_id": "11"}},
			{"id": "11", "channel_id": parts[1], "content": "deploy?", "timestamp": "2026-11-30T00:00:01+00:00", "author": map[string]any{"id": "7", "username": "ada"}},
		})
	case r.Method == "PATCH" && len(parts) == 4:
		reply(200, map[string]any{"id": parts[3], "channel_id": parts[1], "content": args["content"]})
	case (r.Method == "DELETE" && len(parts) == 4) || (r.Method == "PUT" && len(parts) == 7 && parts[4] == "reactions" && parts[6] == "@me"):
		w.WriteHeader(http.StatusNoContent)
	default:
		reply(404, map[string]any{"message": "404: Not Found", "code": 0})
	}
}

// gateway is one Gateway connection.
func (f *discordFake) gateway(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("v") != "10" || r.URL.Query().Get("encoding") != "json" {
		http.Error(w, "want ?v=10&encoding=json", 400)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	send := func(v map[string]any) {
		b, _ := json.Marshal(v)
		conn.Write(ctx, websocket.MessageText, b)
	}
	send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 50}})
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		json.Unmarshal(data, &p)
		switch p.Op {
		case 1:
			var seq any
			json.Unmarshal(p.D, &seq)
			f.mu.Lock()
			f.beats = append(f.beats, seq)
			f.mu.Unlock()
			send(map[string]any{"op": 11})
		case 2, 6:
			var d map[string]any
			json.Unmarshal(p.D, &d)
			if d["token"] != discordToken {
				conn.Close(4004, "Authentication failed.")
				return
			}
			f.mu.Lock()
			f.conn = conn
			f.seq++
			seq := f.seq
			if p.Op == 2 {
				f.identify = append(f.identify, d)
			} else {
				f.resumes = append(f.resumes, d)
			}
			f.mu.Unlock()
			if p.Op == 2 {
				send(map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{"v": 10, "session_id": "sess-1",
					"resume_gateway_url": f.wsURL(), "user": map[string]any{"id": "BOT1", "username": "toolbelt", "bot": true}}})
				f.ready <- "READY"
			} else {
				send(map[string]any{"op": 0, "t": "RESUMED", "s": seq, "d": nil})
				f.ready <- "RESUMED"
			}
		}
	}
}

// dispatch sends a MESSAGE_CREATE on the current connection.
func (f *discordFake) dispatch(msg map[string]any) {
	f.mu.Lock()
	f.seq++
	b, _ := json.Marshal(map[string]any{"op": 0, "t": "MESSAGE_CREATE", "s": f.seq, "d": msg})
	conn := f.conn
	f.mu.Unlock()
	if err := conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		f.t.Fatal(err)
	}
}

func (f *discordFake) call(key string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.calls) - 1; i >= 0; i-- {
		if f.calls[i].Method == key {
			return f.calls[i].Args
		}
	}
	return nil
}

func discordChannel(f *discordFake, owners ...string) config.Channel {
	return config.Channel{Type: "discord", TokenEnv: "DISCORD_TOKEN", APIURL: f.URL + "/api/v10", Owners: owners}
}

var discordEnv = env(map[string]string{"DISCORD_TOKEN": discordToken})

// Each action of the Discord channel is the REST call Discord documents.
func TestDiscordActions(t *testing.T) {
	t.Parallel()
	f := newDiscordFake(t)
	a, err := channels.New("dc", discordChannel(f), discordEnv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m, err := a.Send(ctx, channels.Outgoing{Target: "555", Text: "build is green", ReplyTo: "11",
		Attachments: []channels.Attachment{{Name: "report.txt", MIMEType: "text/plain", Data: []byte("all green\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	post := f.call("POST /channels/555/messages")
	ref, _ := post["message_reference"].(map[string]any)
	if post["content"] != "build is green" || ref["message_id"] != "11" || fmt.Sprint(post["attachments"]) != "[map[filename:report.txt id:0]]" {
		t.Errorf("POST messages got %v", post)
	}
	f.mu.Lock()
	file := f.files["files[0]:report.txt"]
	f.mu.Unlock()
	if file != "all green\n" || m.ID != "1001" || m.Conversation != "555" || m.Sender != "dc" {
		t.Errorf("file %q, sent %+v", file, m)
	}
	if err := a.React(ctx, "555", "1001", ":tada:"); err != nil {
		t.Fatal(err)
	}
	if f.call("PUT /channels/555/messages/1001/reactions/🎉/@me") == nil {
		t.Errorf("no PUT of the 🎉 reaction: %v", f.calls)
	}
	if err := a.Edit(ctx, "555", "1001", "build is red"); err != nil {
		t.Fatal(err)
	}
	if e := f.call("PATCH /channels/555/messages/1001"); e["content"] != "build is red" {
		t.Errorf("PATCH got %v", e)
	}
	if err := a.Delete(ctx, "555", "1001"); err != nil {
		t.Fatal(err)
	}
	if f.call("DELETE /channels/555/messages/1001") == nil {
		t.Error("no DELETE")
	}
	got, err := a.Read(ctx, "555", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != "deploy?" || got[0].SenderName != "ada" || got[0].Sender != "7" || got[1].ReplyTo != "11" {
		t.Errorf("read = %+v, want oldest first", got)
	}
	if _, err := a.Send(ctx, channels.Outgoing{Target: "999", Text: "hi"}); err == nil || !strings.Contains(err.Error(), "404 Unknown Channel (code 10003)") {
		t.Errorf("an unknown channel: %v", err)
	}
	if _, err := a.Send(ctx, channels.Outgoing{Target: "#general", Text: "hi"}); err == nil || !strings.Contains(err.Error(), "not a Discord channel id") {
		t.Errorf("a channel's name: %v", err)
	}
	f.mu.Lock()
	f.limited = []float64{0.01}
	f.mu.Unlock()
	if _, err := a.Send(ctx, channels.Outgoing{Target: "555", Text: "after a wait"}); err != nil {
		t.Errorf("a send after one 429: %v", err)
	}
	f.mu.Lock()
	f.limited = []float64{120.5}
	f.mu.Unlock()
	if _, err := a.Send(ctx, channels.Outgoing{Target: "555", Text: "too soon"}); err == nil || !strings.Contains(err.Error(), "try again in 2m0.5s") {
		t.Errorf("a 429 asking for two minutes: %v", err)
	}
	bad, _ := channels.New("dc", discordChannel(f), env(map[string]string{"DISCORD_TOKEN": "wrong"}))
	if err := bad.Start(ctx, func(channels.Message) {}); err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "$DISCORD_TOKEN") {
		t.Errorf("a wrong token: %v", err)
	}
}

// Over the Gateway: the bot identifies with its intents and heartbeats
// with the last sequence number; an owner's mention is answered by the
// routed agent as a reply in the same channel; a stranger's is ignored and
// audited, though their username is the owner's id (owners match user
// ids only); the bot's own message is not passed on; after the connection
// drops, the session is resumed with its id and sequence, and a direct
// message is answered.
func TestDiscordGateway(t *testing.T) {
	t.Parallel()
	f := newDiscordFake(t)
	model := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Deployed, Ada.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Still green.")})
	sessions, turns := replayed(t, model)
	hub, err := channels.NewHub(map[string]config.Channel{"dc": discordChannel(f, "7")}, discordEnv)
	if err != nil {
		t.Fatal(err)
	}
	recs := newRecords()
	router := channels.NewRouter(hub, []config.Route{{Channel: "dc", Mention: true, Agent: "helper"}}, sessions, recs, nil)
	ctx := context.Background()
	if err := router.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer router.Stop(ctx)
	if r := receive(t, f.ready); r != "READY" {
		t.Fatalf("first %s, want READY", r)
	}
	f.mu.Lock()
	id := f.identify[0]
	f.mu.Unlock()
	if id["intents"] != float64(1<<9|1<<12|1<<15) {
		t.Errorf("identify = %v, want the intents for guild and direct messages and their content", id)
	}

	mention := []map[string]any{{"id": "BOT1", "username": "toolbelt"}}
	f.dispatch(map[string]any{"id": "20", "channel_id": "555", "guild_id": "1", "content": "<@BOT1> rm -rf /", "mentions": mention,
		"author": map[string]any{"id": "666", "username": "7"}, "timestamp": "2026-11-30T00:00:00+00:00"})
	rec := receive(t, recs.got)
	if rec.Kind != audit.KindMessageIgnored || rec.Principal != "666" || !strings.Contains(rec.Note, "from 7 (id 666)") {
		t.Errorf("audit record = %+v", rec)
	}
	f.dispatch(map[string]any{"id": "21", "channel_id": "555", "guild_id": "1", "content": "<@BOT1> deploy", "mentions": mention,
		"author": map[string]any{"id": "7", "username": "ada"}, "timestamp": "2026-11-30T00:00:01+00:00"})
	post := receive(t, f.posted)
	ref, _ := post.Args["message_reference"].(map[string]any)
	if post.Method != "POST /channels/555/messages" || post.Args["content"] != "Deployed, Ada." || ref["message_id"] != "21" {
		t.Errorf("the answer = %+v", post)
	}
	if turn := receive(t, turns); turn.SessionKey != "agent:helper:dc:555" || turn.Message.Text != "deploy" || !turn.Owner {
		t.Errorf("turn = %+v", turn)
	}
	f.dispatch(map[string]any{"id": "22", "channel_id": "555", "guild_id": "1", "content": "Deployed, Ada.",
		"author": map[string]any{"id": "BOT1", "username": "toolbelt", "bot": true}, "timestamp": "2026-11-30T00:00:02+00:00"})

	// Heartbeats carry the last sequence number (looked for until one
	// comes: a guard, not a timing assertion).
	f.mu.Lock()
	seq := float64(f.seq)
	f.mu.Unlock()
	beat := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.beats) > 0 && f.beats[len(f.beats)-1] == seq
	}
	for deadline := time.Now().Add(time.Minute); !beat() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !beat() {
		t.Errorf("no heartbeat with sequence %v", seq)
	}

	f.mu.Lock()
	conn := f.conn
	f.mu.Unlock()
	conn.Close(4000, "Unknown error")
	if r := receive(t, f.ready); r != "RESUMED" {
		t.Fatalf("after the drop: %s, want RESUMED", r)
	}
	f.mu.Lock()
	res := f.resumes[0]
	f.mu.Unlock()
	if res["session_id"] != "sess-1" || res["seq"] != seq {
		t.Errorf("resume = %v, want session sess-1 at %v", res, seq)
	}
	f.dispatch(map[string]any{"id": "23", "channel_id": "777", "content": "still green?",
		"author": map[string]any{"id": "7", "username": "ada"}, "timestamp": "2026-11-30T00:00:03+00:00"})
	post = receive(t, f.posted)
	if post.Method != "POST /channels/777/messages" || post.Args["content"] != "Still green." {
		t.Errorf("the direct answer = %+v", post)
	}
	if turn := receive(t, turns); !turn.Message.Direct || turn.SessionKey != "agent:helper:dc:777" {
		t.Errorf("turn = %+v", turn)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (ada's messages, not mallory's nor the bot's own)", n)
	}
}
