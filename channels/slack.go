package channels

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
)

// Slack is a channel in a Slack workspace, through a Slack app's bot: it
// sends with the Web API (chat.postMessage, files uploaded with
// files.getUploadURLExternal and files.completeUploadExternal), reacts,
// edits, deletes and reads history there, and takes the Events API's
// requests at its path on toolbelt serve (ServeHTTP), verified with the
// app's signing secret.
//
// A conversation is CHANNEL/THREAD_TS: a message starts a thread (its own
// ts) or is said in one, and the answer goes to that thread, so that a
// thread keeps its session. A target may also be a bare channel id, for a
// message of its own.
type Slack struct {
	name string
	cfg  config.Channel
	o    Options
	base string
	http *http.Client
	now  func() time.Time

	mu      sync.Mutex
	deliver func(Message)
	userID  string // the bot's user, from auth.test
	botID   string
}

// slackSkew is how far a request's timestamp may be from now.
const slackSkew = 5 * time.Minute

func newSlack(name string, ch config.Channel, o Options) (*Slack, error) {
	base := strings.TrimSuffix(cmp.Or(ch.APIURL, "https://slack.com/api"), "/")
	return &Slack{name: name, cfg: ch, o: o, base: base, http: newBotClient(o, 60*time.Second), now: time.Now}, nil
}

// Capabilities: Slack does everything.
func (s *Slack) Capabilities() Capabilities {
	return Capabilities{Receive: true, React: true, Edit: true, Delete: true, Attachments: true,
		Targets: "a Slack channel id (C…, or D… for a direct message), or CHANNEL/THREAD_TS for a thread (the conversation of a message received)"}
}

// Start checks the token with auth.test (learning the bot's own user,
// whose messages are not passed on) and that the signing secret is set,
// then takes the Events API's requests until Stop.
func (s *Slack) Start(ctx context.Context, deliver func(Message)) error {
	if _, err := s.o.secret(s.name, "signingSecretEnv", s.cfg.SigningSecretEnv); err != nil {
		return err
	}
	var who struct {
		UserID string `json:"user_id"`
		BotID  string `json:"bot_id"`
	}
	if err := s.call(ctx, "auth.test", url.Values{}, &who); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userID, s.botID, s.deliver = who.UserID, who.BotID, deliver
	return nil
}

// Stop refuses the Events API's requests from now on.
func (s *Slack) Stop(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliver = nil
	return nil
}

// slackMessage is a message of the Web API and the Events API.
type slackMessage struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
}

// message makes the Message of m, said in channel.
func (s *Slack) message(channel string, m slackMessage) Message {
	out := Message{ID: m.TS, Channel: s.name, Conversation: channel + "/" + cmp.Or(m.ThreadTS, m.TS),
		Sender: cmp.Or(m.User, m.BotID), Text: m.Text, Time: slackTime(m.TS)}
	if m.ThreadTS != "" && m.ThreadTS != m.TS {
		out.ReplyTo = m.ThreadTS
	}
	s.mu.Lock()
	own := s.userID != "" && m.User == s.userID
	s.mu.Unlock()
	if own {
		out.Sender = s.name
	}
	return out
}

// slackTime reads a ts (seconds.micros).
func slackTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(n, us*1000)
}

// splitSlack cuts a conversation into its channel and thread.
func splitSlack(conversation string) (channel, thread string, err error) {
	channel, thread, _ = strings.Cut(conversation, "/")
	if channel == "" || strings.ContainsAny(conversation, " \t\r\n#") {
		return "", "", fmt.Errorf("%q is not a Slack conversation: give a channel id (C0123ABC), or CHANNEL/THREAD_TS for a thread", conversation)
	}
	return channel, thread, nil
}

// Send posts out's text with chat.postMessage, in the target's thread or
// else as a reply (thread_ts) to out.ReplyTo, and uploads its attachments
// to the same place.
func (s *Slack) Send(ctx context.Context, out Outgoing) (Message, error) {
	channel, thread, err := splitSlack(out.Target)
	if err != nil {
		return Message{}, err
	}
	thread = cmp.Or(thread, out.ReplyTo)
	text := out.Text
	if text == "" {
		for _, a := range out.Attachments {
			text = strings.TrimSpace(text + " " + a.Name)
		}
	}
	args := map[string]any{"channel": channel, "text": text}
	if thread != "" {
		args["thread_ts"] = thread
	}
	var res struct {
		Channel string       `json:"channel"`
		TS      string       `json:"ts"`
		Message slackMessage `json:"message"`
	}
	if err := s.call(ctx, "chat.postMessage", args, &res); err != nil {
		return Message{}, err
	}
	for _, a := range out.Attachments {
		if err := s.upload(ctx, cmp.Or(res.Channel, channel), thread, a); err != nil {
			return Message{}, err
		}
	}
	m := Message{ID: res.TS, Channel: s.name, Conversation: cmp.Or(res.Channel, channel), Sender: s.name, Text: text, ReplyTo: out.ReplyTo, Time: s.now()}
	if thread != "" {
		m.Conversation += "/" + thread
	}
	return m, nil
}

