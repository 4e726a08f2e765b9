package channels

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// An email channel with an imapServer receives the mail of its INBOX:
// Start logs in and selects it; a goroutine then hands each unseen mail
// on as a Message and marks it seen, waiting for more with IDLE where the
// server can (polling every imapPollSeconds where it cannot), and
// reconnects with backoff when the connection fails.

// maxMailText bounds the text of a mail handed to an agent.
const maxMailText = 64 << 10

// inbox is what an email channel's receiving holds.
type inbox struct {
	loop
	wake chan struct{} // a mailbox update came while idling
}

// startInbox logs in to the channel's IMAP server and receives its mail
// until stopInbox.
func (e *Email) startInbox(ctx context.Context, deliver func(Message)) error {
	pass, err := e.o.secret(e.name, "passwordEnv", e.cfg.PasswordEnv)
	if err != nil {
		return err
	}
	in := &inbox{wake: make(chan struct{}, 1)}
	c, err := e.dialIMAP(ctx, pass, in.wake)
	if err != nil {
		return fmt.Errorf("channel %s: %w", e.name, err)
	}
	e.mu.Lock()
	e.inbox = in
	e.mu.Unlock()
	in.start(ctx, func(run context.Context) { e.receive(run, in, c, pass, deliver) })
	return nil
}

// stopInbox stops receiving and waits for the goroutine to end.
func (e *Email) stopInbox(ctx context.Context) error {
	e.mu.Lock()
	in := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	if in == nil {
		return nil
	}
	return in.stop(ctx)
}

// dialIMAP connects (over TLS, or upgraded with STARTTLS), logs in and
// selects INBOX; a mailbox update wakes wake.
func (e *Email) dialIMAP(ctx context.Context, pass string, wake chan struct{}) (*imapclient.Client, error) {
	host, _, _ := net.SplitHostPort(e.cfg.IMAPServer)
	o := &imapclient.Options{
		TLSConfig: &tls.Config{ServerName: host, RootCAs: e.o.RootCAs},
		Dialer:    &net.Dialer{Timeout: 30 * time.Second},
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			},
		},
	}
	var c *imapclient.Client
	var err error
	switch {
	case e.cfg.IMAPTLS:
		c, err = imapclient.DialTLS(e.cfg.IMAPServer, o)
	case e.cfg.RequiresStartTLS():
		c, err = imapclient.DialStartTLS(e.cfg.IMAPServer, o)
	default:
		c, err = imapclient.DialInsecure(e.cfg.IMAPServer, o)
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to the IMAP server %s: %w", e.cfg.IMAPServer, err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := c.Login(e.cfg.Username, pass).Wait(); err != nil {
		c.Close()
		return nil, fmt.Errorf("logging in to %s as %s: %w", e.cfg.IMAPServer, e.cfg.Username, err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		c.Close()
		return nil, fmt.Errorf("selecting INBOX on %s: %w", e.cfg.IMAPServer, err)
	}
	return c, nil
}

