package console_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pageWith fetches a page until it holds want (the results are kept in
// the background), and returns it.
func pageWith(t *testing.T, c *http.Client, u, want string) string {
	t.Helper()
	var page string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var code int
		if code, page = get(t, c, u); code != http.StatusOK {
			t.Fatalf("GET %s: %d", u, code)
		}
		if strings.Contains(page, want) {
			return page
		}
	}
	t.Fatalf("GET %s never held %q:\n%s", u, want, page)
	return ""
}

// keptRow finds the calls list's row of call "kept".
var keptRow = regexp.MustCompile(`(?s)<tr id="call-kept".*?</tr>`)

// TestResultsOnTheCallsPages: a started console keeps the results of the
// server's calls: the calls list shows a one-line preview of a call's
// result (live, and when the page is loaded) and the call's page its
// whole result; the page of a call whose result it did not keep says so,
// and why, and links the call's session.
func TestResultsOnTheCallsPages(t *testing.T) {
	s := serve(t, false)
	if err := os.WriteFile(filepath.Join(s.ws, "notes.txt"), []byte("first line\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCall(t, s, "early", "read", `{"path":"notes.txt"}`) // before the console keeps results
	ctx := context.Background()
	if err := s.con.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.con.Stop(ctx) })
	rows := openStream(t, s, "")
	if msg := runCall(t, s, "kept", "read", `{"path":"notes.txt"}`); msg.IsError {
		t.Fatalf("the call failed: %+v", msg)
	}
	for r := range rows {
		if r.CallID == "kept" && !strings.Contains(r.HTML, "outcome-running") {
			if !strings.Contains(r.HTML, `<code class="preview">first line</code>`) {
				t.Errorf("the live row lacks the result's first line as its preview:\n%s", r.HTML)
			}
			break
		}
	}
	waitLogged(t, s.tb, "kept")
	c := client(t)
	list := pageWith(t, c, s.srv.URL+"/calls", `<code class="preview">first line</code>`)
	if row := keptRow.FindString(list); strings.Contains(row, "second line") {
		t.Errorf("the calls list's preview is more than a line:\n%s", row)
	}
	pageWith(t, c, s.srv.URL+"/calls/kept", "first line\nsecond line")
	early := pageWith(t, c, s.srv.URL+"/calls/early", `id="result-not-kept"`)
	for _, want := range []string{"most recent calls in memory", `<a href="/sessions/s-1">`} {
		if !strings.Contains(early, want) {
			t.Errorf("the page of a call whose result was not kept lacks %q", want)
		}
	}
}