// upload sends a file to channel (in thread) the way Slack asks: an upload
// URL, the bytes POSTed there, then the upload completed in the channel.
func (s *Slack) upload(ctx context.Context, channel, thread string, a Attachment) error {
	var up struct {
		UploadURL string `json:"upload_url"`
		FileID    string `json:"file_id"`
	}
	if err := s.call(ctx, "files.getUploadURLExternal", url.Values{"filename": {a.Name}, "length": {strconv.Itoa(len(a.Data))}}, &up); err != nil {
		return err
	}
	api := &botAPI{service: "Slack", channel: s.name, client: s.http, header: func(http.Header) {}, retryAfter: slackRetryAfter}
	status, answer, err := api.do(ctx, http.MethodPost, up.UploadURL, cmp.Or(a.MIMEType, "application/octet-stream"), a.Data)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("channel %s: uploading %s to Slack: %d %s", s.name, a.Name, status, clip(answer))
	}
	complete := map[string]any{"files": []map[string]string{{"id": up.FileID, "title": a.Name}}, "channel_id": channel}
	if thread != "" {
		complete["thread_ts"] = thread
	}
	return s.call(ctx, "files.completeUploadExternal", complete, nil)
}

// React adds a reaction (reactions.add); an emoji is given by its Slack
// name, or as one of the common characters.
func (s *Slack) React(ctx context.Context, conversation, messageID, emoji string) error {
	channel, _, err := splitSlack(conversation)
	if err != nil {
		return err
	}
	name, ok := emojiName(emoji)
	if !ok {
		return fmt.Errorf("Slack reactions take an emoji's name (thumbsup, white_check_mark, eyes, …), not %q", emoji)
	}
	err = s.call(ctx, "reactions.add", map[string]string{"channel": channel, "timestamp": messageID, "name": name}, nil)
	if err != nil && strings.Contains(err.Error(), ": already_reacted") {
		return nil
	}
	return err
}

// Edit replaces a message's text (chat.update).
func (s *Slack) Edit(ctx context.Context, conversation, messageID, text string) error {
	channel, _, err := splitSlack(conversation)
	if err != nil {
		return err
	}
	return s.call(ctx, "chat.update", map[string]string{"channel": channel, "ts": messageID, "text": text}, nil)
}

// Delete deletes a message (chat.delete).
func (s *Slack) Delete(ctx context.Context, conversation, messageID string) error {
	channel, _, err := splitSlack(conversation)
	if err != nil {
		return err
	}
	return s.call(ctx, "chat.delete", map[string]string{"channel": channel, "ts": messageID}, nil)
}

// Read returns a channel's latest messages (conversations.history) or a
// thread's (conversations.replies), oldest first.
func (s *Slack) Read(ctx context.Context, conversation string, limit int) ([]Message, error) {
	channel, thread, err := splitSlack(conversation)
	if err != nil {
		return nil, err
	}
	limit = cmp.Or(limit, 20)
	var res struct {
		Messages []slackMessage `json:"messages"`
	}
	if thread == "" {
		err = s.call(ctx, "conversations.history", url.Values{"channel": {channel}, "limit": {strconv.Itoa(min(limit, 999))}}, &res)
		slices.Reverse(res.Messages)
	} else {
		err = s.call(ctx, "conversations.replies", url.Values{"channel": {channel}, "ts": {thread}, "limit": {"1000"}}, &res)
	}
	if err != nil {
		return nil, err
	}
	if len(res.Messages) > limit {
		res.Messages = res.Messages[len(res.Messages)-limit:]
	}
	out := make([]Message, 0, len(res.Messages))
	for _, m := range res.Messages {
		out = append(out, s.message(channel, m))
	}
	return out, nil
}

// call calls a Web API method with args (form-encoded url.Values, or
// JSON), the bot's token as bearer, and decodes the answer into out; an
// answer that is not ok is an error with Slack's reason.
func (s *Slack) call(ctx context.Context, method string, args any, out any) error {
	token, err := s.o.secret(s.name, "tokenEnv", s.cfg.TokenEnv)
	if err != nil {
		return err
	}
	var body []byte
	contentType := "application/x-www-form-urlencoded"
	if form, ok := args.(url.Values); ok {
		body = []byte(form.Encode())
	} else if body, err = json.Marshal(args); err != nil {
		return err
	} else {
		contentType = "application/json; charset=utf-8"
	}
	api := &botAPI{service: "Slack", channel: s.name, client: s.http, token: token, retryAfter: slackRetryAfter,
		header: func(h http.Header) { h.Set("Authorization", "Bearer "+token) }}
	status, answer, err := api.do(ctx, http.MethodPost, s.base+"/"+method, contentType, body)
	if err != nil {
		return err
	}
	var res struct {
		OK     bool   `json:"ok"`
		Error  string `json:"error"`
		Needed string `json:"needed"`
	}
	if status != http.StatusOK || json.Unmarshal(answer, &res) != nil {
		return fmt.Errorf("channel %s: Slack %s answered %d: %s", s.name, method, status, clip(answer))
	}
	if !res.OK {
		return fmt.Errorf("channel %s: Slack %s: %s%s", s.name, method, res.Error, s.hint(res.Error, res.Needed))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}

// hint says what to do about the Web API's common errors.
func (s *Slack) hint(code, needed string) string {
	switch code {
	case "not_authed", "invalid_auth", "account_inactive", "token_revoked":
		return fmt.Sprintf(" (check the bot token in $%s)", s.cfg.TokenEnv)
	case "missing_scope":
		return fmt.Sprintf(" (add the scope %s to the app and reinstall it)", needed)
	case "not_in_channel":
		return " (invite the app to the channel first: /invite @app)"
	case "channel_not_found":
		return " (give a channel id such as C0123ABC, not its name)"
	case "message_not_found":
		return " (no message of that ts in that channel)"
	}
	return ""
}

// slackRetryAfter reads Slack's Retry-After (seconds).
func slackRetryAfter(h http.Header, _ []byte) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After")))
	if err != nil || n < 0 {
		return time.Second
	}
	return time.Duration(n) * time.Second
}

