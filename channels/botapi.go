package channels

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// botAPI is a client of a chat service's bot HTTP API (Slack's Web API,
// Discord's REST API, Telegram's Bot API): it sends requests, waits as
// asked when the service answers 429 — at most maxRateWait at a time and
// rateAttempts times — and keeps the token out of its errors.
type botAPI struct {
	service string // Slack, Discord, Telegram
	channel string // the configured channel's name
	client  *http.Client
	// token is the bot's token: it is removed from errors (Telegram's
	// URLs carry it).
	token string
	// header sets the request's authentication and other headers.
	header func(http.Header)
	// retryAfter reads how long a 429 answer asks to wait.
	retryAfter func(h http.Header, body []byte) time.Duration
}

const (
	// maxRateWait is the longest a channel waits when its service says it
	// is rate limited; a longer wait is an error saying when to try again.
	maxRateWait = 30 * time.Second
	// rateAttempts is how many times a request is sent while rate limited.
	rateAttempts = 3
	// maxAnswer bounds an API's answer read.
	maxAnswer = 8 << 20
)

func newBotClient(o Options, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{RootCAs: o.RootCAs}}}
}

// do sends a request of method to u with body (of contentType) and
// returns the answer's status and body; 429 answers are waited out.
func (b *botAPI) do(ctx context.Context, method, u, contentType string, body []byte) (int, []byte, error) {
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return 0, nil, b.clean(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		b.header(req.Header)
		resp, err := b.client.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return 0, nil, fmt.Errorf("channel %s: %s API: %s %s: %w", b.channel, b.service, method, b.path(u), b.clean(err))
		}
		answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
		if err != nil {
			return 0, nil, fmt.Errorf("channel %s: reading the %s API's answer: %w", b.channel, b.service, b.clean(err))
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode, answer, nil
		}
		wait := b.retryAfter(resp.Header, answer)
		if wait > maxRateWait || attempt >= rateAttempts {
			return 0, nil, fmt.Errorf("channel %s: the %s API is rate limiting %s %s: try again in %s", b.channel, b.service, method, b.path(u), wait.Round(time.Second/10))
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, nil, ctx.Err()
		}
	}
}

// path is u's path without the token, for errors.
func (b *botAPI) path(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "?"
	}
	return b.redact(p.Path)
}

// clean removes the token from err's text.
func (b *botAPI) clean(err error) error {
	if b.token == "" || !strings.Contains(err.Error(), b.token) {
		return err
	}
	return errors.New(b.redact(err.Error()))
}

func (b *botAPI) redact(s string) string {
	if b.token == "" {
		return s
	}
	return strings.ReplaceAll(s, b.token, "<token>")
}

// formFile is a file part of a multipart form.
type formFile struct {
	field string
	a     Attachment
}

// multipartBody encodes fields and files as multipart/form-data,
// returning the body and its content type.
func multipartBody(fields [][2]string, files []formFile) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, f.field, f.a.Name))
		h.Set("Content-Type", cmp.Or(f.a.MIMEType, "application/octet-stream"))
		part, err := w.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		part.Write(f.a.Data)
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// emojiNames are the emoji models name most, by Slack's names (which
// Slack's reactions take) and as characters (which Discord's and
// Telegram's take).
var emojiNames = [][2]string{
	{"thumbsup", "👍"}, {"+1", "👍"}, {"thumbsdown", "👎"}, {"-1", "👎"}, {"white_check_mark", "✅"},
	{"heavy_check_mark", "✔️"}, {"x", "❌"}, {"heart", "❤️"}, {"eyes", "👀"}, {"tada", "🎉"}, {"fire", "🔥"},
	{"pray", "🙏"}, {"smile", "😄"}, {"joy", "😂"}, {"rocket", "🚀"}, {"ok_hand", "👌"}, {"clap", "👏"},
	{"thinking_face", "🤔"}, {"100", "💯"}, {"warning", "⚠️"},
}

// emojiChar returns the character of an emoji given by name (":tada:" or
// "tada") or as a character.
func emojiChar(e string) string {
	name := strings.Trim(e, ":")
	for _, p := range emojiNames {
		if p[0] == name {
			return p[1]
		}
	}
	return e
}

// emojiName returns the Slack name of an emoji given by name or as a
// character; ok is false for a character it does not know.
func emojiName(e string) (string, bool) {
	name := strings.Trim(e, ":")
	if name == "" {
		return "", false
	}
	for _, p := range emojiNames {
		if p[1] == name || strings.TrimSuffix(p[1], "\ufe0f") == name {
			return p[0], true
		}
	}
	for _, r := range name {
		if r > 0x7f {
			return "", false
		}
	}
	return name, true
}
