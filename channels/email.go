package channels

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/randid"
)

// Email is a channel that sends mail through an SMTP server, upgrading
// the connection with STARTTLS (required unless startTls is false) and
// logging in with PLAIN when a username is set. It receives nothing
// itself: mail reaches agents through a webhook channel.
type Email struct {
	unsupported
	recent
	name string
	cfg  config.Channel
	o    Options
}

func newEmail(name string, ch config.Channel, o Options) (*Email, error) {
	if _, err := mail.ParseAddress(ch.From); err != nil {
		return nil, fmt.Errorf("channels.%s.from is %q: %w", name, ch.From, err)
	}
	return &Email{unsupported: unsupported{"email"}, name: name, cfg: ch, o: o}, nil
}

// Capabilities: email sends, with attachments.
func (e *Email) Capabilities() Capabilities {
	return Capabilities{Attachments: true, Targets: "an email address (name@example.com)"}
}

// Start has nothing to connect: each send opens its own SMTP session.
func (e *Email) Start(context.Context, func(Message)) error { return nil }

// Stop has nothing to close.
func (e *Email) Stop(context.Context) error { return nil }

// Send mails out to its target; the first line of the text is the
// subject (at most 78 characters), the whole text the body.
func (e *Email) Send(ctx context.Context, out Outgoing) (Message, error) {
	to, err := mail.ParseAddress(out.Target)
	if err != nil {
		return Message{}, fmt.Errorf("%q is not an email address: %w", out.Target, err)
	}
	m := Message{ID: "<" + randid.New("", 16) + "@toolbelt>", Channel: e.name, Conversation: to.Address, Sender: e.cfg.From, Text: out.Text, ReplyTo: out.ReplyTo, Time: time.Now()}
	body, err := e.compose(m, out)
	if err != nil {
		return Message{}, err
	}
	if err := e.deliver(ctx, to.Address, body); err != nil {
		return Message{}, fmt.Errorf("channel %s: %w", e.name, err)
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

// compose writes the message m: headers, its text, and the attachments as
// parts of a multipart/mixed body.
func (e *Email) compose(m Message, out Outgoing) ([]byte, error) {
	subject, _, _ := strings.Cut(strings.TrimSpace(out.Text), "\n")
	if r := []rune(subject); len(r) > 78 {
		subject = string(r[:77]) + "…"
	}
	var b bytes.Buffer
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	h("From", e.cfg.From)
	h("To", m.Conversation)
	h("Subject", mime.QEncoding.Encode("utf-8", subject))
	h("Date", m.Time.Format(time.RFC1123Z))
	h("Message-ID", m.ID)
	if out.ReplyTo != "" {
		h("In-Reply-To", out.ReplyTo)
		h("References", out.ReplyTo)
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
