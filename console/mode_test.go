package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/policy"
)

// TestModeSwitch: every page's header shows the permission mode; the Mode
// page lists the modes and lets an owner switch, the switch recorded in
// the audit log with the console user; a viewer's POST, a POST without
// the CSRF token and an unknown mode switch nothing.
func TestModeSwitch(t *testing.T) {
	t.Parallel()
	s := serve(t, true)
	owner, viewer := client(t), client(t)
	logIn(t, s, owner, ownerToken)
	logIn(t, s, viewer, viewerToken)

	code, page := get(t, owner, s.srv.URL+"/")
	if code != http.StatusOK || !strings.Contains(page, `class="badge mode-default">mode: default</a>`) {
		t.Fatalf("the home page's header does not show the mode: %d\n%s", code, page)
	}
	_, page = get(t, owner, s.srv.URL+"/mode")
	for _, want := range []string{`<strong class="mode-default">default</strong> mode`, `value="plan"`, "read-only: tools that change anything are refused while the model plans", `value="default" checked`} {
		if !strings.Contains(page, want) {
			t.Errorf("the owner's Mode page lacks %q:\n%s", want, page)
		}
	}
	token := csrfOf(t, page)

	_, vpage := get(t, viewer, s.srv.URL+"/mode")
	if strings.Contains(vpage, `value="plan"`) || !strings.Contains(vpage, "an owner switches the mode") {
		t.Errorf("the viewer's Mode page offers the switch:\n%s", vpage)
	}
	refused := []struct {
		name string
		c    *http.Client
		form url.Values
		want string
	}{
		{"a viewer", viewer, url.Values{"mode": {"plan"}, "csrf": {csrfOf(t, vpage)}}, "alice is a viewer"},
		{"no CSRF token", owner, url.Values{"mode": {"plan"}}, "CSRF token"},
		{"a forged CSRF token", owner, url.Values{"mode": {"plan"}, "csrf": {"forged"}}, "CSRF token"},
	}
	for _, r := range refused {
		if code, body := post(t, r.c, s.srv.URL+"/mode", r.form); code != http.StatusForbidden || !strings.Contains(body, r.want) {
			t.Errorf("%s: %d %s", r.name, code, body)
		}
	}
	if _, page := get(t, owner, s.srv.URL+switchMode(t, s, owner, "plna", token)); !strings.Contains(page, `Nothing was switched: &#34;plna&#34; is not a permission mode`) || !strings.Contains(page, "did you mean &#34;plan&#34;?") {
		t.Errorf("an unknown mode's page:\n%s", page)
	}
	if m := s.tb.Mode(""); m != policy.ModeDefault {
		t.Fatalf("a refused switch switched the mode to %s", m)
	}

	_, page = get(t, owner, s.srv.URL+switchMode(t, s, owner, "plan", token))
	if m := s.tb.Mode(""); m != policy.ModePlan {
		t.Fatalf("after the owner's switch the mode is %s", m)
	}
	for _, want := range []string{"Switched to plan: read-only", `class="badge mode-plan">mode: plan</a>`, `value="plan" checked`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page after the switch lacks %q:\n%s", want, page)
		}
	}
	rec := modeChange(t, s.tb.AuditLog())
	if rec.Mode != "plan" || rec.Note != "console user owner (owner) switched the permission mode from default to plan" {
		t.Errorf("the switch's audit record: mode %q, note %q", rec.Mode, rec.Note)
	}
}

// switchMode posts the Mode page's form for mode as c, and returns where
// the answer sends the browser.
func switchMode(t *testing.T, s *served, c *http.Client, mode, csrf string) string {
	t.Helper()
	res, err := c.PostForm(s.srv.URL+"/mode", url.Values{"mode": {mode}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("switching to %s: %d", mode, res.StatusCode)
	}
	return res.Header.Get("Location")
}

// modeChange waits for the one record of a mode switch in the audit log
// (the root's spool moves records into it in the background), and
// returns it.
func modeChange(t *testing.T, log *auditlog.Log) audit.Record {
	t.Helper()
	var changes []audit.Record
	for deadline := time.Now().Add(10 * time.Second); len(changes) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		records, err := log.List(context.Background(), auditlog.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		changes = changes[:0]
		for _, r := range records {
			if r.Kind == audit.KindModeChanged {
				changes = append(changes, r)
			}
		}
	}
	if len(changes) != 1 {
		t.Fatalf("the audit log holds %d mode switches, want 1: %+v", len(changes), changes)
	}
	return changes[0]
}

// TestBrowserSwitchesMode: in Chromium, the owner picks plan on the Mode
// page and submits; the page says so and the header shows the new mode.
func TestBrowserSwitchesMode(t *testing.T) {
	s := serve(t, false)
	tab := browser(t)
	run(t, tab, "switching to plan", chromedp.Navigate(s.srv.URL+"/mode"), visible("#mode-plan"),
		chromedp.Click(chromedp.CSS("#mode-plan")), chromedp.Click(chromedp.CSS("form[action='/mode'] button")), visible(".flash"))
	if flash, badge := text(t, tab, ".flash"), text(t, tab, "#mode-badge"); !strings.Contains(flash, "Switched to plan") || badge != "mode: plan" {
		t.Errorf("after switching: flash %q, header %q", flash, badge)
	}
	if m := s.tb.Mode(""); m != policy.ModePlan {
		t.Errorf("the mode is %s", m)
	}
	screenshot(t, tab, "mode")
}
