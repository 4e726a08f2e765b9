package console

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/feed"
)

// Pace of the live rows.
const (
	// auditPoll is how often a connected page's stream reads the audit
	// records appended since it last looked: the calls of other processes
	// sharing the store reach it that way.
	auditPoll = 1500 * time.Millisecond
	// keepAlive is how often a quiet stream sends a comment, so a closed
	// page is noticed.
	keepAlive = 15 * time.Second
)

// callEvents streams the calls page's live rows as server-sent events:
// each event "row" is a row's HTML (the partial "call-row"), which
// assets/console.js puts in place of the row with its id, or at the top.
// The calls of this process come from the feed as they start, progress,
// wait and finish; those of other processes sharing the store from the
// audit records appended since the page's newest (the query's after),
// read every auditPoll. The query string filters as the page's does.
func (c *Console) callEvents(w http.ResponseWriter, r *http.Request, _ visitor) {
	f := filterOf(r.URL.Query())
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	var events <-chan feed.Event
	if c.opts.Feed != nil {
		sub := c.opts.Feed.Subscribe(0)
		defer sub.Close()
		events = sub.Events()
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	poll, ping, batch := time.NewTicker(auditPoll), time.NewTicker(keepAlive), time.NewTicker(sendEvery)
	defer poll.Stop()
	defer ping.Stop()
	defer batch.Stop()
	running := map[string]CallRow{} // the feed's calls not finished yet
	shown := map[string]bool{}      // the feed's finished calls sent, not yet met in the log
	var pending rowBatch            // rows to send
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case e := <-events:
			if row, ok := follow(running, e); ok && f.match(row) {
				pending.add(row)
			}
		case <-poll.C:
			logged, last, err := c.calls(r, f, after)
			if err != nil && r.Context().Err() == nil {
				c.log.Warn("console: reading new audit records", "err", err)
			}
			after = last
			for _, row := range logged {
				if shown[row.CallID] { // sent as the feed told
					delete(shown, row.CallID)
					continue
				}
				pending.add(row)
			}
		case <-batch.C:
			rows := pending.take()
			for _, row := range rows {
				if row.Seq == 0 && !row.Running {
					shown[row.CallID] = true
				}
				if err := c.sendRow(w, row); err != nil {
					return
				}
			}
			if len(rows) > 0 && rc.Flush() != nil {
				return
			}
		}
	}
}

// How the rows that changed are sent: every sendEvery, each call's latest
// row once, and at most batchRows of them (the newest) — 200 rows a
// second is more than a person reads; the page, reloaded, and the audit
// log show every call. Rendering rows for every call of a busy server
// would slow its calls down.
const (
	sendEvery = 100 * time.Millisecond
	batchRows = 20
)

// rowBatch are the rows to send next: each call's latest, in the order the
// calls were first met, at most batchRows (the newest).
type rowBatch struct {
	order  []string
	latest map[string]CallRow
}

func (b *rowBatch) add(row CallRow) {
	if b.latest == nil {
		b.latest = map[string]CallRow{}
	}
	if _, ok := b.latest[row.CallID]; !ok {
		b.order = append(b.order, row.CallID)
	}
	b.latest[row.CallID] = row
}

// take returns the rows and empties the batch.
func (b *rowBatch) take() []CallRow {
	order := b.order
	if len(order) > batchRows {
		order = order[len(order)-batchRows:]
	}
	rows := make([]CallRow, 0, len(order))
	for _, id := range order {
		rows = append(rows, b.latest[id])
	}
	*b = rowBatch{}
	return rows
}

// follow updates the rows of the calls under way with an event of the
// feed, and returns the row to show.
func follow(running map[string]CallRow, e feed.Event) (CallRow, bool) {
	switch e.Kind {
	case feed.Started:
		id := e.Caller
		row := CallRow{CallID: e.CallID, Tool: e.Tool, Args: string(e.Args), Agent: id.AgentID, Session: id.SessionKey,
			Channel: id.Channel, Principal: id.Principal, Workspace: e.Workspace, Time: e.Time, Running: true}
		running[e.CallID] = row
		return row, true
	case feed.Finished:
		delete(running, e.CallID)
		if e.Record == nil || e.Record.Kind != "" {
			return CallRow{}, false
		}
		return rowOf(*e.Record), true
	}
	row, ok := running[e.CallID]
	if !ok {
		return CallRow{}, false
	}
	switch e.Kind {
	case feed.Progress:
		row.Preview = e.Text
	case feed.Waiting:
		row.Decision = "waiting for approval"
	}
	running[e.CallID] = row
	return row, true
}

// sendRow writes a row as an event.
func (c *Console) sendRow(w http.ResponseWriter, row CallRow) error {
	var b bytes.Buffer
	if err := c.tmpl["calls.html"].ExecuteTemplate(&b, "call-row", row); err != nil {
		return err
	}
	return writeEvent(w, "row", b.String())
}

// writeEvent writes a server-sent event, each line of data on a data:
// line.
func writeEvent(w http.ResponseWriter, event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	for line := range strings.Lines(data) {
		b.WriteString("data: " + strings.TrimRight(line, "\r\n") + "\n")
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(w, b.String())
	return err
}
