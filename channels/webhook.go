package channels

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
)

// Webhook is a channel of signed HTTP POSTs: what it sends (and its
// reactions, edits and deletions) is POSTed as a JSON event to the
// configured URL, and what it receives is POSTed to it (its ServeHTTP),
// both signed the Standard Webhooks way with the channel's secret.
type Webhook struct {
	recent
	name, url, secretEnv string
	o                    Options
	client               *http.Client
	now                  func() time.Time
	mu                   sync.Mutex
	deliver              func(Message)
}

// WebhookEvent is the JSON a webhook channel POSTs, and the JSON it takes
// in (type "message").
type WebhookEvent struct {
	// Type is "message" for a message, "reaction", "edit" or "delete".
	Type         string              `json:"type"`
	ID           string              `json:"id"`
	Channel      string              `json:"channel,omitempty"`
	Conversation string              `json:"conversation"`
	Sender       string              `json:"sender,omitempty"`
	Text         string              `json:"text,omitempty"`
	ReplyTo      string              `json:"replyTo,omitempty"`
	Mention      bool                `json:"mention,omitempty"`
	Direct       bool                `json:"direct,omitempty"`
	MessageID    string              `json:"messageId,omitempty"`
	Emoji        string              `json:"emoji,omitempty"`
	Attachments  []WebhookAttachment `json:"attachments,omitempty"`
}

// WebhookAttachment is a file in a webhook event, its content base64.
type WebhookAttachment struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// maxIncoming bounds an incoming webhook's body.
const maxIncoming = 1 << 20

func newWebhook(name string, ch config.Channel, o Options) (*Webhook, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.RootCAs}}}
	return &Webhook{name: name, url: ch.URL, secretEnv: ch.SecretEnv, o: o, client: client, now: time.Now}, nil
}

// Capabilities: a webhook channel does everything; the receiver applies
// reactions, edits and deletions.
func (w *Webhook) Capabilities() Capabilities {
	return Capabilities{Receive: true, React: true, Edit: true, Delete: true, Attachments: true,
		Targets: "a conversation id the receiver knows (the conversation of a message received)"}
}

// Start takes incoming messages, from ServeHTTP, until Stop; it fails
// when the channel's secret is not set.
func (w *Webhook) Start(_ context.Context, deliver func(Message)) error {
	if _, err := w.secret(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliver = deliver
	return nil
}

// Stop refuses incoming messages from now on.
func (w *Webhook) Stop(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliver = nil
	return nil
}

// Send POSTs a message event.
func (w *Webhook) Send(ctx context.Context, out Outgoing) (Message, error) {
	m := Message{ID: randid.New("msg_", 8), Channel: w.name, Conversation: out.Target, Sender: w.name, Text: out.Text, ReplyTo: out.ReplyTo, Time: w.now()}
	ev := WebhookEvent{Type: "message", ID: m.ID, Channel: w.name, Conversation: m.Conversation, Text: m.Text, ReplyTo: m.ReplyTo}
	for _, a := range out.Attachments {
		ev.Attachments = append(ev.Attachments, WebhookAttachment(a))
	}
	if err := w.post(ctx, ev); err != nil {
		return Message{}, err
	}
	w.add(m)
	return m, nil
}

// React POSTs a reaction event.
func (w *Webhook) React(ctx context.Context, conversation, messageID, emoji string) error {
	return w.post(ctx, WebhookEvent{Type: "reaction", ID: randid.New("evt_", 8), Channel: w.name, Conversation: conversation, MessageID: messageID, Emoji: emoji})
}

// Edit POSTs an edit event.
func (w *Webhook) Edit(ctx context.Context, conversation, messageID, text string) error {
	return w.post(ctx, WebhookEvent{Type: "edit", ID: randid.New("evt_", 8), Channel: w.name, Conversation: conversation, MessageID: messageID, Text: text})
}

// Delete POSTs a delete event.
func (w *Webhook) Delete(ctx context.Context, conversation, messageID string) error {
	return w.post(ctx, WebhookEvent{Type: "delete", ID: randid.New("evt_", 8), Channel: w.name, Conversation: conversation, MessageID: messageID})
}

// post sends ev, signed; a status other than 2xx is an error with the
// start of the receiver's answer.
func (w *Webhook) post(ctx context.Context, ev WebhookEvent) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	secret, err := w.secret()
	if err != nil {
		return err
	}
	h, err := stdwebhook.Header(secret, ev.ID, w.now(), body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("channel %s: %w", w.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("channel %s: the receiver answered %s: %s", w.name, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// ServeHTTP takes an incoming message: a POSTed WebhookEvent of type
// "message", signed with the channel's secret. It answers 202 once the
// message is handed on, 200 to a retry (a webhook-id taken within
// DeliveryWindow, by this gateway or another on the same store), which is
// not handed on again, 401 to a bad signature, 400 to a body that is not a
// message, 503 while the channel is stopped or when the delivery cannot be
// recorded (so the sender retries, and nothing is lost).
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(rw, "POST a signed message", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxIncoming))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	secret, err := w.secret()
	if err != nil {
		http.Error(rw, "the channel has no secret to verify with", http.StatusServiceUnavailable)
		return
	}
	if err := stdwebhook.Verify(secret, r.Header, body, w.now()); err != nil {
		http.Error(rw, err.Error(), http.StatusUnauthorized)
		return
	}
	var ev WebhookEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "message" || ev.Conversation == "" || ev.Sender == "" {
		http.Error(rw, `want {"type":"message","id","conversation","sender","text"}`, http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	deliver := w.deliver
	w.mu.Unlock()
	if deliver == nil {
		http.Error(rw, "the channel is not started", http.StatusServiceUnavailable)
		return
	}
	m := Message{ID: ev.ID, Channel: w.name, Conversation: ev.Conversation, Sender: ev.Sender, Text: ev.Text,
		ReplyTo: ev.ReplyTo, Mention: ev.Mention || ev.Direct, Direct: ev.Direct, Time: w.now()}
	if m.ID == "" {
		m.ID = r.Header.Get("webhook-id")
	}
	first, err := w.o.State.Claim(r.Context(), w.name, "webhook-id:"+r.Header.Get("webhook-id"), DeliveryWindow)
	switch {
	case err != nil:
		slog.Warn("channels: recording a delivery", "channel", w.name, "err", err)
		http.Error(rw, "the delivery could not be recorded: send it again later", http.StatusServiceUnavailable)
		return
	case !first:
		rw.WriteHeader(http.StatusOK)
		rw.Write([]byte("already delivered\n"))
		return
	}
	w.add(m)
	deliver(m)
	rw.WriteHeader(http.StatusAccepted)
}

// secret reads the channel's secret from the variable secretEnv names,
// when it is used, so that a configuration can be checked without it.
func (w *Webhook) secret() (string, error) {
	secret, err := w.o.secret(w.name, "secretEnv", w.secretEnv)
	if err != nil {
		return "", err
	}
	if err := stdwebhook.CheckSecret(secret); err != nil {
		return "", fmt.Errorf("channels.%s: $%s: %w", w.name, w.secretEnv, err)
	}
	return secret, nil
}
