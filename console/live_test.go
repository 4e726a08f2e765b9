package console_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
)

// liveRow is a row a calls page's stream sent.
type liveRow struct {
	CallID string
	HTML   string
}

// rowID finds the call id of a row's HTML.
var rowID = regexp.MustCompile(`<tr id="call-([^"]+)"`)

// openStream connects to the calls page's live rows with the query q, and
// returns the rows as they come; the channel closes when the stream ends
// (at the test's end).
func openStream(t *testing.T, s *served, q string) <-chan liveRow {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", s.srv.URL+"/calls/events?"+q, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /calls/events?%s: %s", q, res.Status)
	}
	rows := make(chan liveRow)
	go func() {
		defer close(rows)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, d)
				continue
			}
			if line != "" || len(data) == 0 {
				continue
			}
			html := strings.Join(data, "\n")
			data = nil
			if m := rowID.FindStringSubmatch(html); m != nil {
				select {
				case rows <- liveRow{m[1], html}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return rows
}

// waitRow reads rows until one of call id that is not running, and
// returns the ids of the rows read before it.
func waitRow(t *testing.T, rows <-chan liveRow, id string) []string {
	t.Helper()
	var before []string
	for r := range rows {
		if r.CallID == id && !strings.Contains(r.HTML, "outcome-running") {
			return before
		}
		before = append(before, r.CallID)
	}
	t.Fatalf("the stream ended before call %s's row", id)
	return nil
}

// TestLiveRowsFollowEachPagesFilter: with two calls pages open, filtered
// by different tools, each page's stream gets the rows of its tool's calls
// and not the other's.
func TestLiveRowsFollowEachPagesFilter(t *testing.T) {
	s := serve(t, false)
	lsRows, findRows := openStream(t, s, "tool=ls"), openStream(t, s, "tool=find")
	for _, c := range [][3]string{{"ls-1", "ls", `{}`}, {"find-1", "find", `{"pattern":"*"}`}, {"ls-2", "ls", `{}`}} {
		if msg := runCall(t, s, c[0], c[1], c[2]); msg.IsError {
			t.Fatalf("%s: %+v", c[0], msg)
		}
	}
	for _, id := range waitRow(t, lsRows, "ls-2") {
		if id != "ls-1" && id != "ls-2" {
			t.Errorf("the ls page got a row of %s", id)
		}
	}
	for _, id := range waitRow(t, findRows, "find-1") {
		if id != "find-1" {
			t.Errorf("the find page got a row of %s", id)
		}
	}
}

// TestLivePollSendsEveryRecordAppended: the calls of other processes,
// appended to the log faster than a poll reads them (more than pollPage ×
// pollPages between two polls), all reach an open calls page's stream,
// once each and in order.
func TestLivePollSendsEveryRecordAppended(t *testing.T) {
	s := serve(t, false)
	rows := openStream(t, s, "")
	const n = 2100
	var records []audit.Record
	var want []string
	for i := range n {
		id := fmt.Sprint("other-", i)
		records = append(records, audit.Record{Time: time.Now(), CallID: id, Tool: "read"})
		want = append(want, id)
	}
	appendRecords(t, s.tb.AuditLog(), append(records, audit.Record{Time: time.Now(), CallID: "last", Tool: "read"})...)
	if got := waitRow(t, rows, "last"); !slices.Equal(got, want) {
		t.Errorf("the stream sent %d rows before the last call's (first %v), want the %d calls appended before it, in order",
			len(got), got[:min(len(got), 3)], n)
	}
}

// TestLiveStreamCatchesUp: the calls logged between a page's load (its
// after) and the start of its stream reach the stream first.
func TestLiveStreamCatchesUp(t *testing.T) {
	s := serve(t, false)
	log := s.tb.AuditLog()
	appendRecords(t, log, audit.Record{Time: time.Now(), CallID: "listed", Tool: "read"})
	newest, err := log.List(context.Background(), auditlog.Filter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, log, audit.Record{Time: time.Now(), CallID: "missed-1", Tool: "read"},
		audit.Record{Time: time.Now(), CallID: "missed-2", Tool: "read"})
	rows := openStream(t, s, fmt.Sprint("after=", newest[0].Seq))
	appendRecords(t, log, audit.Record{Time: time.Now(), CallID: "last", Tool: "read"})
	if got, want := waitRow(t, rows, "last"), []string{"missed-1", "missed-2"}; !slices.Equal(got, want) {
		t.Errorf("the stream sent %v before the last call, want %v", got, want)
	}
}
