package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserShowsTheOtherPages: in Chromium, the Numbers page draws its
// charts, a session's tool call unfolds, the owner cancels a job from the
// Jobs page, a tool's page explains the policy for the caller of its form,
// and the schedules and configuration pages show; each is screenshotted.
func TestBrowserShowsTheOtherPages(t *testing.T) {
	s, schedID, taskID := pagesServed(t, false)
	tab := browser(t)
	run(t, tab, "opening /numbers", chromedp.Navigate(s.srv.URL+"/numbers"), visible("svg.chart rect"))
	if denials, jobs := text(t, tab, ".figures div:nth-child(2) dd"), text(t, tab, ".figures div:nth-child(4) dd"); denials != "1" || jobs != "1" {
		t.Errorf("denials %q, jobs in flight %q; want 1 and 1", denials, jobs)
	}
	screenshot(t, tab, "numbers")

	run(t, tab, "unfolding a tool call", chromedp.Navigate(s.srv.URL+"/sessions/agent:main:main"), visible("details.call summary"),
		chromedp.Click(chromedp.CSS("details.call summary")), visible("details.call[open] pre"))
	if args := text(t, tab, "details.call[open] pre"); args != `{"path":"notes.txt"}` {
		t.Errorf("the unfolded call's arguments: %q", args)
	}
	screenshot(t, tab, "session")

	run(t, tab, "cancelling the job", chromedp.Navigate(s.srv.URL+"/jobs"), visible("#job-"+taskID+" button.danger"),
		chromedp.Click(chromedp.CSS("#job-"+taskID+" button.danger")), visible(".flash"))
	if flash, status := text(t, tab, ".flash"), text(t, tab, "#job-"+taskID+" .status"); !strings.Contains(flash, "Cancelled job "+taskID) || status != "cancelled" {
		t.Errorf("after cancelling: %q, status %q", flash, status)
	}
	screenshot(t, tab, "jobs")

	run(t, tab, "explaining the policy", chromedp.Navigate(s.srv.URL+"/tools/read"), visible("#p-agent"),
		chromedp.SendKeys(chromedp.CSS("#p-agent"), "reader"), chromedp.Submit(chromedp.CSS("#p-agent")),
		// The page before the submit shows verdicts too: wait for the one
		// the form's answer drew, whose agent field holds reader.
		visible(`#p-agent[value="reader"]`), visible("#verdicts"))
	if final := text(t, tab, "#final"); !strings.Contains(final, "Final: deny") || !strings.Contains(final, "agent reader") {
		t.Errorf("the verdict for agent reader: %q", final)
	}
	screenshot(t, tab, "tool")

	for _, p := range []struct{ path, sel, name string }{
		{"/sessions", "table", "sessions"},
		{"/schedules/" + schedID, "table", "schedule"},
		{"/config", "table", "config"},
	} {
		run(t, tab, "opening "+p.path, chromedp.Navigate(s.srv.URL+p.path), visible(p.sel))
		screenshot(t, tab, p.name)
	}
}
