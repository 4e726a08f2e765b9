package channels

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/retry"
)

// Discord is a channel through a Discord bot: it receives over the
// Gateway (a WebSocket: hello, heartbeats, identify with the intents for
// guild and direct messages and their content, MESSAGE_CREATE dispatches,
// resumed after a reconnect) and sends, reacts, edits, deletes and reads
// with the REST API (v10).
type Discord struct {
	name string
	cfg  config.Channel
	o    Options
	base string
	http *http.Client
	now  func() time.Time

	mu        sync.Mutex
	userID    string // the bot's user, from READY
	sessionID string
	resumeURL string
	seq       *int64

	gateway loop
}

// discordIntents are GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT
// (a privileged intent, enabled in the developer portal).
const discordIntents = 1<<9 | 1<<12 | 1<<15

// gatewayHello is how long the Gateway has to say hello.
const gatewayHello = 30 * time.Second

// discordText is the most bytes sent in one message (Discord's limit is
// 2000 characters).
const discordText = 2000

func newDiscord(name string, ch config.Channel, o Options) (*Discord, error) {
	base := strings.TrimSuffix(cmp.Or(ch.APIURL, "https://discord.com/api/v10"), "/")
	return &Discord{name: name, cfg: ch, o: o, base: base, http: newBotClient(o, 60*time.Second), now: time.Now}, nil
}

// Capabilities: Discord does everything.
func (d *Discord) Capabilities() Capabilities {
	return Capabilities{Receive: true, React: true, Edit: true, Delete: true, Attachments: true,
		Targets: "a Discord channel id (a number, such as 1234567890123456789; the conversation of a message received)"}
}

// dcMessage is a message of the REST API and of MESSAGE_CREATE.
type dcMessage struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Author    struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Bot      bool   `json:"bot"`
	} `json:"author"`
	Content   string    `json:"content"`
	Timestamp time.Time `json:"timestamp"`
	Mentions  []struct {
		ID string `json:"id"`
	} `json:"mentions"`
	MessageReference *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
}

// message makes the Message of a Discord message.
func (d *Discord) message(dm dcMessage) Message {
	m := Message{ID: dm.ID, Channel: d.name, Conversation: dm.ChannelID, Sender: dm.Author.ID, SenderName: dm.Author.Username,
		Text: dm.Content, Time: dm.Timestamp}
	if dm.MessageReference != nil {
		m.ReplyTo = dm.MessageReference.MessageID
	}
	d.mu.Lock()
	own := d.userID != "" && dm.Author.ID == d.userID
	d.mu.Unlock()
	if own {
		m.Sender, m.SenderName = d.name, ""
	}
	return m
}

// gatewayPayload is a Gateway event.
type gatewayPayload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// errGatewayFatal marks a Gateway closing that reconnecting cannot mend.
var errGatewayFatal = errors.New("the Discord Gateway refused the bot")

// Start asks the REST API where the Gateway is (GET /gateway/bot, which
// checks the token), connects and identifies, and returns once READY;
// until Stop it reconnects, resuming the session, when the connection
// drops.
func (d *Discord) Start(ctx context.Context, deliver func(Message)) error {
	var gw struct {
		URL string `json:"url"`
	}
	if err := d.call(ctx, http.MethodGet, "/gateway/bot", nil, "", &gw); err != nil {
		return err
	}
	if gw.URL == "" {
		return fmt.Errorf("channel %s: Discord's /gateway/bot gave no url", d.name)
	}
	ready := make(chan error, 1)
	d.gateway.start(ctx, func(rctx context.Context) { d.run(rctx, gw.URL, deliver, ready) })
	select {
	case err := <-ready:
		if err != nil {
			d.gateway.stop(context.Background())
		}
		return err
	case <-ctx.Done():
		d.gateway.stop(context.Background())
		return ctx.Err()
	}
}

// run keeps a Gateway session until ctx ends or the Gateway refuses the
// bot, reporting the first READY (or refusal) on ready.
func (d *Discord) run(ctx context.Context, gateway string, deliver func(Message), ready chan<- error) {
	readied := false
	signal := func(err error) {
		if !readied {
			readied = true
			ready <- err
		}
	}
	for attempt := 0; ctx.Err() == nil; {
		err := d.session(ctx, gateway, deliver, func() { signal(nil); attempt = 0 })
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errGatewayFatal) {
			signal(err)
			slog.Error("channels: the Discord Gateway refused the bot", "channel", d.name, "err", err)
			return
		}
		attempt++
		if !readied && attempt >= 5 {
			signal(err)
			return
		}
		slog.Warn("channels: Discord Gateway connection ended; reconnecting", "channel", d.name, "err", err)
		select {
		case <-time.After(retry.Backoff(time.Second, 30*time.Second, attempt)):
		case <-ctx.Done():
		}
	}
}

