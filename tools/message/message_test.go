package message_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/message"
)

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// receiver is a webhook receiver that checks each POST's signature and
// keeps the events.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []channels.WebhookEvent
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := stdwebhook.Verify(secret, req.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev channels.WebhookEvent
		json.Unmarshal(body, &ev)
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// runner returns a pipeline with the message tool for the channels cfg
// configures, in a workspace holding report.txt.
func runner(t *testing.T, cfg map[string]config.Channel) (*invoke.Runner, *registry.Registry) {
	t.Helper()
	hub, err := channels.NewHub(cfg, channels.Options{Getenv: func(string) string { return secret }})
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	if err := message.Register(reg); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "report.txt"), []byte("all green\n"), 0o644)
	bridge, err := fsbridge.OpenLocal(ws)
	if err != nil {
		t.Fatal(err)
	}
	tc := &tool.Context{Identity: tool.Identity{Workspace: ws}, FS: bridge}
	message.ChannelsService.Set(tc, hub)
	return invoke.New(reg, tc), reg
}

// call runs the message tool with args through r.
func call(r *invoke.Runner, args string) tool.ResultMessage {
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: "message", Arguments: json.RawMessage(args)})
}

// text is the text of a result message.
func text(m tool.ResultMessage) string {
	var parts []string
	for _, c := range m.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// The webhook channel sends signed events for send (with an attachment
// read from the workspace), react, edit and delete; read returns what it
// sent.
func TestWebhookActions(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	r, _ := runner(t, map[string]config.Channel{"hooks": {Type: "webhook", URL: rcv.URL, SecretEnv: "HOOK_SECRET"}})
	res := call(r, `{"action":"send","target":"room-1","text":"deploy done","attachments":["report.txt"]}`)
	if res.IsError {
		t.Fatalf("send: %s", text(res))
	}
	id := res.Details.(message.Sent).MessageID
	for _, args := range []string{
		`{"action":"react","channel":"hooks","target":"room-1","messageId":"` + id + `","emoji":"👍"}`,
		`{"action":"edit","channel":"hooks","target":"room-1","messageId":"` + id + `","text":"deploy done (v2)"}`,
		`{"action":"delete","channel":"hooks","target":"room-1","messageId":"` + id + `"}`,
	} {
		if res := call(r, args); res.IsError {
			t.Fatalf("%s: %s", args, text(res))
		}
	}
	rcv.mu.Lock()
	evs := slices.Clone(rcv.events)
	rcv.mu.Unlock()
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Type)
	}
	if !slices.Equal(kinds, []string{"message", "reaction", "edit", "delete"}) {
		t.Fatalf("the receiver got %v", kinds)
	}
	if a := evs[0].Attachments; len(a) != 1 || a[0].Name != "report.txt" || string(a[0].Data) != "all green\n" || !strings.HasPrefix(a[0].MIMEType, "text/plain") {
		t.Errorf("attachment = %+v", a)
	}
	if evs[1].MessageID != id || evs[1].Emoji != "👍" || evs[2].Text != "deploy done (v2)" {
		t.Errorf("events = %+v", evs)
	}
	if res := call(r, `{"action":"read","target":"room-1"}`); res.IsError || !strings.Contains(text(res), "deploy done") {
		t.Errorf("read: %s", text(res))
	}
}

// A receiver that refuses the signature makes the send fail; an IRC
// channel refuses reactions, saying why.
func TestRefusals(t *testing.T) {
	t.Parallel()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
	}))
	t.Cleanup(refusing.Close)
	bad, _ := runner(t, map[string]config.Channel{"hooks": {Type: "webhook", URL: refusing.URL, SecretEnv: "HOOK_SECRET"}})
	if res := call(bad, `{"action":"send","target":"room-1","text":"hi"}`); !res.IsError || !strings.Contains(text(res), "401") {
		t.Errorf("send refused by the receiver: %s", text(res))
	}
	irc, _ := runner(t, map[string]config.Channel{"ops": {Type: "irc", Server: "127.0.0.1:1"}, "hooks": {Type: "webhook", URL: refusing.URL, SecretEnv: "HOOK_SECRET"}})
	if res := call(irc, `{"action":"react","channel":"ops","target":"#ops","messageId":"irc-1","emoji":"👍"}`); !res.IsError || !strings.Contains(text(res), "IRC has no reactions") {
		t.Errorf("react on IRC: %s", text(res))
	}
}

// The schema follows the configured channels, in every dialect: their
// names, and only the actions and arguments some channel can use.
func TestSchemaFollowsChannels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		cfg      map[string]config.Channel
		channels []any
		actions  []any
		has      map[string]bool
		desc     string // in the channel's description
	}{
		{"webhook", map[string]config.Channel{"hooks": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S"}},
			[]any{"hooks"}, []any{"send", "delete", "edit", "react", "read", "channels"},
			map[string]bool{"emoji": true, "messageId": true, "attachments": true}, "hooks, the only one"},
		{"slack and telegram", map[string]config.Channel{"team": {Type: "slack", TokenEnv: "T", SigningSecretEnv: "S"}, "tg": {Type: "telegram", TokenEnv: "T"}},
			[]any{"team", "tg"}, []any{"send", "delete", "edit", "react", "read", "channels"},
			map[string]bool{"emoji": true, "messageId": true, "attachments": true}, "team: a target is a Slack channel id"},
		{"irc and email", map[string]config.Channel{"ops": {Type: "irc", Server: "127.0.0.1:1"}, "mail": {Type: "email", Server: "127.0.0.1:1", From: "bot@example.com"}},
			[]any{"mail", "ops"}, []any{"send", "read", "channels"},
			map[string]bool{"emoji": false, "messageId": false, "attachments": true}, "ops: a target is a room (#name)"},
	} {
		r, reg := runner(t, c.cfg)
		tl, ok := reg.Resolve("message", r.Context(), nil)
		if !ok {
			t.Fatalf("%s: message not resolved", c.name)
		}
		doc, err := schema.FromSchema(tl.Params())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range schema.Dialects() {
			out, _ := d.Compile(doc)
			props := out["properties"].(map[string]any)
			ch, act := props["channel"].(map[string]any), props["action"].(map[string]any)
			// Strict dialects make optional arguments nullable: null joins
			// the enum.
			names := slices.DeleteFunc(slices.Clone(ch["enum"].([]any)), func(v any) bool { return v == nil })
			if !slices.Equal(names, c.channels) || !slices.Equal(act["enum"].([]any), c.actions) {
				t.Errorf("%s, %s: channel enum %v, action enum %v; want %v, %v", c.name, d, ch["enum"], act["enum"], c.channels, c.actions)
			}
			if desc, _ := ch["description"].(string); !strings.Contains(desc, c.desc) || (c.name != "slack and telegram") == strings.Contains(desc, "Telegram") {
				t.Errorf("%s, %s: the channel's description %q does not say %q (and Telegram only when configured)", c.name, d, desc, c.desc)
			}
			for p, want := range c.has {
				if _, got := props[p]; got != want {
					t.Errorf("%s, %s: property %s present %v, want %v", c.name, d, p, got, want)
				}
			}
		}
	}
}
