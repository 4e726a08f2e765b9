// Package channels connects agents to the places people talk: a channel
// adapter (webhook, IRC, email, Slack, Discord, Telegram) receives
// messages and sends, reacts, edits, deletes and reads where its protocol
// can; a [Hub] holds the configured channels; a [Router] hands incoming
// messages from owners and allowed senders to the agent a route names, in
// a session kept per conversation, and sends the answer back to the same
// conversation.
// Anyone else is ignored and audited, never given tools.
package channels

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/toolbelt/toolbelt/channels/chat"

	"github.com/toolbelt/toolbelt/config"
)

// The vocabulary of channels, from package chat.
type (
	Message      = chat.Message
	Outgoing     = chat.Outgoing
	Attachment   = chat.Attachment
	Capabilities = chat.Capabilities
	Adapter      = chat.Adapter
)

// ErrUnsupported matches the error of an action a channel cannot do.
var ErrUnsupported = chat.ErrUnsupported

// Options are what adapters take from their environment; the zero value
// reads the process environment and trusts the system's certificates.
type Options struct {
	// Getenv reads the secrets the configuration names (default os.Getenv).
	Getenv func(string) string
	// RootCAs are the authorities trusted for TLS (default: the system's).
	RootCAs *x509.CertPool
	// State keeps what the channels remember — the deliveries they took,
	// email threads — beyond the process, shared with the gateways on the
	// same store (default: in this process's memory, shared by a hub's
	// channels).
	State State
}

func (o Options) getenv(name string) string {
	if o.Getenv != nil {
		return o.Getenv(name)
	}
	return os.Getenv(name)
}

// secret reads the variable that the setting key of channel name names;
// a named variable that is empty is an error.
func (o Options) secret(name, key, env string) (string, error) {
	if env == "" {
		return "", nil
	}
	v := o.getenv(env)
	if v == "" {
		return "", fmt.Errorf("channels.%s.%s names $%s, which is not set", name, key, env)
	}
	return v, nil
}

// New makes the adapter of the configured channel name.
func New(name string, ch config.Channel, o Options) (Adapter, error) {
	if o.State == nil {
		o.State = newMemoryState()
	}
	switch ch.Type {
	case "webhook":
		return newWebhook(name, ch, o)
	case "irc":
		return newIRC(name, ch, o)
	case "email":
		return newEmail(name, ch, o)
	case "slack":
		return newSlack(name, ch, o)
	case "discord":
		return newDiscord(name, ch, o)
	case "telegram":
		return newTelegram(name, ch, o)
	}
	return nil, fmt.Errorf("channels.%s.type is %q: use one of %v", name, ch.Type, config.ChannelTypes)
}

// unsupported is embedded by adapters for the actions their protocol
// lacks.
type unsupported struct{ kind string }

func (u unsupported) React(context.Context, string, string, string) error {
	return fmt.Errorf("%w: %s has no reactions", ErrUnsupported, u.kind)
}

func (u unsupported) Edit(context.Context, string, string, string) error {
	return fmt.Errorf("%w: %s messages cannot be edited once sent", ErrUnsupported, u.kind)
}

func (u unsupported) Delete(context.Context, string, string) error {
	return fmt.Errorf("%w: %s messages cannot be deleted once sent", ErrUnsupported, u.kind)
}

// recentPerConversation is how many messages a channel remembers of each
// conversation, for read.
const recentPerConversation = 50

// recent keeps the latest messages of each conversation a channel saw, for
// channels whose protocol keeps no history the adapter can ask for.
type recent struct {
	mu   sync.Mutex
	seen map[string][]Message
}

func (r *recent) add(m Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]Message{}
	}
	l := append(r.seen[m.Conversation], m)
	if len(l) > recentPerConversation {
		l = slices.Delete(l, 0, len(l)-recentPerConversation)
	}
	r.seen[m.Conversation] = l
}

// Read returns the latest limit messages seen in conversation, oldest
// first.
func (r *recent) Read(_ context.Context, conversation string, limit int) ([]Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.seen[conversation]
	if limit > 0 && len(l) > limit {
		l = l[len(l)-limit:]
	}
	return slices.Clone(l), nil
}
