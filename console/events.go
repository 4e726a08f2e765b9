package console

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/audit/auditlog"
)

// Pace of the live rows.
const (
	// auditPoll is how often the calls pages' follower reads the audit
	// records appended since it last looked: the calls of other processes
	// sharing the store reach the pages that way.
	auditPoll = 1500 * time.Millisecond
	// keepAlive is how often a quiet stream sends a comment, so a closed
	// page is noticed.
	keepAlive = 15 * time.Second
	// pollPage is how many records the poll reads at a time, and
	// pollPages how many pages at most each time it looks: the records
	// after those it leaves for the next poll.
	pollPage  = 500
	pollPages = 4
)

// callEvents streams the calls page's live rows as server-sent events:
// each event "row" is a row's HTML (the partial "call-row"), which
// assets/console.js puts in place of the row with its id, or at the top.
// The rows come from the pages' shared follower (live.go): the calls of
// this process from the feed as they start, progress, wait and finish; those
// of other processes sharing the store from the audit records appended
// since, read every auditPoll. The records appended between the page's
// newest (the query's after) and where the follower is are read first. The
// query string filters as the page's does.
func (c *Console) callEvents(w http.ResponseWriter, r *http.Request, _ visitor) {
	f := filterOf(r.URL.Query())
	s, upTo, err := c.live.join(r.Context(), f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer c.live.leave(s)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64); after > 0 && after < upTo {
		err = c.catchUp(w, r, f, after, upTo)
	}
	if err != nil || rc.Flush() != nil {
		return
	}
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case rows := <-s.rows:
			for _, row := range rows {
				if _, err = w.Write(row.event); err != nil {
					break
				}
			}
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}

// catchUp sends the rows of the calls f selects among the records after
// place after up to place upTo that the feed did not tell of.
func (c *Console) catchUp(w http.ResponseWriter, r *http.Request, f callFilter, after, upTo int64) error {
	logged, _, err := c.newCalls(r.Context(), f, after, upTo)
	if err != nil {
		c.log.Warn("console: reading the audit records a page missed", "err", err)
	}
	for _, row := range c.live.notFed(logged) {
		if err := c.sendRow(w, row); err != nil {
			return err
		}
	}
	return nil
}

// newestSeq is the place of the log's newest record, 0 when it has none.
func (c *Console) newestSeq(ctx context.Context) (int64, error) {
	records, err := c.opts.Audit.List(ctx, auditlog.Filter{Limit: 1})
	if err != nil || len(records) == 0 {
		return 0, err
	}
	return records[0].Seq, nil
}

// newCalls returns the calls f selects among the records after the one of
// place after (up to the one of place upTo, when upTo > 0), oldest first,
// and the place of the last record read. It
// reads pollPage records at a time, at most pollPages times: the place
// returned is after the last record read, so the records it left are
// read next time.
func (c *Console) newCalls(ctx context.Context, f callFilter, after, upTo int64) ([]CallRow, int64, error) {
	lf := auditlog.Filter{Tool: f.Tool, Session: f.Session, Limit: pollPage, Oldest: true}
	if upTo > 0 {
		lf.Before = upTo + 1
	}
	var rows []CallRow
	for range pollPages {
		lf.After = after
		records, err := c.opts.Audit.List(ctx, lf)
		if err != nil {
			return rows, after, err
		}
		if n := len(records); n > 0 {
			after = records[n-1].Seq
		}
		rows = append(rows, f.rows(records)...)
		if len(records) < pollPage {
			break
		}
	}
	c.withPreviews(rows)
	return rows, after, nil
}

// recent is a set of call ids that keeps the newest n added.
type recent struct {
	ids  map[string]bool
	ring []string // the ids added, the next to forget at next
	next int
}

func newRecent(n int) *recent { return &recent{ids: map[string]bool{}, ring: make([]string, n)} }

// add adds id, forgetting the oldest id added when the set is full.
func (s *recent) add(id string) {
	delete(s.ids, s.ring[s.next])
	s.ring[s.next] = id
	s.next = (s.next + 1) % len(s.ring)
	s.ids[id] = true
}

// sendRow writes a row as an event.
func (c *Console) sendRow(w http.ResponseWriter, row CallRow) error {
	ev, err := c.rowEvent(row)
	if err != nil {
		return err
	}
	_, err = w.Write(ev)
	return err
}

// rowEvent is a row's event.
func (c *Console) rowEvent(row CallRow) ([]byte, error) {
	var b bytes.Buffer
	if err := c.tmpl["calls.html"].ExecuteTemplate(&b, "call-row", row); err != nil {
		return nil, err
	}
	return event("row", b.String()), nil
}

// event is a server-sent event, each line of data on a data: line.
func event(name, data string) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for line := range strings.Lines(data) {
		b.WriteString("data: " + strings.TrimRight(line, "\r\n") + "\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}