// receive hands on the mail of c's INBOX until ctx ends, reconnecting
// with backoff (1s doubling to a minute) when the connection fails.
func (e *Email) receive(ctx context.Context, in *inbox, c *imapclient.Client, pass string, deliver func(Message)) {
	backoff := time.Second
	for {
		if c != nil {
			err := e.watch(ctx, in, c, deliver)
			c.Close()
			if ctx.Err() != nil {
				return
			}
			slog.Warn("channels: the IMAP connection failed; reconnecting", "channel", e.name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		var err error
		if c, err = e.dialIMAP(ctx, pass, in.wake); err != nil {
			slog.Warn("channels: reconnecting to the IMAP server", "channel", e.name, "err", err)
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
	}
}

// watch takes the unseen mail, then waits for more (IDLE, or a poll
// interval) and takes it, until ctx ends or the connection fails.
func (e *Email) watch(ctx context.Context, in *inbox, c *imapclient.Client, deliver func(Message)) error {
	poll := time.Duration(cmp.Or(e.cfg.IMAPPollSeconds, 60)) * time.Second
	for {
		more, err := e.takeUnseen(ctx, c, deliver)
		if err != nil {
			return err
		}
		if more {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		var idle *imapclient.IdleCommand
		if c.Caps().Has(imap.CapIdle) {
			var err error
			if idle, err = c.Idle(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
		case <-in.wake:
		case <-c.Closed():
		case <-time.After(poll):
		}
		if idle != nil {
			if err := idle.Close(); err != nil {
				return err
			}
			if err := idle.Wait(); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// imapLimits bound what one look at the INBOX holds in memory.
type imapLimits struct {
	// perPoll is the most unseen mails one look takes; the others stay
	// unseen for the next look, which follows at once.
	perPoll int
	// batch is the most mails whose bodies are fetched at once, and
	// batchBytes the most bytes.
	batch      int
	batchBytes int64
	// maxBytes is the largest mail read: a larger one is not handed on,
	// and is logged.
	maxBytes int64
}

var defaultIMAPLimits = imapLimits{perPoll: 100, batch: 20, batchBytes: 32 << 20, maxBytes: 16 << 20}

// takeUnseen hands on INBOX's unseen mail, oldest first, and marks it
// seen, holding little in memory: it learns the unseen mails' UIDs, then
// their sizes (at most limits.perPoll mails: more says others are left
// for the next look), then their bodies in batches, each batch marked seen
// once handed on. A mail larger than limits.maxBytes is not read: it is
// logged (its sender, subject and size) and marked seen, so that it is
// not looked at again. A mail that cannot be read is marked seen too, and
// logged: it would otherwise be read again forever. A mail another
// gateway on the same state took is not handed on again.
func (e *Email) takeUnseen(ctx context.Context, c *imapclient.Client, deliver func(Message)) (more bool, err error) {
	lim := e.limits
	found, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return false, err
	}
	uids := found.AllUIDs()
	slices.Sort(uids)
	if len(uids) > lim.perPoll {
		slog.Info("channels: more unseen mail than one look takes; the rest follows", "channel", e.name, "unseen", len(uids), "taking", lim.perPoll)
		uids, more = uids[:lim.perPoll], true
	}
	if len(uids) == 0 {
		return false, nil
	}
	sizes, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true, Envelope: true}).Collect()
	if err != nil {
		return false, err
	}
	slices.SortFunc(sizes, func(a, b *imapclient.FetchMessageBuffer) int { return cmp.Compare(a.UID, b.UID) })
	var batch []imap.UID
	var batchBytes int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := e.takeBatch(ctx, c, batch, deliver)
		batch, batchBytes = batch[:0], 0
		return err
	}
	var tooLarge []imap.UID
	for _, m := range sizes {
		if m.RFC822Size > lim.maxBytes {
			var from, subject, id string
			if env := m.Envelope; env != nil {
				subject, id = env.Subject, env.MessageID
				if len(env.From) > 0 {
					from = env.From[0].Addr()
				}
			}
			slog.Warn("channels: a mail is larger than an email channel reads; it is not handed on, and is marked seen",
				"channel", e.name, "uid", m.UID, "bytes", m.RFC822Size, "limit", lim.maxBytes, "from", from, "subject", subject, "messageId", id)
			tooLarge = append(tooLarge, m.UID)
			continue
		}
		if len(batch) > 0 && (len(batch) >= lim.batch || batchBytes+m.RFC822Size > lim.batchBytes) {
			if err := flush(); err != nil {
				return false, err
			}
		}
		batch, batchBytes = append(batch, m.UID), batchBytes+m.RFC822Size
	}
	if err := flush(); err != nil {
		return false, err
	}
	if len(tooLarge) > 0 {
		if err := markSeen(c, tooLarge); err != nil {
			return false, err
		}
	}
	return more, nil
}

// takeBatch fetches the mails uids, hands them on and marks them seen. A
// body longer than limits.maxBytes (a server's size was wrong) is not
// read past it, and not handed on.
func (e *Email) takeBatch(ctx context.Context, c *imapclient.Client, uids []imap.UID, deliver func(Message)) error {
	whole := &imap.FetchItemBodySection{Peek: true}
	cmd := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{whole}})
	type mail struct {
		uid imap.UID
		raw []byte
	}
	var mails []mail
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		var m mail
		for item := msg.Next(); item != nil; item = msg.Next() {
			switch item := item.(type) {
			case imapclient.FetchItemDataUID:
				m.uid = item.UID
			case imapclient.FetchItemDataBodySection:
				if item.Literal == nil {
					continue
				}
				raw, err := io.ReadAll(io.LimitReader(item.Literal, e.limits.maxBytes+1))
				if err != nil {
					cmd.Close()
					return err
				}
				m.raw = raw
			}
		}
		mails = append(mails, m)
	}
	if err := cmd.Close(); err != nil {
		return err
	}
	for _, raw := range mails {
		if int64(len(raw.raw)) > e.limits.maxBytes {
			slog.Warn("channels: a mail is larger than an email channel reads; it is not handed on, and is marked seen", "channel", e.name, "uid", raw.uid, "limit", e.limits.maxBytes)
			continue
		}
		m, th, err := e.parseMail(raw.raw)
		switch {
		case err != nil:
			slog.Warn("channels: a mail cannot be read", "channel", e.name, "uid", raw.uid, "err", err)
		case strings.EqualFold(m.Sender, e.fromAddress()): // never its own mail
		case !e.o.firstDelivery(ctx, e.name, "message-id:"+m.ID):
		default:
			if err := e.remember(ctx, m.Conversation, th); err != nil {
				slog.Warn("channels: remembering a mail's thread", "channel", e.name, "thread", m.Conversation, "err", err)
			}
			e.add(m)
			deliver(m)
		}
	}
	return markSeen(c, uids)
}

// markSeen flags the mails uids seen.
func markSeen(c *imapclient.Client, uids []imap.UID) error {
	return c.Store(imap.UIDSetNum(uids...), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
}

// parseMail reads a mail as a Message: its sender's address, its subject
// and text ("Subject: …", a blank line, the text), its Message-ID, what it
// answers (In-Reply-To), and as conversation its thread — the first of its
// References, else what it answers, else itself — and what the channel
// remembers of the thread, so that a reply to the conversation goes to the
// sender, in the thread.
func (e *Email) parseMail(raw []byte) (Message, mailThread, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Message{}, mailThread{}, err
	}
	h := msg.Header
	from, err := h.AddressList("From")
	if err != nil || len(from) == 0 {
		return Message{}, mailThread{}, fmt.Errorf("the mail's From is %q: %v", h.Get("From"), err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		subject = h.Get("Subject")
	}
	text, err := mailText(h.Get("Content-Type"), h.Get("Content-Transfer-Encoding"), msg.Body)
	if err != nil {
		return Message{}, mailThread{}, err
	}
	id := firstID(h.Get("Message-Id"))
	if id == "" {
		return Message{}, mailThread{}, errors.New("the mail has no Message-ID")
	}
	refs := strings.Fields(h.Get("References"))
	inReplyTo := firstID(h.Get("In-Reply-To"))
	thread := cmp.Or(firstID(strings.Join(refs, " ")), inReplyTo, id)
	t, err := h.Date()
	if err != nil {
		t = time.Now()
	}
	sender := from[0].Address
	if !verifiedSender(h["Authentication-Results"], e.cfg.AuthservID, sender) {
		sender = unverified + sender
	}
	m := Message{ID: id, Channel: e.name, Conversation: thread, Sender: sender, ReplyTo: inReplyTo,
		Text: "Subject: " + subject + "\n\n" + strings.TrimSpace(text), Mention: true, Direct: true, Time: t}
	return m, mailThread{To: from[0].Address, Subject: subject, References: append(refs, id), Last: id}, nil
}

// unverified prefixes the sender of a mail whose From the receiving mail
// server did not vouch for: owners and allow entries naming the address
// do not match it.
const unverified = "unverified:"

// verifiedSender says whether the Authentication-Results headers (topmost
// first) of the mail server named authservID vouch for address: its
// topmost header says dmarc=pass, or dkim=pass for the address's domain
// (RFC 8601). Headers of other servers are ignored — a sender can write
// any — and so is every header when authservID is "".
func verifiedSender(results []string, authservID, address string) bool {
	if authservID == "" {
		return false
	}
	_, domain, ok := strings.Cut(strings.ToLower(address), "@")
	if !ok {
		return false
	}
	for _, r := range results {
		parts := strings.Split(r, ";")
		if id := strings.Fields(parts[0]); len(id) == 0 || !strings.EqualFold(id[0], authservID) {
			continue
		}
		for _, res := range parts[1:] {
			f := strings.Fields(strings.ToLower(res))
			if len(f) == 0 {
				continue
			}
			props := map[string]string{}
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					props[k] = strings.Trim(v, `"`)
				}
			}
			switch f[0] {
			case "dmarc=pass":
				if from := props["header.from"]; from == "" || from == domain {
					return true
				}
			case "dkim=pass":
				if props["header.d"] == domain {
					return true
				}
			}
		}
		return false // only the topmost of the server's own headers counts
	}
	return false
}

