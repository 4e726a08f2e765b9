package console_test

import (
	"fmt"
	"html"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
)

// olderLink finds the calls page's link to older calls.
var olderLink = regexp.MustCompile(`<a href="([^"]+)" id="older-calls">`)

// listedCalls follows the calls page from path through its "Older calls"
// links, and returns the ids of the calls listed, in order.
func listedCalls(t *testing.T, s *served, path string) []string {
	t.Helper()
	c := client(t)
	var ids []string
	for path != "" {
		code, page := get(t, c, s.srv.URL+path)
		if code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		for _, m := range rowID.FindAllStringSubmatch(page, -1) {
			ids = append(ids, m[1])
		}
		path = ""
		if m := olderLink.FindStringSubmatch(page); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	return ids
}

// TestCallsPageReachesEveryCall: in a log of 10,000 calls, the calls page
// and its "Older calls" links list every call once, newest first, and
// those of a filter (one the log cannot apply itself, so that the page
// scans) keep it.
func TestCallsPageReachesEveryCall(t *testing.T) {
	s := serve(t, false)
	const n = 10000
	var records []audit.Record
	var all, agentA []string
	for i := range n {
		r := audit.Record{Time: time.Now(), CallID: fmt.Sprint("c-", i), Tool: "read", AgentID: "b"}
		if i%7 == 0 {
			r.AgentID = "a"
			agentA = append(agentA, r.CallID)
		}
		records = append(records, r)
		all = append(all, r.CallID)
	}
	appendRecords(t, s.tb.AuditLog(), records...)
	slices.Reverse(all)
	slices.Reverse(agentA)
	if got := listedCalls(t, s, "/calls"); !slices.Equal(got, all) {
		t.Errorf("the calls pages listed %d calls, want all %d, newest first", len(got), n)
	}
	if got := listedCalls(t, s, "/calls?agent=a"); !slices.Equal(got, agentA) {
		t.Errorf("the calls pages of agent a listed %d calls (%v…), want its %d, newest first", len(got), got[:min(len(got), 3)], len(agentA))
	}
}
