package channels

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/randid"
)

// Email is a channel that sends mail through an SMTP server, upgrading
// the connection with STARTTLS (required unless startTls is false) and
// logging in with PLAIN when a username is set. With an imapServer it
// receives the mail of that server's INBOX (imap.go); without one, mail
// reaches agents only through a webhook channel.
type Email struct {
	unsupported
	recent
	name string
	cfg  config.Channel
	o    Options

	// limits bound what receiving holds in memory.
	limits imapLimits

	mu    sync.Mutex
	inbox *inbox
}

func newEmail(name string, ch config.Channel, o Options) (*Email, error) {
	if _, err := mail.ParseAddress(ch.From); err != nil {
		return nil, fmt.Errorf("channels.%s.from is %q: %w", name, ch.From, err)
	}
	return &Email{unsupported: unsupported{"email"}, name: name, cfg: ch, o: o, limits: defaultIMAPLimits}, nil
}

// Capabilities: email sends, with attachments, and receives with an
// imapServer.
func (e *Email) Capabilities() Capabilities {
	if e.cfg.IMAPServer != "" {
		return Capabilities{Receive: true, Attachments: true, Targets: "an email address (name@example.com), or the conversation of a mail received (its thread's <message-id>) to reply in the thread"}
	}
	return Capabilities{Attachments: true, Targets: "an email address (name@example.com)"}
}

// Start receives the mail of the imapServer's INBOX, if one is set (each
// send opens its own SMTP session).
func (e *Email) Start(ctx context.Context, deliver func(Message)) error {
	if e.cfg.IMAPServer == "" {
		return nil
	}
	return e.startInbox(ctx, deliver)
}

// Stop stops receiving.
func (e *Email) Stop(ctx context.Context) error { return e.stopInbox(ctx) }

// fromAddress is the address the channel sends from.
func (e *Email) fromAddress() string {
	from, _ := mail.ParseAddress(e.cfg.From)
	return from.Address
}

// Send mails out to its target; the first line of the text is the
// subject (at most 78 characters), the whole text the body.
// A target that is a thread the channel received mail in (its
// conversation, "<message-id>") is a reply in the thread: to its sender,
// subject "Re: …", In-Reply-To and References set.
func (e *Email) Send(ctx context.Context, out Outgoing) (Message, error) {
	m := Message{ID: "<" + randid.New("", 16) + "@toolbelt>", Channel: e.name, Sender: e.cfg.From, Text: out.Text, ReplyTo: out.ReplyTo, Time: time.Now()}
	var to string
	th, inThread, err := e.thread(ctx, out.Target)
	if err != nil {
		return Message{}, err
	}
	if inThread {
		to, m.Conversation, m.ReplyTo = th.To, out.Target, cmp.Or(out.ReplyTo, th.Last)
	} else if strings.HasPrefix(out.Target, "<") {
		return Message{}, fmt.Errorf("%s is not a thread channel %s has received mail in (within a year of its latest mail): send to an email address", out.Target, e.name)
	} else {
		a, err := mail.ParseAddress(out.Target)
		if err != nil {
			return Message{}, fmt.Errorf("%q is not an email address: %w", out.Target, err)
		}
		to, m.Conversation = a.Address, a.Address
	}
	body, err := e.compose(m, to, out, th)
	if err != nil {
		return Message{}, err
	}
	if err := e.deliver(ctx, to, body); err != nil {
		return Message{}, fmt.Errorf("channel %s: %w", e.name, err)
	}
	if inThread {
		// The mail is sent: failing to remember it only loses it from
		// the thread's References, which is not worth an error that
		// would have the mail sent again.
		th.References, th.Last = append(th.References, m.ID), m.ID
		if err := e.remember(ctx, out.Target, th); err != nil {
			slog.Warn("channels: remembering a mail sent in a thread", "channel", e.name, "thread", out.Target, "err", err)
		}
	}
	e.add(m)
	return m, nil
}

// deliver hands body to the SMTP server for to.
func (e *Email) deliver(ctx context.Context, to string, body []byte) error {
	d := net.Dialer{Timeout: 30 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", e.cfg.Server)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	host, _, _ := net.SplitHostPort(e.cfg.Server)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, RootCAs: e.o.RootCAs}); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	} else if e.cfg.RequiresStartTLS() {
		return errors.New("the SMTP server does not offer STARTTLS, and startTls requires it: mail was not sent in the clear")
	}
	if e.cfg.Username != "" {
		pass, err := e.o.secret(e.name, "passwordEnv", e.cfg.PasswordEnv)
		if err != nil {
			return err
		}
		if err := c.Auth(smtp.PlainAuth("", e.cfg.Username, pass, host)); err != nil {
			return fmt.Errorf("logging in as %s: %w", e.cfg.Username, err)
		}
	}
	from, _ := mail.ParseAddress(e.cfg.From)
	if err := c.Mail(from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// compose writes the message m to to: headers, its text, and the
// attachments as parts of a multipart/mixed body; in a thread th (one with
// a subject), as a reply in it.
func (e *Email) compose(m Message, to string, out Outgoing, th mailThread) ([]byte, error) {
	subject, _, _ := strings.Cut(strings.TrimSpace(out.Text), "\n")
	if r := []rune(subject); len(r) > 78 {
		subject = string(r[:77]) + "…"
	}
	references := m.ReplyTo
	if th.To != "" {
		subject = th.Subject
		if !strings.HasPrefix(strings.ToLower(subject), "re:") {
			subject = "Re: " + subject
		}
		references = strings.Join(th.References, " ")
	}
	var b bytes.Buffer
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	h("From", e.cfg.From)
	h("To", to)
	h("Subject", mime.QEncoding.Encode("utf-8", subject))
	h("Date", m.Time.Format(time.RFC1123Z))
	h("Message-ID", m.ID)
	if m.ReplyTo != "" {
		h("In-Reply-To", m.ReplyTo)
		h("References", references)
	}
	h("MIME-Version", "1.0")
	text := strings.ReplaceAll(strings.ReplaceAll(out.Text, "\r\n", "\n"), "\n", "\r\n")
	if len(out.Attachments) == 0 {
		h("Content-Type", "text/plain; charset=utf-8")
		b.WriteString("\r\n" + text + "\r\n")
		return b.Bytes(), nil
	}
	mw := multipart.NewWriter(&b)
	h("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	b.WriteString("\r\n")
	part, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}})
	if err != nil {
		return nil, err
	}
	part.Write([]byte(text + "\r\n"))
	for _, a := range out.Attachments {
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {a.MIMEType},
			"Content-Transfer-Encoding": {"base64"},
			"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": a.Name})},
		})
		if err != nil {
			return nil, err
		}
		writeBase64Lines(part, a.Data)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeBase64Lines writes data base64-encoded in lines of 76 characters,
// as MIME wants.
func writeBase64Lines(w io.Writer, data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		w.Write([]byte(enc[:76] + "\r\n"))
		enc = enc[76:]
	}
	w.Write([]byte(enc + "\r\n"))
}