// clip is the start of an answer, for an error.
func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// ServeHTTP takes the Events API's requests: each must carry a valid
// signature (v0, the signing secret's HMAC-SHA256 of "v0:TIMESTAMP:BODY")
// and a timestamp within five minutes. It answers url_verification's
// challenge; an event_callback's message (or app_mention) is passed on
// once — retries and the second event of a message are dropped, and so
// are the bot's own messages and those of other bots.
func (s *Slack) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(rw, "POST the Events API's requests", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxIncoming))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if err := s.verify(r.Header, body); err != nil {
		http.Error(rw, err.Error(), http.StatusUnauthorized)
		return
	}
	var env struct {
		Type      string          `json:"type"`
		Challenge string          `json:"challenge"`
		Event     json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		http.Error(rw, "want the Events API's JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch env.Type {
	case "url_verification":
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(map[string]string{"challenge": env.Challenge})
		return
	case "event_callback":
	default:
		rw.WriteHeader(http.StatusOK)
		return
	}
	s.mu.Lock()
	deliver := s.deliver
	s.mu.Unlock()
	if deliver == nil {
		http.Error(rw, "the channel is not started", http.StatusServiceUnavailable)
		return
	}
	var ev slackMessage
	if err := json.Unmarshal(env.Event, &ev); err != nil {
		http.Error(rw, "the event is not an object: "+err.Error(), http.StatusBadRequest)
		return
	}
	m, ok, err := s.incoming(r.Context(), ev)
	if err != nil {
		slog.Warn("channels: recording a delivery", "channel", s.name, "err", err)
		http.Error(rw, "the event could not be recorded: Slack sends it again", http.StatusServiceUnavailable)
		return
	}
	if ok {
		deliver(m)
	}
	rw.WriteHeader(http.StatusOK)
}

// verify checks a request's signature and timestamp.
func (s *Slack) verify(h http.Header, body []byte) error {
	secret, err := s.o.secret(s.name, "signingSecretEnv", s.cfg.SigningSecretEnv)
	if err != nil {
		return fmt.Errorf("the channel has no signing secret to verify with")
	}
	ts := h.Get("X-Slack-Request-Timestamp")
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("no X-Slack-Request-Timestamp")
	}
	if d := s.now().Sub(time.Unix(n, 0)); d > slackSkew || d < -slackSkew {
		return fmt.Errorf("the request's timestamp is %s off: more than five minutes", d.Round(time.Second))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	want := "v0=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(h.Get("X-Slack-Signature"))) {
		return fmt.Errorf("the X-Slack-Signature is not the signing secret's")
	}
	return nil
}

// incoming makes the Message of an event, once: ok is false for a message
// already taken — a retried event, the other event of a message (Slack
// sends both message and app_mention for a mention), or one another
// gateway on the same store took, all one message's channel and ts — for
// the bot's own messages, other bots' and changes (edits, deletions,
// joins). err says the message could not be recorded as taken.
func (s *Slack) incoming(ctx context.Context, ev slackMessage) (Message, bool, error) {
	if ev.Type != "message" && ev.Type != "app_mention" {
		return Message{}, false, nil
	}
	switch ev.Subtype {
	case "", "file_share", "thread_broadcast":
	default:
		return Message{}, false, nil
	}
	if ev.Channel == "" || ev.TS == "" || ev.User == "" || ev.BotID != "" {
		return Message{}, false, nil
	}
	s.mu.Lock()
	userID := s.userID
	s.mu.Unlock()
	if ev.User == userID {
		return Message{}, false, nil
	}
	if first, err := s.o.State.Claim(ctx, s.name, "ts:"+ev.Channel+"/"+ev.TS, DeliveryWindow); err != nil || !first {
		return Message{}, false, err
	}
	m := s.message(ev.Channel, ev)
	m.Direct = ev.ChannelType == "im"
	mention := "<@" + userID + ">"
	m.Mention = m.Direct || ev.Type == "app_mention" || (userID != "" && strings.Contains(m.Text, mention))
	if userID != "" {
		m.Text = strings.TrimSpace(strings.ReplaceAll(m.Text, mention, ""))
	}
	return m, true, nil
}
