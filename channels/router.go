package channels

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/tool"
)

// Turn is an incoming message handed to the agent a route names.
type Turn struct {
	// Agent is the agent that answers.
	Agent string
	// SessionKey is the session of the message's conversation (SessionKey).
	SessionKey string
	// Message is what was said.
	Message Message
	// Owner says the sender is one of the channel's owners: the session
	// runs as the owner's only then.
	Owner bool
}

// Answerer answers a turn: it runs the agent's session and returns the
// text to send back ("" sends nothing).
type Answerer interface {
	Answer(ctx context.Context, t Turn) (string, error)
}

// Auditor keeps a record; the audit log is one.
type Auditor interface {
	Append(ctx context.Context, r audit.Record) error
}

// Identity is who a turn's session runs as: its agent and session, the
// channel, the sender as principal, and the owner's rights only when the
// sender is an owner.
func (t Turn) Identity() tool.Identity {
	return tool.Identity{AgentID: t.Agent, SessionKey: t.SessionKey, Channel: t.Message.Channel, Principal: t.Message.Sender, Owner: t.Owner}
}

// DefaultRateLimit is how many messages a sender may send a minute on a
// channel whose rateLimit is not set.
const DefaultRateLimit = 20

// Router hands incoming messages to agents by the configuration's routes.
// A message no route takes is left alone; one from a sender who is neither
// an owner nor allowed on its channel, or over the sender's rate limit, is
// ignored and audited; the others are answered one at a time per session,
// the answer sent back to the message's conversation.
type Router struct {
	hub    *Hub
	routes []config.Route
	answer Answerer
	audit  Auditor
	log    *slog.Logger
	now    func() time.Time

	mu       sync.Mutex
	sent     map[string][]time.Time // by channel and sender: the last minute's messages
	sessions map[string]*sync.Mutex // by session key: one turn at a time
	ctx      context.Context
	cancel   context.CancelFunc
	turns    sync.WaitGroup
}

// NewRouter routes the messages of hub's channels by routes to answer,
// auditing what it ignores with audit.
func NewRouter(hub *Hub, routes []config.Route, answer Answerer, audit Auditor, log *slog.Logger) *Router {
	if log == nil {
		log = slog.Default()
	}
	return &Router{hub: hub, routes: routes, answer: answer, audit: audit, log: log, now: time.Now,
		sent: map[string][]time.Time{}, sessions: map[string]*sync.Mutex{}}
}

// Start connects the hub's channels, their messages routed until Stop.
func (r *Router) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.mu.Unlock()
	return r.hub.Start(ctx, r.Handle)
}

// Stop disconnects the channels and waits for the turns under way, which
// are cancelled when ctx ends.
func (r *Router) Stop(ctx context.Context) error {
	err := r.hub.Stop(ctx)
	done := make(chan struct{})
	go func() { r.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.cancel()
		<-done
	}
	r.cancel()
	return err
}

// SessionKey is the session of a conversation with an agent:
// agent:AGENT:CHANNEL:CONVERSATION, so that every message of a room, a
// direct conversation or a webhook's thread continues one session.
func SessionKey(agent string, m Message) string {
	return "agent:" + agent + ":" + m.Channel + ":" + strings.ToLower(m.Conversation)
}

// Handle routes m; the answer, if any, is made and sent in the background.
func (r *Router) Handle(m Message) {
	route, ok := r.route(m)
	if !ok {
		return
	}
	ch := r.hub.Settings(m.Channel)
	owner := matches(ch.Owners, m)
	if !owner && !matches(ch.Allow, m) {
		r.ignore(m, "not an owner or allowed sender of the channel")
		return
	}
	if limit := cmp.Or(ch.RateLimit, DefaultRateLimit); !r.admit(m, limit) {
		r.ignore(m, fmt.Sprintf("over the sender's rate limit of %d messages a minute", limit))
		return
	}
	t := Turn{Agent: route.Agent, SessionKey: SessionKey(route.Agent, m), Message: m, Owner: owner}
	r.mu.Lock()
	ctx := r.ctx
	turn := r.sessions[t.SessionKey]
	if turn == nil {
		turn = &sync.Mutex{}
		r.sessions[t.SessionKey] = turn
	}
	r.turns.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.turns.Done()
		turn.Lock()
		defer turn.Unlock()
		r.run(ctx, t)
	}()
}

// run answers t and sends the answer to its conversation.
func (r *Router) run(ctx context.Context, t Turn) {
	m := t.Message
	reply, err := r.answer.Answer(ctx, t)
	if err != nil {
		r.log.Warn("channels: answering a message", "channel", m.Channel, "conversation", m.Conversation, "session", t.SessionKey, "err", err)
		return
	}
	if strings.TrimSpace(reply) == "" {
		return
	}
	a, _ := r.hub.Adapter(m.Channel)
	if _, err := a.Send(ctx, Outgoing{Target: m.Conversation, Text: reply, ReplyTo: m.ID}); err != nil {
		r.log.Warn("channels: sending an answer", "channel", m.Channel, "conversation", m.Conversation, "err", err)
	}
}

// route returns the first route that takes m.
func (r *Router) route(m Message) (config.Route, bool) {
	for _, rt := range r.routes {
		switch {
		case rt.Channel != m.Channel,
			rt.Peer != "" && !strings.EqualFold(rt.Peer, m.Sender),
			rt.Room != "" && !inRoom(rt.Room, m.Conversation),
			rt.Mention && !m.Mention:
			continue
		}
		return rt, true
	}
	return config.Route{}, false
}

// inRoom says whether conversation is room or a thread in it
// (ROOM/THREAD, as on Slack), case ignored.
func inRoom(room, conversation string) bool {
	c, _, _ := strings.Cut(conversation, "/")
	return strings.EqualFold(room, conversation) || strings.EqualFold(room, c)
}

// matches says whether one of patterns (globs, case ignored) matches m's
// sender or sender mask — never its changeable name (SenderName).
func matches(patterns []string, m Message) bool {
	for _, p := range patterns {
		p = strings.ToLower(p)
		for _, s := range []string{m.Sender, m.SenderMask} {
			if ok, _ := path.Match(p, strings.ToLower(s)); ok && s != "" {
				return true
			}
		}
	}
	return false
}

// admit counts m against its sender's limit a minute, saying whether it
// is within it.
func (r *Router) admit(m Message, limit int) bool {
	key := m.Channel + "\x00" + strings.ToLower(m.Sender)
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	recent := r.sent[key][:0]
	for _, t := range r.sent[key] {
		if now.Sub(t) < time.Minute {
			recent = append(recent, t)
		}
	}
	if len(recent) >= limit {
		r.sent[key] = recent
		return false
	}
	r.sent[key] = append(recent, now)
	return true
}

// ignore audits m as ignored, and why.
func (r *Router) ignore(m Message, why string) {
	rec := audit.Record{Kind: audit.KindMessageIgnored, Time: r.now(), Channel: m.Channel, Principal: m.Sender,
		Note: fmt.Sprintf("ignored a message from %s in %s on channel %s: %s", senderOf(m), m.Conversation, m.Channel, why)}
	if err := r.audit.Append(context.WithoutCancel(r.ctx), rec); err != nil {
		r.log.Warn("channels: auditing an ignored message", "channel", m.Channel, "sender", m.Sender, "err", err)
	}
}

// senderOf names m's sender for people: its mask, or its id with its
// name.
func senderOf(m Message) string {
	switch {
	case m.SenderMask != "":
		return m.SenderMask
	case m.SenderName != "":
		return m.SenderName + " (id " + m.Sender + ")"
	}
	return m.Sender
}
