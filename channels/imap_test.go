package channels_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/channels/answer"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

const imapUser, imapPass = "bot@example.com", "mailbox-password"

// startIMAP starts an IMAP server on 127.0.0.1 with one mailbox
// (imapUser, INBOX) that offers STARTTLS with httptest's certificate and
// refuses a login in the clear; idle says whether it offers IDLE. It
// returns its address and its certificate.
func startIMAP(t *testing.T, idle bool) (string, *httptest.Server) {
	t.Helper()
	certs := httptest.NewUnstartedServer(http.NotFoundHandler())
	certs.StartTLS()
	t.Cleanup(certs.Close)
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(imapUser, imapPass)
	user.Create("INBOX", nil)
	mem.AddUser(user)
	caps := imap.CapSet{imap.CapIMAP4rev1: {}}
	if idle {
		caps[imap.CapIMAP4rev2] = struct{}{}
	}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		TLSConfig: certs.TLS,
		Caps:      caps,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), certs
}

// mailbox is a client of the test's IMAP server, as the sender's mail
// system and as a look into the mailbox.
func mailbox(t *testing.T, addr string, certs *httptest.Server) *imapclient.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(certs.Certificate())
	c, err := imapclient.DialStartTLS(addr, &imapclient.Options{TLSConfig: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(imapUser, imapPass).Wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

// deliverMail appends a raw mail to INBOX.
func deliverMail(t *testing.T, c *imapclient.Client, raw string) {
	t.Helper()
	raw = strings.ReplaceAll(raw, "\n", "\r\n")
	cmd := c.Append("INBOX", int64(len(raw)), nil)
	cmd.Write([]byte(raw))
	cmd.Close()
	if _, err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls until ok or a minute passed (a guard against hanging, not
// a timing assertion).
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// An email channel with an imapServer takes the unseen mail of its INBOX
// (over STARTTLS), the routed agent (a replayed model) answers, and the
// answer goes out by SMTP in the mail's thread; the mail is marked seen.
// A reply in the thread, arriving while the channel idles, continues the
// same session and is answered in the same thread. Without IDLE the
// channel polls.
func TestEmailReceivesByIMAPAndRepliesInThread(t *testing.T) {
	t.Parallel()
	for _, idle := range []bool{true, false} {
		t.Run(map[bool]string{true: "idle", false: "poll"}[idle], func(t *testing.T) {
			t.Parallel()
			addr, certs := startIMAP(t, idle)
			poll := 1 // seconds
			if idle {
				poll = 3600 // only IDLE can bring the second mail in time
			}
			smtp := startSMTP(t, true)
			roots := smtp.roots.Clone()
			roots.AddCert(certs.Certificate())
			sender := mailbox(t, addr, certs)
			deliverMail(t, sender, `From: Ada <ada@example.com>
To: Toolbelt <bot@example.com>
Subject: =?utf-8?q?Build_status?=
Message-ID: <q1@example.com>
Date: Mon, 30 Nov 2026 00:00:00 +0000
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Is the build green? It's =E2=9C=94 on my side.
`)
			model := llmtest.New(t,
				llmtest.Response{Body: llmtest.Anthropic("", "All green, Ada.")},
				llmtest.Response{Body: llmtest.Anthropic("", "Deployed at noon.")})
			hub, err := channels.NewHub(map[string]config.Channel{"mail": {Type: "email", Server: smtp.addr, From: "Toolbelt <bot@example.com>",
				Username: imapUser, PasswordEnv: "MAIL_PASSWORD", IMAPServer: addr, IMAPPollSeconds: poll, Owners: []string{"ada@example.com"}}},
				channels.Options{Getenv: func(string) string { return imapPass }, RootCAs: roots})
			if err != nil {
				t.Fatal(err)
			}
			sessions := &answer.Sessions{Agent: func(_ context.Context, turn channels.Turn) (*agent.Agent, func(), error) {
				c, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: model.URL, APIKey: "k"})
				if err != nil {
					return nil, nil, err
				}
				tc := &tool.Context{}
				tc.RunAs(turn.Identity())
				return &agent.Agent{Client: c, Runner: invoke.New(registry.New(), tc)}, nil, nil
			}}
			r := channels.NewRouter(hub, []config.Route{{Channel: "mail", Agent: "helper"}}, sessions, newRecords(), nil)
			if err := r.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer r.Stop(context.Background())

			waitFor(t, "the answer to the first mail", func() bool { return strings.Contains(smtp.last(), "All green, Ada.") })
			first := smtp.last()
			for _, want := range []string{"To: ada@example.com", "Subject: Re: Build status", "In-Reply-To: <q1@example.com>", "References: <q1@example.com>"} {
				if !strings.Contains(first, want) {
					t.Errorf("the answer lacks %q:\n%s", want, first)
				}
			}
			if body := string(model.Requests()[0].Body); !strings.Contains(body, "Subject: Build status") || !strings.Contains(body, "It's ✔ on my side.") {
				t.Errorf("the model was not given the mail's subject and text:\n%s", body)
			}
			if _, err := sender.Select("INBOX", nil).Wait(); err != nil {
				t.Fatal(err)
			}
			unseen, err := sender.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
			if err != nil || len(unseen.AllUIDs()) != 0 {
				t.Errorf("unseen mail after the answer: %v (%v)", unseen.AllUIDs(), err)
			}
			ours := headerOf(first, "Message-ID")
			deliverMail(t, sender, `From: ada@example.com
To: bot@example.com
Subject: Re: Build status
Message-ID: <q2@example.com>
In-Reply-To: `+ours+`
References: <q1@example.com> `+ours+`
Content-Type: text/plain

And when is the deploy?
`)
			waitFor(t, "the answer to the reply", func() bool { return strings.Contains(smtp.last(), "Deployed at noon.") })
			second := smtp.last()
			for _, want := range []string{"Subject: Re: Build status", "In-Reply-To: <q2@example.com>", "References: <q1@example.com> " + ours + " <q2@example.com>"} {
				if !strings.Contains(second, want) {
					t.Errorf("the second answer lacks %q:\n%s", want, second)
				}
			}
			if body := string(model.Requests()[1].Body); !strings.Contains(body, "All green, Ada.") {
				t.Errorf("the reply did not continue the thread's session:\n%s", body)
			}
		})
	}
}

// headerOf returns the value of the header name in a raw mail.
func headerOf(raw, name string) string {
	for _, line := range strings.Split(raw, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return v
		}
	}
	return ""
}

// last returns the last mail the SMTP server took.
func (s *smtpServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data
}
