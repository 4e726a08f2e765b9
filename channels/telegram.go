package channels

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/retry"
)

// Telegram is a channel through a Telegram bot: it takes the bot's
// messages by long polling getUpdates, and sends (sendMessage, files with
// sendDocument), reacts (setMessageReaction), edits (editMessageText) and
// deletes (deleteMessage) with the Bot API. Telegram keeps no history a
// bot can ask for: read returns what the channel saw while connected.
type Telegram struct {
	recent
	name string
	cfg  config.Channel
	o    Options
	base string
	http *http.Client
	now  func() time.Time

	mu       sync.Mutex
	botID    int64
	username string
	offset   int64

	polling loop
}

// telegramPoll is how long one getUpdates waits for a message.
const telegramPoll = 25

// telegramText is the most bytes sent in one message (Telegram's limit is
// 4096 characters).
const telegramText = 4096

func newTelegram(name string, ch config.Channel, o Options) (*Telegram, error) {
	base := strings.TrimSuffix(cmp.Or(ch.APIURL, "https://api.telegram.org"), "/")
	return &Telegram{name: name, cfg: ch, o: o, base: base, http: newBotClient(o, 2*telegramPoll*time.Second), now: time.Now}, nil
}

// Capabilities: Telegram does everything; read is what the channel saw.
func (t *Telegram) Capabilities() Capabilities {
	return Capabilities{Receive: true, React: true, Edit: true, Delete: true, Attachments: true,
		Targets: "a Telegram chat id (the conversation of a message received, such as 123456789 or -1001234567890) or @channelusername"}
}

type tgUser struct {
	ID       int64  `json:"id"`
	IsBot    bool   `json:"is_bot"`
	Username string `json:"username"`
}

type tgMessage struct {
	MessageID int64   `json:"message_id"`
	From      *tgUser `json:"from"`
	Chat      struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	} `json:"chat"`
	Date           int64      `json:"date"`
	Text           string     `json:"text"`
	Caption        string     `json:"caption"`
	ReplyToMessage *tgMessage `json:"reply_to_message"`
}

type tgUpdate struct {
	UpdateID int64      `json:"update_id"`
	Message  *tgMessage `json:"message"`
}

// Start checks the token with getMe (learning the bot's username, which
// mentions it), takes the updates waiting, and then polls for more until
// Stop. A webhook set on the bot makes getUpdates fail: Start says so.
func (t *Telegram) Start(ctx context.Context, deliver func(Message)) error {
	var me tgUser
	if err := t.call(ctx, "getMe", map[string]any{}, &me); err != nil {
		return err
	}
	t.mu.Lock()
	t.botID, t.username = me.ID, me.Username
	t.mu.Unlock()
	if err := t.poll(ctx, 0, deliver); err != nil {
		return err
	}
	t.polling.start(ctx, func(pctx context.Context) {
		for attempt := 0; pctx.Err() == nil; {
			if err := t.poll(pctx, telegramPoll, deliver); err != nil && pctx.Err() == nil {
				attempt++
				slog.Warn("channels: polling Telegram", "channel", t.name, "err", err)
				select {
				case <-time.After(retry.Backoff(time.Second, 30*time.Second, attempt)):
				case <-pctx.Done():
				}
				continue
			}
			attempt = 0
		}
	})
	return nil
}

// poll takes one batch of updates (waiting up to wait seconds for one) and
// passes on their messages, each update once though another gateway on
// the same state got it too (after a conflict, or a restart before the
// offset moved).
func (t *Telegram) poll(ctx context.Context, wait int, deliver func(Message)) error {
	t.mu.Lock()
	offset := t.offset
	t.mu.Unlock()
	var updates []tgUpdate
	if err := t.call(ctx, "getUpdates", map[string]any{"offset": offset, "timeout": wait, "allowed_updates": []string{"message"}}, &updates); err != nil {
		return err
	}
	for _, u := range updates {
		t.mu.Lock()
		t.offset = max(t.offset, u.UpdateID+1)
		t.mu.Unlock()
		if u.Message == nil || u.Message.From == nil || u.Message.From.IsBot || !t.o.firstDelivery(ctx, t.name, "update:"+strconv.FormatInt(u.UpdateID, 10)) {
			continue
		}
		m := t.incoming(*u.Message)
		t.add(m)
		deliver(m)
	}
	return nil
}

// incoming makes the Message of m: a private chat is direct; in a group,
// a message mentions the channel when it names the bot (@username, taken
// out of the text) or answers one of its messages.
func (t *Telegram) incoming(tm tgMessage) Message {
	m := t.message(tm)
	m.Direct = tm.Chat.Type == "private"
	t.mu.Lock()
	botID, username := t.botID, t.username
	t.mu.Unlock()
	m.Mention = m.Direct || (tm.ReplyToMessage != nil && tm.ReplyToMessage.From != nil && tm.ReplyToMessage.From.ID == botID)
	if username != "" {
		if i := strings.Index(strings.ToLower(m.Text), "@"+strings.ToLower(username)); i >= 0 {
			m.Text, m.Mention = strings.TrimSpace(m.Text[:i]+m.Text[i+1+len(username):]), true
		}
	}
	return m
}

// message makes the Message of a Bot API message.
func (t *Telegram) message(tm tgMessage) Message {
	m := Message{ID: strconv.FormatInt(tm.MessageID, 10), Channel: t.name, Conversation: strconv.FormatInt(tm.Chat.ID, 10),
		Text: cmp.Or(tm.Text, tm.Caption), Time: time.Unix(tm.Date, 0)}
	if tm.From != nil {
		m.Sender, m.SenderName = strconv.FormatInt(tm.From.ID, 10), tm.From.Username
	}
	if tm.ReplyToMessage != nil {
		m.ReplyTo = strconv.FormatInt(tm.ReplyToMessage.MessageID, 10)
	}
	return m
}

