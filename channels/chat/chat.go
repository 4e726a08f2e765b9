// Package chat is the vocabulary of channels: a message, what is sent, a
// channel's capabilities and the adapter interface. It is a leaf, so that
// tools (the message tool) can use channels without linking their
// configuration; package channels has the adapters.
package chat

import (
	"context"
	"errors"
	"time"
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
	// sender, a Slack, Discord or Telegram user id); the channel's own
	// name for what it sent.
	Sender string `json:"sender"`
	// SenderMask is the sender's full address where the protocol gives
	// one (IRC's nick!user@host); owners and allow entries may match it.
	SenderMask string `json:"senderMask,omitempty"`
	// SenderName is the sender's username where the protocol has one its
	// users can change (Telegram, Discord), for people to read. Owners and
	// allow entries never match it: a name given up can be taken by
	// someone else, so those channels' Sender is the user's id.
	SenderName string `json:"senderName,omitempty"`
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
