package channels_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
)

// turns is an Answerer that passes its turns on and answers nothing.
type turns chan channels.Turn

func (ts turns) Answer(_ context.Context, t channels.Turn) (string, error) {
	ts <- t
	return "", nil
}

// The router takes a message by the first route that matches it (peer,
// room, mention), leaves alone those no route takes, answers an allowed
// sender without the owner's rights, and over the sender's rate limit
// ignores and audits.
func TestRouterRoutesAndLimits(t *testing.T) {
	t.Parallel()
	hub, err := channels.NewHub(map[string]config.Channel{"chat": {Type: "webhook", URL: "http://127.0.0.1:1", SecretEnv: "S",
		Owners: []string{"ada"}, Allow: []string{"b*"}, RateLimit: 2}}, channels.Options{Getenv: func(string) string { return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }})
	if err != nil {
		t.Fatal(err)
	}
	answered, recs := make(turns, 10), newRecords()
	r := channels.NewRouter(hub, []config.Route{
		{Channel: "chat", Peer: "ada", Agent: "owner-agent"},
		{Channel: "chat", Room: "ops", Mention: true, Agent: "ops-agent"},
	}, answered, recs, nil)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer r.Stop(context.Background())

	r.Handle(channels.Message{ID: "1", Channel: "chat", Conversation: "ops", Sender: "bob", Text: "chatter"}) // no route: no mention
	r.Handle(channels.Message{ID: "2", Channel: "chat", Conversation: "ops", Sender: "bob", Text: "deploy?", Mention: true})
	if got := receive(t, answered); got.Agent != "ops-agent" || got.Owner || got.Message.ID != "2" || got.SessionKey != "agent:ops-agent:chat:ops" {
		t.Errorf("bob's mention: %+v", got)
	}
	r.Handle(channels.Message{ID: "3", Channel: "chat", Conversation: "dm-ada", Sender: "Ada", Text: "hi"})
	if got := receive(t, answered); got.Agent != "owner-agent" || !got.Owner {
		t.Errorf("ada's message: %+v", got)
	}
	r.Handle(channels.Message{ID: "4", Channel: "chat", Conversation: "ops", Sender: "bob", Text: "again", Mention: true})
	receive(t, answered)
	r.Handle(channels.Message{ID: "5", Channel: "chat", Conversation: "ops", Sender: "bob", Text: "and again", Mention: true})
	if rec := receive(t, recs.got); rec.Principal != "bob" || !strings.Contains(rec.Note, "rate limit of 2 messages a minute") {
		t.Errorf("bob's third message: %+v", rec)
	}
	if len(answered) != 0 || len(recs.got) != 0 {
		t.Errorf("more turns (%d) or records (%d) than messages routed", len(answered), len(recs.got))
	}
}
