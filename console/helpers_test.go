package console_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/console"
)

// Tokens of the consoles the tests serve.
const (
	ownerToken  = "owner-secret-token"
	viewerToken = "viewer-secret-token"
)

// policyYAML asks before every write, so that calls wait for approval.
const policyYAML = `
tools:
  ask:
    - tool: write
`

// served is a console served over HTTP on 127.0.0.1 for a root opened on
// a new workspace and SQLite data directory.
type served struct {
	tb  *toolbelt.Toolbelt
	con *console.Console
	srv *httptest.Server
	ws  string
}

// serve opens a root with policyYAML and serves its console; with tokens,
// the owner's token and a viewer principal's ("alice"); without, loopback
// is the owner's.
func serve(t testing.TB, tokens bool) *served { return serveWith(t, tokens, policyYAML) }

// serveWith is serve with another configuration.
func serveWith(t testing.TB, tokens bool, yaml string) *served {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	s := &served{tb: tb, ws: ws}
	var o console.Options
	if tokens {
		o.Token, o.Tokens = ownerToken, []console.Token{{Token: viewerToken, Principal: "alice"}}
	}
	s.srv = httptest.NewUnstartedServer(nil)
	o.URL = "http://" + s.srv.Listener.Addr().String()
	if s.con, err = tb.Console(o); err != nil {
		t.Fatal(err)
	}
	s.srv.Config.Handler = s.con.Handler()
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// client returns an HTTP client with a cookie jar that does not follow
// redirects.
func client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// auditFilterTool selects the audit records of a tool.
func auditFilterTool(name string) auditlog.Filter { return auditlog.Filter{Tool: name} }
