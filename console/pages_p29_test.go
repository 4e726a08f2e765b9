package console_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
)

// pagesServed serves the console of a root with data on every page: calls
// (one denied), a job in flight, sessions with a transcript and
// sub-agents, and a schedule that has run once; with tokens as serve
// has them.
func pagesServed(t *testing.T, tokens bool) (*served, string, string) {
	t.Helper()
	s := serveRoot(t, openRoot(t, pageYAML, waitingTool()), tokens)
	ctx := context.Background()
	runCall(t, s, "c-exec", "exec", `{"command":"ls"}`)
	if res := runCall(t, s, "c-job", "render_video", `{"title":"intro"}`); res.IsError {
		t.Fatalf("the async call failed: %s", res.Content[0].Text)
	}
	waitLogged(t, s.tb, "c-job")
	keepSessions(t, s.tb.Store().Sessions())
	sched, err := s.tb.Scheduler().Add(ctx, tool.Schedule{Name: "nightly notes", Kind: tool.ScheduleEvery, Every: "1h", Enabled: true,
		Payload: tool.SchedulePayload{Tool: "read", Arguments: json.RawMessage(`{"path":"missing.txt"}`)}, Owner: tool.Identity{Channel: "cli", Owner: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.tb.Scheduler().RunNow(ctx, sched.ID); err != nil {
		t.Fatal(err)
	}
	list, err := s.tb.Jobs().List(ctx, jobs.Filter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("jobs: %v, %v", list, err)
	}
	return s, sched.ID, list[0].TaskID
}

// TestOtherPagesShowRealData: a viewer sees each page with what the root
// holds, read-only.
func TestOtherPagesShowRealData(t *testing.T) {
	t.Parallel()
	s, schedID, taskID := pagesServed(t, true)
	c := client(t)
	logIn(t, s, c, viewerToken)
	for _, p := range []struct {
		path string
		want []string
	}{
		{"/numbers", []string{`<svg class="chart bars" role="img"`, "<title id=\"chart-calls-per-minute-t\">Calls per minute</title>", `<a href="/tools/exec">exec</a>`, "<dt>Denials</dt><dd>1</dd>", `<dt>Jobs in flight</dt><dd><a href="/jobs?status=processing">1</a>`}},
		{"/sessions", []string{`<a href="/sessions/agent:main:main">agent:main:main</a>`, `<a href="/sessions/sub:a">sub:a</a> <span class="note">(research)</span>`, "10 / 5"}},
		{"/sessions/agent:main:main", []string{`<a href="/sessions/sub:a:1">sub:a:1</a> (fetch)`, "<details class=\"call\">", "<code>web_fetch</code>", `&#34;apiKey&#34;:&#34;[redacted]&#34;`, "buy milk", "It says: buy milk."}},
		{"/jobs", []string{"<code>" + taskID + "</code>", "render_video", `<progress max="100" value="0"`}},
		{"/schedules", []string{`<a href="/schedules/` + schedID + `">nightly notes</a>`, "every 1h", "<code>read</code>"}},
		{"/schedules/" + schedID, []string{"Runs", "manual", `<span class="status status-error">error</span>`}},
		{"/tools", []string{`<a href="/tools/render_video">render_video</a>`, `<a href="/tools/read">read</a>`}},
		{"/tools/render_video", []string{`id="schema-anthropic"`, "&#34;input_schema&#34;: {", `id="schema-gemini"`, "The video&#39;s title.", "Final: <strong class=\"decision-allow\">allow</strong>"}},
		{"/tools/read?agent=reader&channel=telegram&principal=bob", []string{`value="reader"`, "<td>agent reader</td><td>deny</td><td>deny read</td>", `Final: <strong class="decision-deny">deny</strong>`}},
		{"/tools/exec", []string{"<td>global</td><td>deny</td>", `decision-deny`}},
		{"/config", []string{"<code>limits.timeout</code>", "<td>default</td>", "<code>agents.reader.tools.deny</code>", "toolbelt.yaml:9", "ok: no problems found"}},
	} {
		code, page := get(t, c, s.srv.URL+p.path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", p.path, code, page)
			continue
		}
		for _, w := range p.want {
			if !strings.Contains(page, w) {
				t.Errorf("GET %s lacks %s:\n%s", p.path, w, page)
			}
		}
		if strings.Contains(page, ">Cancel</button>") || strings.Contains(page, ">Retry</button>") {
			t.Errorf("GET %s shows a viewer buttons", p.path)
		}
	}
	for _, path := range []string{"/sessions/nobody", "/schedules/nothing", "/tools/no_such_tool"} {
		if code, page := get(t, c, s.srv.URL+path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404\n%s", path, code, page)
		}
	}
}

// TestJobsCancelAndRetryAreTheOwners: the owner cancels a job in flight
// and retries it from the Jobs page; a viewer's POST, and one without the
// CSRF token, are refused and change nothing.
func TestJobsCancelAndRetryAreTheOwners(t *testing.T) {
	t.Parallel()
	s, _, taskID := pagesServed(t, true)
	status := func() string {
		t.Helper()
		j, err := s.tb.Jobs().Get(context.Background(), taskID)
		if err != nil {
			t.Fatal(err)
		}
		return j.Status
	}
	viewer := client(t)
	logIn(t, s, viewer, viewerToken)
	_, page := get(t, viewer, s.srv.URL+"/jobs")
	if code, _ := post(t, viewer, s.srv.URL+"/jobs/"+taskID+"/cancel", url.Values{"csrf": {csrfOf(t, page)}}); code != http.StatusForbidden {
		t.Errorf("the viewer's cancel: %d, want 403", code)
	}
	owner := client(t)
	logIn(t, s, owner, ownerToken)
	if code, _ := post(t, owner, s.srv.URL+"/jobs/"+taskID+"/cancel", url.Values{}); code != http.StatusForbidden {
		t.Errorf("a cancel without the CSRF token: %d, want 403", code)
	}
	if st := status(); st != jobs.StatusPending {
		t.Fatalf("after refused POSTs the job is %s", st)
	}
	_, page = get(t, owner, s.srv.URL+"/jobs")
	if !strings.Contains(page, `action="/jobs/`+taskID+`/cancel"`) || strings.Contains(page, `/retry"`) {
		t.Fatalf("the owner's Jobs page offers no cancel, or a retry, for a pending job:\n%s", page)
	}
	csrf := csrfOf(t, page)
	for _, step := range []struct{ action, flash, want string }{
		{"cancel", "Cancelled job " + taskID, jobs.StatusCancelled},
		{"cancel", "has already finished", jobs.StatusCancelled},
		{"retry", "Retrying job " + taskID, jobs.StatusPending},
	} {
		res, err := owner.PostForm(s.srv.URL+"/jobs/"+taskID+"/"+step.action, url.Values{"csrf": {csrf}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		to, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(to.Query().Get("flash"), step.flash) {
			t.Errorf("%s: %d, to %s; want a redirect saying %q", step.action, res.StatusCode, res.Header.Get("Location"), step.flash)
		}
		if st := status(); st != step.want {
			t.Errorf("after %s the job is %s, want %s", step.action, st, step.want)
		}
	}
	_, page = get(t, owner, s.srv.URL+"/jobs?flash=x")
	if !strings.Contains(html.UnescapeString(page), "pending") {
		t.Errorf("the Jobs page after the retry:\n%s", page)
	}
}

// TestToolPagesOfAStateOnlyRoot: a root that keeps state only has no
// tools; its console's Tools, tool and Configuration pages say so.
func TestToolPagesOfAStateOnlyRoot(t *testing.T) {
	t.Parallel()
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{DataDir: t.TempDir(), StateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	s := serveRoot(t, tb, false)
	c := client(t)
	for _, path := range []string{"/tools", "/tools/read", "/config"} {
		if code, page := get(t, c, s.srv.URL+path); code != http.StatusInternalServerError || !strings.Contains(page, "opened no tools") {
			t.Errorf("GET %s: %d\n%s", path, code, page)
		}
	}
}
