package console_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// get fetches a page and returns its status and body.
func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// post posts a form and returns the status and body.
func post(t *testing.T, c *http.Client, u string, form url.Values) (int, string) {
	t.Helper()
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// csrfOf returns the CSRF token a page's forms carry.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

// logIn logs c in with a token through the form.
func logIn(t *testing.T, s *served, c *http.Client, token string) {
	t.Helper()
	if code, body := post(t, c, s.srv.URL+"/login", url.Values{"token": {token}, "next": {"/calls"}}); code != http.StatusSeeOther {
		t.Fatalf("logging in: %d\n%s", code, body)
	}
}

// addPending puts a call waiting for approval in the store's queue.
func addPending(t *testing.T, s *served, id string) {
	t.Helper()
	p := store.PendingApproval{ID: id, CallID: id, Workspace: s.ws, Tool: "write", Args: []byte(`{"path":"a.txt"}`),
		Reason: "an ask rule", Always: "this exact action, in this workspace", Expires: time.Now().Add(time.Hour),
		Caller: testCaller, Effects: "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n"}
	if err := s.tb.Store().Pending().Add(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// TestLoginTakesATokenOrAOneTimeLink: without logging in a page sends the
// browser to the login form; a wrong token is refused; the right one sets
// an HttpOnly, SameSite=Strict session cookie; a one-time link logs in
// once.
func TestLoginTakesATokenOrAOneTimeLink(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	c := client(t)
	res, err := c.Get(s.srv.URL + "/calls")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("GET /calls without a session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if code, _ := post(t, c, s.srv.URL+"/login", url.Values{"token": {"wrong"}}); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", code)
	}
	res, err = c.PostForm(s.srv.URL+"/login", url.Values{"token": {ownerToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	ck := res.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Secure {
		t.Fatalf("session cookie: %+v", ck)
	}
	if code, body := get(t, c, s.srv.URL+"/calls"); code != http.StatusOK || !strings.Contains(body, "owner") {
		t.Errorf("GET /calls logged in: %d\n%s", code, body)
	}

	link := s.con.LoginLink()
	once := client(t)
	res, err = once.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("the one-time link: %d %v", res.StatusCode, res.Cookies())
	}
	if code, _ := get(t, once, s.srv.URL+"/approvals"); code != http.StatusOK {
		t.Errorf("after the one-time link: %d", code)
	}
	if code, body := get(t, client(t), link); code != http.StatusForbidden || !strings.Contains(body, "used already") {
		t.Errorf("the link used twice: %d\n%s", code, body)
	}
}

// TestBearerHeaderNeedsNoSession: a request with the token in an
// Authorization header is let in, and needs no CSRF token (a browser
// never sends the header on its own).
func TestBearerHeaderNeedsNoSession(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	addPending(t, s, "call-1")
	req, _ := http.NewRequest("POST", s.srv.URL+"/approvals/call-1", strings.NewReader("decision=deny&reason=not+now"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	res, err := client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("deciding with the bearer header: %d", res.StatusCode)
	}
	p, err := s.tb.Store().Pending().Get(context.Background(), "call-1")
	if err != nil || p.State != store.PendingDenied || p.By != "owner" || p.DenyReason != "not now" {
		t.Errorf("the decision: %+v %v", p, err)
	}
}

// TestPostWithoutCSRFTokenIsRefused: a logged-in owner's POST without the
// session's CSRF token, or with another, is refused with 403 and a
// message, and decides nothing; with it, the decision is recorded.
func TestPostWithoutCSRFTokenIsRefused(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	addPending(t, s, "call-1")
	c := client(t)
	logIn(t, s, c, ownerToken)
	for _, form := range []url.Values{{"decision": {"once"}}, {"decision": {"once"}, "csrf": {"forged"}}} {
		code, body := post(t, c, s.srv.URL+"/approvals/call-1", form)
		if code != http.StatusForbidden || !strings.Contains(body, "CSRF token") {
			t.Errorf("POST %v: %d %s", form, code, body)
		}
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingWaiting {
		t.Fatalf("a refused POST decided: %+v", p)
	}
	_, page := get(t, c, s.srv.URL+"/approvals")
	if code, _ := post(t, c, s.srv.URL+"/approvals/call-1", url.Values{"decision": {"once"}, "csrf": {csrfOf(t, page)}}); code != http.StatusSeeOther {
		t.Errorf("POST with the token: %d", code)
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingAllowed || p.Grant != store.GrantOnce {
		t.Errorf("after the decision: %+v", p)
	}
}

// TestViewerSeesButCannotDecide: a principal that is not an owner sees
// the waiting call without the buttons, and a forged POST (with their own
// valid CSRF token) is refused with 403.
func TestViewerSeesButCannotDecide(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	addPending(t, s, "call-1")
	c := client(t)
	logIn(t, s, c, viewerToken)
	code, page := get(t, c, s.srv.URL+"/approvals")
	if code != http.StatusOK || !strings.Contains(page, "write") || strings.Contains(page, "Allow once") || !strings.Contains(page, "viewer") {
		t.Fatalf("the viewer's approvals page: %d\n%s", code, page)
	}
	code, body := post(t, c, s.srv.URL+"/approvals/call-1", url.Values{"decision": {"once"}, "csrf": {csrfOf(t, page)}})
	if code != http.StatusForbidden || !strings.Contains(body, "alice is a viewer") {
		t.Errorf("the viewer's POST: %d %s", code, body)
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingWaiting {
		t.Errorf("the viewer decided: %+v", p)
	}
}

// TestLoopbackWithoutTokenIsTheOwner: with no token, a request from this
// machine is the owner's at once, with a session whose CSRF token its
// forms carry.
func TestLoopbackWithoutTokenIsTheOwner(t *testing.T) {
	t.Parallel()
	s := serve(t, false)
	addPending(t, s, "call-1")
	c := client(t)
	code, page := get(t, c, s.srv.URL+"/approvals")
	if code != http.StatusOK || !strings.Contains(page, "Allow once") {
		t.Fatalf("GET /approvals on loopback without a token: %d\n%s", code, page)
	}
	if code, _ := post(t, c, s.srv.URL+"/approvals/call-1", url.Values{"decision": {"once"}}); code != http.StatusForbidden {
		t.Errorf("POST without the CSRF token: %d", code)
	}
	if code, _ := post(t, c, s.srv.URL+"/approvals/call-1", url.Values{"decision": {"session"}, "csrf": {csrfOf(t, page)}}); code != http.StatusSeeOther {
		t.Errorf("POST with it: %d", code)
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingAllowed || p.Grant != store.GrantSession {
		t.Errorf("after the decision: %+v", p)
	}
}

// TestHeartbeatAnnouncesTheConsole: a started console tells the store it
// is served at its URL, so that waiting calls know someone can decide;
// Stop ends the heartbeat.
func TestHeartbeatAnnouncesTheConsole(t *testing.T) {
	t.Parallel()
	s := serve(t, false)
	ctx := context.Background()
	if _, ok, _ := s.tb.Store().Pending().Console(ctx); ok {
		t.Fatal("a console is live before Start")
	}
	if err := s.con.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		url, ok, err := s.tb.Store().Pending().Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if url != s.srv.URL {
				t.Errorf("the heartbeat names %s, want %s", url, s.srv.URL)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.con.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
