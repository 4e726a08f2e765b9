package console_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/toolbelt/toolbelt/internal/chromium"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// updateScreenshots writes the screenshots of the pages the browser tests
// visit into docs/console/, for docs/console.md.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the console's screenshots into docs/console/")

// browserTimeout bounds one browser test.
const browserTimeout = 90 * time.Second

// browser starts a headless Chromium with a fresh profile and returns a
// tab's context; the test is skipped when Chromium is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := chromium.Path()
	if err != nil {
		t.Skip(err.Error() + "; .ci/run installs it: the console's browser tests drive it")
	}
	opts := chromium.Options(path, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return tab
}

// run runs browser actions, failing the test with what it was doing.
func run(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs an action that returns a value.
func value[T any](t *testing.T, tab context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(tab, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// text returns the text of the first element the CSS selector sel
// matches.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return value(t, tab, "reading "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// visible waits until the element the CSS selector sel matches is visible.
func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// clearCookies forgets the browser's cookies: the session ends.
func clearCookies() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.ClearBrowserCookies, cdp.Empty{})
		return err
	})
}

// screenshot writes the page as docs/console/NAME.png when the test runs
// with -update-screenshots.
func screenshot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	if !*updateScreenshots {
		return
	}
	png := value(t, tab, "taking a screenshot", chromedp.FullScreenshot(100))
	dir := filepath.Join("..", "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fetch POSTs a form from the page with the browser's cookies, as a
// forged form would, and returns the answer's status and text.
func fetch(t *testing.T, tab context.Context, path string, form map[string]string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(form)
	js := `fetch(` + jsString(path) + `, {method: "POST", body: new URLSearchParams(` + string(body) + `)}).then(async r => [r.status, await r.text()])`
	out := value(t, tab, "POST "+path, chromedp.Evaluate[[]any](js, chromedp.EvalAwaitPromise))
	return int(out[0].(float64)), out[1].(string)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// caller is who the tests' calls are made for.
var testCaller = tool.Identity{Channel: "test", SessionKey: "s-1", AgentID: "coder", Owner: true}

// runCall makes a call through a runner of the root.
func runCall(t *testing.T, s *served, id, name, args string) tool.ResultMessage {
	t.Helper()
	r, err := s.tb.Runner(testCaller)
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), tool.Call{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

// TestBrowserLogsInWithTheTokenAndTheOneTimeLink: in Chromium, a page
// sends a visitor to the login form, the token logs in; after logging out
// of it, the one-time link logs in, once.
func TestBrowserLogsInWithTheTokenAndTheOneTimeLink(t *testing.T) {
	s := serve(t, true)
	tab := browser(t)
	run(t, tab, "opening /calls", chromedp.Navigate(s.srv.URL+"/calls"), visible("#token"))
	screenshot(t, tab, "login")
	run(t, tab, "logging in with the token",
		chromedp.SendKeys(chromedp.CSS("#token"), ownerToken), chromedp.Submit(chromedp.CSS("#token")),
		visible("table#calls"))
	if who := text(t, tab, ".who"); !strings.Contains(who, "owner") {
		t.Errorf("logged in as %q", who)
	}
	run(t, tab, "logging out", chromedp.Click(chromedp.CSS(".who button")), visible("#token"))
	run(t, tab, "forgetting the cookies", clearCookies())

	link := s.con.LoginLink()
	run(t, tab, "opening the one-time link", chromedp.Navigate(link), visible("#recent-h"))
	if who := text(t, tab, ".who"); !strings.Contains(who, "owner") {
		t.Errorf("logged in by the link as %q", who)
	}
	run(t, tab, "forgetting the cookies", clearCookies())
	run(t, tab, "opening the link again", chromedp.Navigate(link), visible(".problem"))
	if p := text(t, tab, ".problem"); !strings.Contains(p, "used already") {
		t.Errorf("the link used twice: %q", p)
	}
}

// TestBrowserShowsACallLive: a call made while the calls page is open
// appears on it without a reload, with its tool, caller and decision; the
// page fits a phone's width.
func TestBrowserShowsACallLive(t *testing.T) {
	s := serve(t, false)
	if err := os.WriteFile(filepath.Join(s.ws, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCall(t, s, "before-1", "read", `{"path":"notes.txt"}`)
	tab := browser(t)
	run(t, tab, "opening /calls", chromedp.Navigate(s.srv.URL+"/calls"), visible("#call-before-1"),
		visible(`#live-status[data-live="on"]`))
	if msg := runCall(t, s, "live-1", "read", `{"path":"notes.txt"}`); msg.IsError {
		t.Fatalf("the call failed: %+v", msg)
	}
	run(t, tab, "waiting for the call's row", visible("#call-live-1"))
	row := text(t, tab, "#call-live-1")
	for _, want := range []string{"read", "notes.txt", "agent coder", "session s-1", "channel test", "ok"} {
		if !strings.Contains(row, want) {
			t.Errorf("the live row lacks %q: %q", want, row)
		}
	}
	if first := value(t, tab, "reading the first row", chromedp.AttributeValue(chromedp.CSS("#calls tbody tr"), "id")).Value; first != "call-live-1" {
		t.Errorf("the newest row is %s, want call-live-1 first", first)
	}
	screenshot(t, tab, "calls")
	run(t, tab, "opening the home page", chromedp.Navigate(s.srv.URL+"/"), visible("#call-live-1"))
	screenshot(t, tab, "home")

	run(t, tab, "filtering by tool", chromedp.Navigate(s.srv.URL+"/calls?tool=ls"), visible("#no-calls"))

	run(t, tab, "narrowing to a phone's width", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.srv.URL+"/calls"),
		visible("#call-live-1"))
	if value(t, tab, "measuring the page", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`)) {
		t.Error("at 390 px the calls page is wider than the screen")
	}
	screenshot(t, tab, "calls-phone")
}

// TestBrowserUndoesACall: a call's page shows the diff of the file it
// changed, and its Undo button puts the file back on disk.
func TestBrowserUndoesACall(t *testing.T) {
	s := serveWith(t, false, "") // edits run without asking
	file := filepath.Join(s.ws, "notes.txt")
	if err := os.WriteFile(file, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := runCall(t, s, "edit-1", "edit", `{"path":"notes.txt","edits":[{"oldText":"world","newText":"there"}]}`); msg.IsError {
		t.Fatalf("the edit failed: %+v", msg)
	}
	tab := browser(t)
	run(t, tab, "opening the call", chromedp.Navigate(s.srv.URL+"/calls/edit-1"), visible("pre.diff"))
	if d := text(t, tab, "pre.diff"); !strings.Contains(d, "-world") || !strings.Contains(d, "+there") {
		t.Errorf("the diff: %q", d)
	}
	screenshot(t, tab, "call")
	run(t, tab, "undoing", chromedp.Click(chromedp.CSS("form.undo button")), visible(".flash"))
	if f := text(t, tab, ".flash"); !strings.HasPrefix(f, "Undone") {
		t.Errorf("after undo: %q", f)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello\nworld\n" {
		t.Errorf("the file after undo: %q", b)
	}
	records, err := s.tb.AuditLog().List(context.Background(), auditFilterTool("undo"))
	if err != nil || len(records) != 1 || records[0].Channel != "console" || records[0].Principal != "owner" || records[0].IsError {
		t.Errorf("the undo's audit record: %+v %v", records, err)
	}
}

// TestBrowserVerifiesTheAudit: the audit page lists the records and its
// "Verify the chain" button says the chain is intact.
func TestBrowserVerifiesTheAudit(t *testing.T) {
	s := serve(t, false)
	runCall(t, s, "ls-1", "ls", `{}`)
	tab := browser(t)
	run(t, tab, "opening /audit", chromedp.Navigate(s.srv.URL+"/audit"), visible("form.verify button"),
		chromedp.Click(chromedp.CSS("form.verify button")), visible("#verified"))
	if v := text(t, tab, "#verified"); !strings.Contains(v, "1 records, chain intact") {
		t.Errorf("verifying: %q", v)
	}
	screenshot(t, tab, "audit")
}

// TestBrowserRefusesAPostWithoutCSRFToken: a POST the page did not make
// (no CSRF token), with the session's cookie, is refused with 403 and
// decides nothing.
func TestBrowserRefusesAPostWithoutCSRFToken(t *testing.T) {
	s := serve(t, false)
	addPending(t, s, "call-1")
	tab := browser(t)
	run(t, tab, "opening /approvals", chromedp.Navigate(s.srv.URL+"/approvals"), visible("#approval-call-1"))
	status, body := fetch(t, tab, "/approvals/call-1", map[string]string{"decision": "once"})
	if status != 403 || !strings.Contains(body, "no valid CSRF token") {
		t.Errorf("a POST without the token: %d %s", status, body)
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingWaiting {
		t.Errorf("the refused POST decided: %+v", p)
	}
}

// TestBrowserViewerCannotApprove: a viewer sees the waiting call with no
// button to decide it, and a forged POST with their session's own CSRF
// token is refused with 403.
func TestBrowserViewerCannotApprove(t *testing.T) {
	s := serve(t, true)
	addPending(t, s, "call-1")
	tab := browser(t)
	run(t, tab, "logging in as a viewer", chromedp.Navigate(s.srv.URL+"/login?next=/approvals"),
		chromedp.SendKeys(chromedp.CSS("#token"), viewerToken), chromedp.Submit(chromedp.CSS("#token")),
		visible("#approval-call-1"))
	if buttons := value(t, tab, "counting buttons", chromedp.Evaluate[int](`document.querySelectorAll("#approval-call-1 button").length`)); buttons != 0 {
		t.Errorf("the viewer sees %d buttons on the waiting call", buttons)
	}
	csrf := value(t, tab, "reading the CSRF token", chromedp.Value(chromedp.CSS(`input[name="csrf"]`)))
	status, body := fetch(t, tab, "/approvals/call-1", map[string]string{"decision": "once", "csrf": csrf})
	if status != 403 || !strings.Contains(body, "alice is a viewer") {
		t.Errorf("the viewer's POST: %d %s", status, body)
	}
	if p, _ := s.tb.Store().Pending().Get(context.Background(), "call-1"); p.State != store.PendingWaiting {
		t.Errorf("the viewer decided: %+v", p)
	}
}

// TestBrowserApprovesAndDeniesWaitingCalls: calls that need approval,
// made with nobody else to ask while the console is live, wait for it; an
// owner allows one from the page and it runs, and denies another with a
// reason, which the model-facing result carries. The queue records who
// decided.
func TestBrowserApprovesAndDeniesWaitingCalls(t *testing.T) {
	s := serve(t, false)
	ctx := context.Background()
	if err := s.con.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.con.Stop(ctx) })
	waitConsole(t, s)
	allowed, denied := waitingCall(t, s, "w-allow", `{"path":"a.txt","content":"allowed\n"}`), waitingCall(t, s, "w-deny", `{"path":"b.txt","content":"denied\n"}`)
	pa, pd := pendingFor(t, s, "w-allow"), pendingFor(t, s, "w-deny")

	tab := browser(t)
	run(t, tab, "opening /approvals", chromedp.Navigate(s.srv.URL+"/approvals"), visible("#approval-"+pa.ID), visible("#approval-"+pd.ID))
	for _, label := range []string{"Allow once", "Allow for this session", "Allow for this workspace (kept until revoked)"} {
		if !strings.Contains(text(t, tab, "#approval-"+pa.ID+" form"), label) {
			t.Errorf("no button %q", label)
		}
	}
	screenshot(t, tab, "approvals")
	run(t, tab, "allowing once", chromedp.Click(chromedp.CSS(`#approval-`+pa.ID+` button[value="once"]`)), visible(".flash"))
	if msg := <-allowed; msg.IsError {
		t.Errorf("the allowed call: %+v", msg)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "a.txt")); string(b) != "allowed\n" {
		t.Errorf("the allowed call's file: %q %v", b, err)
	}
	run(t, tab, "denying with a reason", chromedp.SendKeys(chromedp.CSS("#reason-"+pd.ID), "not on Fridays"),
		chromedp.Click(chromedp.CSS(`#approval-`+pd.ID+` button[value="deny"]`)), visible("#none-waiting"))
	msg := <-denied
	if !msg.IsError || !strings.Contains(msg.Content[0].Text, "not on Fridays") {
		t.Errorf("the denied call's result: %+v", msg)
	}
	if _, err := os.Stat(filepath.Join(s.ws, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied call wrote its file: %v", err)
	}
	if p, _ := s.tb.Store().Pending().Get(ctx, pd.ID); p.State != store.PendingDenied || p.DenyReason != "not on Fridays" || p.By != "owner" {
		t.Errorf("the denied approval: %+v", p)
	}
}

// waitConsole waits until the console's heartbeat is recorded.
func waitConsole(t *testing.T, s *served) {
	t.Helper()
	for {
		_, ok, err := s.tb.Store().Pending().Console(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitingCall makes a write, which policyYAML asks about, in a goroutine:
// it waits for the console's decision; its result arrives on the channel.
func waitingCall(t *testing.T, s *served, id, args string) <-chan tool.ResultMessage {
	t.Helper()
	r, err := s.tb.Runner(testCaller)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan tool.ResultMessage, 1)
	go func() {
		out <- r.Run(context.Background(), tool.Call{ID: id, Name: "write", Arguments: json.RawMessage(args)})
	}()
	return out
}

// pendingFor waits for the call's approval request to be in the queue.
func pendingFor(t *testing.T, s *served, callID string) store.PendingApproval {
	t.Helper()
	for {
		ps, err := s.tb.Store().Pending().List(context.Background(), store.PendingFilter{State: store.PendingWaiting})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.CallID == callID {
				return p
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
