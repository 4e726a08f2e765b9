// Package channels connects agents to the places people talk: a channel
// adapter (webhook, IRC, email) receives messages and sends, reacts,
// edits, deletes and reads where its protocol can; a [Hub] holds the
// configured channels; a [Router] hands incoming messages from owners and
// allowed senders to the agent a route names, in a session kept per
// conversation, and sends the answer back to the same conversation.
// Anyone else is ignored and audited, never given tools.
package channels

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
)

// Message is a message seen on a channel, incoming or sent.
type Message struct {
	// ID is the message's id on its channel (made up by the adapter where
	// the protocol has none, as on IRC).
	ID string `json:"id"`
	// Channel is the configured channel's name.
	Channel string `json:"channel"`
	// Conversation is where the message was said and where replies go: an
	// IRC room (#ops) or, for a direct message, the peer's nick; an email
	// address; a webhook's conversation id.
	Conversation string `json:"conversation"`
	// Sender is who said it (an IRC nick, an email address, a webhook's
	// sender); the channel's own name for what it sent.
	Sender string `json:"sender"`
	// SenderMask is the sender's full address where the protocol gives
	// one (IRC's nick!user@host); owners and allow entries may match it.
	SenderMask string `json:"senderMask,omitempty"`
	// Text is the message's text (on IRC, without the "nick: " that
	// addressed it).
	Text string `json:"text"`
	// ReplyTo is the id of the message this one answers.
	ReplyTo string `json:"replyTo,omitempty"`
	// Mention says the message addressed the channel by name; direct
	// messages always do.
	Mention bool `json:"mention,omitempty"`
	// Direct says the message was sent to the channel alone, not to a room.
	Direct bool `json:"direct,omitempty"`
	// Time is when it was received or sent.
	Time time.Time `json:"time"`
}

// Outgoing is a message to send.
type Outgoing struct {
	// Target is the conversation to send to (see Message.Conversation).
	Target string
	// Text is the message.
	Text string
	// ReplyTo is the id of the message answered, where the channel can say
	// so (email's In-Reply-To, a webhook's replyTo).
	ReplyTo string
	// Attachments are files sent with the message.
	Attachments []Attachment
}

// Attachment is a file sent with a message.
type Attachment struct {
	Name     string
	MIMEType string
	Data     []byte
}

// Capabilities say what a channel can do besides sending.
type Capabilities struct {
	// Receive: incoming messages reach agents.
	Receive bool `json:"receive"`
	// React, Edit, Delete: the actions of the same names.
	React  bool `json:"react"`
	Edit   bool `json:"edit"`
	Delete bool `json:"delete"`
	// Attachments: files can be sent.
	Attachments bool `json:"attachments"`
	// Targets says what a target is on this channel, for the model.
	Targets string `json:"targets"`
}

// Adapter is one connected channel. Start connects it and hands each
// incoming message to deliver until Stop; Send sends (and returns the
// message as sent, with its id); Read returns the latest messages of a
// conversation, oldest first. An action the channel cannot do returns an
// error wrapping ErrUnsupported.
type Adapter interface {
	Capabilities() Capabilities
	Start(ctx context.Context, deliver func(Message)) error
	Stop(ctx context.Context) error
	Send(ctx context.Context, out Outgoing) (Message, error)
	React(ctx context.Context, conversation, messageID, emoji string) error
	Edit(ctx context.Context, conversation, messageID, text string) error
	Delete(ctx context.Context, conversation, messageID string) error
	Read(ctx context.Context, conversation string, limit int) ([]Message, error)
}

// ErrUnsupported matches the error of an action a channel cannot do.
var ErrUnsupported = errors.New("the channel cannot do that")

// Options are what adapters take from their environment; the zero value
// reads the process environment and trusts the system's certificates.
type Options struct {
	// Getenv reads the secrets the configuration names (default os.Getenv).
	Getenv func(string) string
	// RootCAs are the authorities trusted for TLS (default: the system's).
	RootCAs *x509.CertPool
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
	switch ch.Type {
	case "webhook":
		return newWebhook(name, ch, o)
	case "irc":
		return newIRC(name, ch, o)
	case "email":
		return newEmail(name, ch, o)
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