// firstID returns the first <message-id> of a header's value.
func firstID(v string) string {
	start := strings.IndexByte(v, '<')
	end := strings.IndexByte(v[max(start, 0):], '>')
	if start < 0 || end < 0 {
		return ""
	}
	return v[start : start+end+1]
}

// mailText returns the text of a body of type contentType: itself when it
// is text/plain, the first text/plain part of a multipart body; its
// transfer encoding (base64, quoted-printable) is undone.
func mailText(contentType, encoding string, body io.Reader) (string, error) {
	media, params, err := mime.ParseMediaType(cmp.Or(contentType, "text/plain"))
	if err != nil {
		return "", fmt.Errorf("the mail's Content-Type %q: %w", contentType, err)
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &lineJoiner{r: body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	switch {
	case strings.HasPrefix(media, "multipart/"):
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return "", errors.New("the mail has no text/plain part")
			}
			text, err := mailText(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			if err == nil {
				return text, nil
			}
		}
	case media == "text/plain":
		b, err := io.ReadAll(io.LimitReader(body, maxMailText))
		return string(b), err
	}
	return "", fmt.Errorf("the mail's body is %s, not text", media)
}

// lineJoiner drops the line breaks of base64 text.
type lineJoiner struct{ r io.Reader }

func (l *lineJoiner) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	out := p[:0]
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			out = append(out, b)
		}
	}
	return len(out), err
}