// session connects to the Gateway once — resuming the last session when
// there is one — and reads its events until the connection ends.
func (d *Discord) session(ctx context.Context, gateway string, deliver func(Message), onReady func()) error {
	token, err := d.o.secret(d.name, "tokenEnv", d.cfg.TokenEnv)
	if err != nil {
		return fmt.Errorf("%w: %w", errGatewayFatal, err)
	}
	d.mu.Lock()
	resume, sessionID, seq := d.sessionID != "", d.sessionID, d.seq
	if resume {
		gateway = cmp.Or(d.resumeURL, gateway)
	}
	d.mu.Unlock()
	u, err := url.Parse(gateway)
	if err != nil {
		return fmt.Errorf("%w: the Gateway's url %q: %w", errGatewayFatal, gateway, err)
	}
	u.RawQuery = url.Values{"v": {"10"}, "encoding": {"json"}}.Encode()
	conn, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: &http.Client{Transport: d.http.Transport}})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var hello gatewayPayload
	hctx, stop := context.WithTimeout(sctx, gatewayHello)
	err = readGateway(hctx, conn, &hello)
	stop()
	if err != nil {
		return fmt.Errorf("waiting for the Gateway's hello: %w", err)
	}
	var h struct {
		HeartbeatInterval int64 `json:"heartbeat_interval"`
	}
	if json.Unmarshal(hello.D, &h); hello.Op != 10 || h.HeartbeatInterval <= 0 {
		return fmt.Errorf("the Gateway did not say hello (op %d)", hello.Op)
	}
	var awaiting atomic.Bool // a heartbeat awaits its ack
	lastSeq := func() *int64 {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.seq
	}
	beat := func() error { return writeGateway(sctx, conn, 1, lastSeq()) }
	go func() {
		interval := time.Duration(h.HeartbeatInterval) * time.Millisecond
		t := time.NewTimer(time.Duration(rand.Int64N(int64(interval))))
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
			if awaiting.Swap(true) {
				// No ack since the last heartbeat: the connection is a
				// zombie; close it and resume.
				conn.Close(4000, "no heartbeat ack")
				return
			}
			if beat() != nil {
				return
			}
			t.Reset(interval)
		}
	}()

	props := map[string]string{"os": "linux", "browser": "toolbelt", "device": "toolbelt"}
	if resume {
		err = writeGateway(sctx, conn, 6, map[string]any{"token": token, "session_id": sessionID, "seq": seq})
	} else {
		err = writeGateway(sctx, conn, 2, map[string]any{"token": token, "intents": discordIntents, "properties": props})
	}
	if err != nil {
		return err
	}
	for {
		var p gatewayPayload
		if err := readGateway(sctx, conn, &p); err != nil {
			return d.closed(err)
		}
		switch p.Op {
		case 0:
			d.mu.Lock()
			if p.S != nil {
				d.seq = p.S
			}
			d.mu.Unlock()
			d.dispatch(ctx, p, deliver, onReady)
		case 1:
			if err := beat(); err != nil {
				return err
			}
		case 7:
			return errors.New("the Gateway asked to reconnect")
		case 9:
			var resumable bool
			json.Unmarshal(p.D, &resumable)
			if !resumable {
				d.forget()
			}
			return errors.New("the Gateway invalidated the session")
		case 11:
			awaiting.Store(false)
		}
	}
}

// dispatch handles an op 0 event. A message is passed on once, though
// several gateways sharing the state hold Gateway sessions of the bot.
func (d *Discord) dispatch(ctx context.Context, p gatewayPayload, deliver func(Message), onReady func()) {
	switch p.T {
	case "READY":
		var r struct {
			SessionID        string `json:"session_id"`
			ResumeGatewayURL string `json:"resume_gateway_url"`
			User             struct {
				ID string `json:"id"`
			} `json:"user"`
		}
		json.Unmarshal(p.D, &r)
		d.mu.Lock()
		d.sessionID, d.resumeURL, d.userID = r.SessionID, r.ResumeGatewayURL, r.User.ID
		d.mu.Unlock()
		onReady()
	case "RESUMED":
		onReady()
	case "MESSAGE_CREATE":
		var dm dcMessage
		if json.Unmarshal(p.D, &dm) != nil || dm.Author.Bot || dm.ChannelID == "" || !d.o.firstDelivery(ctx, d.name, "message:"+dm.ID) {
			return
		}
		deliver(d.incoming(dm))
	}
}