// Stop ends the polling.
func (t *Telegram) Stop(ctx context.Context) error { return t.polling.stop(ctx) }

// Send sends out's text with sendMessage (in pieces of Telegram's
// length, the first a reply to out.ReplyTo) and each attachment with
// sendDocument; it returns the first message sent.
func (t *Telegram) Send(ctx context.Context, out Outgoing) (Message, error) {
	if out.Target == "" || strings.ContainsAny(out.Target, " \t\r\n") {
		return Message{}, fmt.Errorf("%q is not a Telegram chat: give a chat id (123456789, -1001234567890) or @channelusername", out.Target)
	}
	var reply map[string]any
	if out.ReplyTo != "" {
		id, err := strconv.ParseInt(out.ReplyTo, 10, 64)
		if err != nil {
			return Message{}, fmt.Errorf("replyTo %q is not a Telegram message id (a number)", out.ReplyTo)
		}
		reply = map[string]any{"message_id": id, "allow_sending_without_reply": true}
	}
	var sent []tgMessage
	if out.Text != "" || len(out.Attachments) == 0 {
		for _, part := range splitBytes(out.Text, telegramText) {
			args := map[string]any{"chat_id": out.Target, "text": part}
			if reply != nil && len(sent) == 0 {
				args["reply_parameters"] = reply
			}
			var m tgMessage
			if err := t.call(ctx, "sendMessage", args, &m); err != nil {
				return Message{}, err
			}
			sent = append(sent, m)
		}
	}
	for _, a := range out.Attachments {
		fields := [][2]string{{"chat_id", out.Target}}
		if reply != nil {
			r, _ := json.Marshal(reply)
			fields = append(fields, [2]string{"reply_parameters", string(r)})
		}
		body, contentType, err := multipartBody(fields, []formFile{{"document", a}})
		if err != nil {
			return Message{}, err
		}
		var m tgMessage
		if err := t.send(ctx, "sendDocument", body, contentType, &m); err != nil {
			return Message{}, err
		}
		sent = append(sent, m)
	}
	m := t.message(sent[0])
	m.Sender, m.SenderName, m.Text, m.Time = t.name, "", out.Text, t.now()
	t.add(m)
	return m, nil
}

// React sets the bot's reaction (setMessageReaction); an emoji is a
// character (one Telegram allows) or a common name (thumbsup, eyes, …).
func (t *Telegram) React(ctx context.Context, conversation, messageID, emoji string) error {
	id, err := tgMessageID(messageID)
	if err != nil {
		return err
	}
	return t.call(ctx, "setMessageReaction", map[string]any{"chat_id": conversation, "message_id": id,
		"reaction": []map[string]string{{"type": "emoji", "emoji": emojiChar(emoji)}}}, nil)
}

// Edit replaces a message's text (editMessageText).
func (t *Telegram) Edit(ctx context.Context, conversation, messageID, text string) error {
	id, err := tgMessageID(messageID)
	if err != nil {
		return err
	}
	return t.call(ctx, "editMessageText", map[string]any{"chat_id": conversation, "message_id": id, "text": text}, nil)
}

// Delete deletes a message (deleteMessage).
func (t *Telegram) Delete(ctx context.Context, conversation, messageID string) error {
	id, err := tgMessageID(messageID)
	if err != nil {
		return err
	}
	return t.call(ctx, "deleteMessage", map[string]any{"chat_id": conversation, "message_id": id}, nil)
}

func tgMessageID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("messageId %q is not a Telegram message id (a number)", s)
	}
	return id, nil
}

// call calls a Bot API method with JSON args, decoding its result into
// out.
func (t *Telegram) call(ctx context.Context, method string, args any, out any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return t.send(ctx, method, body, "application/json", out)
}

// send posts body to a Bot API method; an answer that is not ok is an
// error with Telegram's description.
func (t *Telegram) send(ctx context.Context, method string, body []byte, contentType string, out any) error {
	token, err := t.o.secret(t.name, "tokenEnv", t.cfg.TokenEnv)
	if err != nil {
		return err
	}
	api := &botAPI{service: "Telegram", channel: t.name, client: t.http, token: token, header: func(http.Header) {}, retryAfter: telegramRetryAfter}
	status, answer, err := api.do(ctx, http.MethodPost, t.base+"/bot"+token+"/"+method, contentType, body)
	if err != nil {
		return err
	}
	var res struct {
		OK          bool            `json:"ok"`
		ErrorCode   int             `json:"error_code"`
		Description string          `json:"description"`
		Result      json.RawMessage `json:"result"`
	}
	if json.Unmarshal(answer, &res) != nil {
		return fmt.Errorf("channel %s: Telegram %s answered %d: %s", t.name, method, status, api.redact(clip(answer)))
	}
	if !res.OK {
		hint := ""
		switch res.ErrorCode {
		case http.StatusUnauthorized, http.StatusNotFound:
			hint = fmt.Sprintf(" (check the bot token in $%s)", t.cfg.TokenEnv)
		case http.StatusConflict:
			hint = " (another program polls this bot, or it has a webhook: delete it with deleteWebhook)"
		}
		return fmt.Errorf("channel %s: Telegram %s: %d %s%s", t.name, method, res.ErrorCode, res.Description, hint)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result, out)
}

// telegramRetryAfter reads parameters.retry_after (seconds) of a 429.
func telegramRetryAfter(_ http.Header, body []byte) time.Duration {
	var res struct {
		Parameters struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if json.Unmarshal(body, &res) != nil || res.Parameters.RetryAfter <= 0 {
		return time.Second
	}
	return time.Duration(res.Parameters.RetryAfter) * time.Second
}
