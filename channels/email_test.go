package channels_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
)

// smtpServer is an SMTP server on 127.0.0.1 for the tests: it offers
// STARTTLS (with httptest's certificate) when tls is set, takes AUTH
// PLAIN, and keeps what it was told.
type smtpServer struct {
	addr     string
	roots    *x509.CertPool
	mu       sync.Mutex
	auth     string // the decoded AUTH PLAIN credentials
	authTLS  bool   // whether AUTH came over TLS
	mailFrom string
	rcpt     string
	data     string
}

func startSMTP(t *testing.T, offerTLS bool) *smtpServer {
	t.Helper()
	certs := httptest.NewUnstartedServer(http.NotFoundHandler())
	certs.StartTLS()
	t.Cleanup(certs.Close)
	roots := x509.NewCertPool()
	roots.AddCert(certs.Certificate())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &smtpServer{addr: ln.Addr().String(), roots: roots}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c, offerTLS, certs.TLS)
		}
	}()
	return s
}

func (s *smtpServer) serve(c net.Conn, offerTLS bool, tc *tls.Config) {
	defer func() { c.Close() }()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	say := func(line string) { w.WriteString(line + "\r\n"); w.Flush() }
	say("220 test ESMTP")
	secure := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			if offerTLS && !secure {
				say("250-test\r\n250-STARTTLS\r\n250 AUTH PLAIN")
			} else {
				say("250-test\r\n250 AUTH PLAIN")
			}
		case "STARTTLS":
			say("220 go ahead")
			tlsConn := tls.Server(c, tc)
			if tlsConn.Handshake() != nil {
				return
			}
			c, secure = tlsConn, true
			r, w = bufio.NewReader(c), bufio.NewWriter(c)
		case "AUTH":
			_, b64, _ := strings.Cut(arg, " ")
			raw, _ := base64.StdEncoding.DecodeString(b64)
			s.mu.Lock()
			s.auth, s.authTLS = string(raw), secure
			s.mu.Unlock()
			say("235 ok")
		case "MAIL":
			s.mu.Lock()
			s.mailFrom = arg
			s.mu.Unlock()
			say("250 ok")
		case "RCPT":
			s.mu.Lock()
			s.rcpt = arg
			s.mu.Unlock()
			say("250 ok")
		case "DATA":
			say("354 go on")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil || l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			s.mu.Lock()
			s.data = b.String()
			s.mu.Unlock()
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 unknown")
		}
	}
}

// Mail goes out over STARTTLS, logged in after the upgrade, with the
// first line as its subject, the reply's headers, and an attachment.
func TestEmailSendsOverStartTLS(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t, true)
	a, err := channels.New("mail", config.Channel{Type: "email", Server: srv.addr, From: "Bot <bot@example.com>", Username: "bot", PasswordEnv: "SMTP_PASSWORD"},
		channels.Options{RootCAs: srv.roots, Getenv: func(string) string { return "s3cret" }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Send(context.Background(), channels.Outgoing{Target: "ada@example.com", Text: "Build green\nAll 112 tests pass.", ReplyTo: "<q1@example.com>",
		Attachments: []channels.Attachment{{Name: "report.txt", MIMEType: "text/plain", Data: []byte("all green\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.auth != "\x00bot\x00s3cret" || !srv.authTLS {
		t.Errorf("AUTH %q over TLS %v, want the credentials after STARTTLS", srv.auth, srv.authTLS)
	}
	if srv.mailFrom != "FROM:<bot@example.com>" || srv.rcpt != "TO:<ada@example.com>" {
		t.Errorf("MAIL %q RCPT %q", srv.mailFrom, srv.rcpt)
	}
	for _, want := range []string{"Subject: Build green\r\n", "In-Reply-To: <q1@example.com>\r\n", "Message-ID: " + m.ID + "\r\n",
		"All 112 tests pass.", `filename=report.txt`, base64.StdEncoding.EncodeToString([]byte("all green\n"))} {
		if !strings.Contains(srv.data, want) {
			t.Errorf("the mail lacks %q:\n%s", want, srv.data)
		}
	}
}

// A server that will not upgrade gets no mail, unless startTls is off.
func TestEmailRefusesTheClear(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t, false)
	a, err := channels.New("mail", config.Channel{Type: "email", Server: srv.addr, From: "bot@example.com"}, channels.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Send(context.Background(), channels.Outgoing{Target: "ada@example.com", Text: "hi"})
	srv.mu.Lock()
	sent := srv.data
	srv.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "does not offer STARTTLS") || sent != "" {
		t.Errorf("sent %q, err %v; want a refusal", sent, err)
	}
	off := false
	a, _ = channels.New("mail", config.Channel{Type: "email", Server: srv.addr, From: "bot@example.com", StartTLS: &off}, channels.Options{})
	if _, err := a.Send(context.Background(), channels.Outgoing{Target: "ada@example.com", Text: "hi"}); err != nil {
		t.Errorf("with startTls false: %v", err)
	}
}