// incoming makes the Message of a MESSAGE_CREATE: a direct message has no
// guild; a message mentions the channel when it mentions the bot (the
// mention taken out of the text).
func (d *Discord) incoming(dm dcMessage) Message {
	m := d.message(dm)
	m.Direct = dm.GuildID == ""
	d.mu.Lock()
	me := d.userID
	d.mu.Unlock()
	m.Mention = m.Direct || slices.ContainsFunc(dm.Mentions, func(u struct {
		ID string `json:"id"`
	}) bool {
		return u.ID == me
	})
	if me != "" {
		m.Text = strings.TrimSpace(strings.NewReplacer("<@"+me+">", "", "<@!"+me+">", "").Replace(m.Text))
	}
	return m
}

// forget drops the session, so that the next connection identifies anew.
func (d *Discord) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessionID, d.resumeURL, d.seq = "", "", nil
}

// closed turns the Gateway's close codes into errors: those that
// reconnecting cannot mend are fatal; others resume, or identify anew
// when the session is gone.
func (d *Discord) closed(err error) error {
	switch code := websocket.CloseStatus(err); code {
	case 4004:
		return fmt.Errorf("%w: authentication failed (check the bot token in $%s)", errGatewayFatal, d.cfg.TokenEnv)
	case 4010, 4011, 4012:
		return fmt.Errorf("%w: closed with %d (%w)", errGatewayFatal, code, err)
	case 4013, 4014:
		return fmt.Errorf("%w: intents refused (%d): enable the Message Content intent for the bot in the developer portal", errGatewayFatal, code)
	case 4007, 4009:
		d.forget()
	}
	return err
}

func readGateway(ctx context.Context, conn *websocket.Conn, p *gatewayPayload) error {
	_, data, err := conn.Read(ctx)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, p)
}

func writeGateway(ctx context.Context, conn *websocket.Conn, op int, d any) error {
	data, err := json.Marshal(map[string]any{"op": op, "d": d})
	if err != nil {
		return err
	}
	return conn.Write(ctx, websocket.MessageText, data)
}

// Stop closes the Gateway connection.
func (d *Discord) Stop(ctx context.Context) error { return d.gateway.stop(ctx) }

// discordChannel checks that a target is a channel id.
func discordChannel(target string) (string, error) {
	if _, err := strconv.ParseUint(target, 10, 64); err != nil {
		return "", fmt.Errorf("%q is not a Discord channel id: give its number (such as 1234567890123456789), not its name", target)
	}
	return target, nil
}

// Send posts out's text (in pieces of Discord's length, the first a reply
// to out.ReplyTo) with the attachments on the last piece, and returns the
// first message sent.
func (d *Discord) Send(ctx context.Context, out Outgoing) (Message, error) {
	channel, err := discordChannel(out.Target)
	if err != nil {
		return Message{}, err
	}
	pieces := []string{""}
	if out.Text != "" {
		pieces = splitBytes(out.Text, discordText)
	}
	var first dcMessage
	for i, text := range pieces {
		payload := map[string]any{"content": text}
		if i == 0 && out.ReplyTo != "" {
			payload["message_reference"] = map[string]any{"message_id": out.ReplyTo, "fail_if_not_exists": false}
		}
		var body []byte
		ct := "application/json"
		if i == len(pieces)-1 && len(out.Attachments) > 0 {
			var files []formFile
			var meta []map[string]any
			for j, a := range out.Attachments {
				files = append(files, formFile{"files[" + strconv.Itoa(j) + "]", a})
				meta = append(meta, map[string]any{"id": j, "filename": a.Name})
			}
			payload["attachments"] = meta
			pj, err := json.Marshal(payload)
			if err != nil {
				return Message{}, err
			}
			if body, ct, err = multipartBody([][2]string{{"payload_json", string(pj)}}, files); err != nil {
				return Message{}, err
			}
		} else if body, err = json.Marshal(payload); err != nil {
			return Message{}, err
		}
		var dm dcMessage
		if err := d.call(ctx, http.MethodPost, "/channels/"+channel+"/messages", body, ct, &dm); err != nil {
			return Message{}, err
		}
		if i == 0 {
			first = dm
		}
	}
	m := d.message(first)
	m.Sender, m.SenderName, m.Text, m.ReplyTo = d.name, "", out.Text, out.ReplyTo
	if m.Time.IsZero() {
		m.Time = d.now()
	}
	return m, nil
}