// threadKept is how long an email channel remembers a thread after its
// latest mail, to reply in it.
const threadKept = 365 * 24 * time.Hour

// mailThread is what a channel remembers of a thread, to reply in it.
type mailThread struct {
	To         string   `json:"to"`
	Subject    string   `json:"subject"`
	References []string `json:"references"`
	Last       string   `json:"last"` // the latest message's id
}

// remember keeps th as what the channel knows of thread, in the channel
// state — the store's, so that a restarted gateway, or another on the
// same store, replies in the thread.
func (e *Email) remember(ctx context.Context, thread string, th mailThread) error {
	if len(th.References) > 20 { // the root and the latest ones
		th.References = append(th.References[:1:1], th.References[len(th.References)-19:]...)
	}
	b, err := json.Marshal(th)
	if err != nil {
		return err
	}
	return e.o.State.Put(ctx, e.name, "thread:"+thread, b, threadKept)
}

// thread returns what the channel remembers of thread.
func (e *Email) thread(ctx context.Context, thread string) (mailThread, bool, error) {
	b, ok, err := e.o.State.Get(ctx, e.name, "thread:"+thread)
	if err != nil || !ok {
		return mailThread{}, false, err
	}
	var th mailThread
	if err := json.Unmarshal(b, &th); err != nil {
		return mailThread{}, false, fmt.Errorf("channel %s: what it remembers of the thread %s: %w", e.name, thread, err)
	}
	return th, true, nil
}