// React adds the bot's reaction: an emoji character, a common name
// (thumbsup, eyes, …) or a custom emoji as name:id.
func (d *Discord) React(ctx context.Context, conversation, messageID, emoji string) error {
	channel, err := discordChannel(conversation)
	if err != nil {
		return err
	}
	return d.call(ctx, http.MethodPut, "/channels/"+channel+"/messages/"+url.PathEscape(messageID)+"/reactions/"+url.PathEscape(emojiChar(emoji))+"/@me", nil, "", nil)
}

// Edit replaces a message's text.
func (d *Discord) Edit(ctx context.Context, conversation, messageID, text string) error {
	channel, err := discordChannel(conversation)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"content": text})
	return d.call(ctx, http.MethodPatch, "/channels/"+channel+"/messages/"+url.PathEscape(messageID), body, "application/json", nil)
}

// Delete deletes a message.
func (d *Discord) Delete(ctx context.Context, conversation, messageID string) error {
	channel, err := discordChannel(conversation)
	if err != nil {
		return err
	}
	return d.call(ctx, http.MethodDelete, "/channels/"+channel+"/messages/"+url.PathEscape(messageID), nil, "", nil)
}

// Read returns a channel's latest messages, oldest first.
func (d *Discord) Read(ctx context.Context, conversation string, limit int) ([]Message, error) {
	channel, err := discordChannel(conversation)
	if err != nil {
		return nil, err
	}
	var list []dcMessage
	q := url.Values{"limit": {strconv.Itoa(min(cmp.Or(limit, 20), 100))}}
	if err := d.call(ctx, http.MethodGet, "/channels/"+channel+"/messages?"+q.Encode(), nil, "", &list); err != nil {
		return nil, err
	}
	slices.Reverse(list)
	out := make([]Message, 0, len(list))
	for _, dm := range list {
		out = append(out, d.message(dm))
	}
	return out, nil
}

// call sends a REST request with the bot's token and decodes a 2xx
// answer into out; another answer is an error with Discord's message.
func (d *Discord) call(ctx context.Context, method, path string, body []byte, contentType string, out any) error {
	token, err := d.o.secret(d.name, "tokenEnv", d.cfg.TokenEnv)
	if err != nil {
		return err
	}
	api := &botAPI{service: "Discord", channel: d.name, client: d.http, token: token, retryAfter: discordRetryAfter,
		header: func(h http.Header) {
			h.Set("Authorization", "Bot "+token)
			h.Set("User-Agent", "DiscordBot (https://github.com/toolbelt/toolbelt, 1)")
		}}
	status, answer, err := api.do(ctx, method, d.base+path, contentType, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		var e struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		}
		if json.Unmarshal(answer, &e) != nil || e.Message == "" {
			e.Message = clip(answer)
		}
		hint := ""
		switch status {
		case http.StatusUnauthorized:
			hint = fmt.Sprintf(" (check the bot token in $%s)", d.cfg.TokenEnv)
		case http.StatusForbidden:
			hint = " (the bot lacks a permission in that channel, or is not in its server)"
		}
		return fmt.Errorf("channel %s: Discord %s %s: %d %s (code %d)%s", d.name, method, strings.SplitN(path, "?", 2)[0], status, e.Message, e.Code, hint)
	}
	if out == nil || status == http.StatusNoContent {
		return nil
	}
	return json.Unmarshal(answer, out)
}

// discordRetryAfter reads a 429's retry_after (seconds, fractional), or
// its Retry-After header.
func discordRetryAfter(h http.Header, body []byte) time.Duration {
	var res struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(body, &res) == nil && res.RetryAfter > 0 {
		return time.Duration(res.RetryAfter * float64(time.Second))
	}
	if d, ok := retry.After(h, time.Now()); ok {
		return d
	}
	return time.Second
}
