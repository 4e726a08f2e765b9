package console

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
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
// wait and finish, rendered once for all the pages open (live.go); those
// of other processes sharing the store from the audit records appended
// since the page's newest (the query's after), read every auditPoll. The
// query string filters as the page's does.
func (c *Console) callEvents(w http.ResponseWriter, r *http.Request, _ visitor) {
	f := filterOf(r.URL.Query())
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	var fed <-chan []liveRow
	if c.opts.Feed != nil {
		s := c.live.join(f)
		defer c.live.leave(s)
		fed = s.rows
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	poll, ping := time.NewTicker(auditPoll), time.NewTicker(keepAlive)
	defer poll.Stop()
	defer ping.Stop()
	shown := map[string]bool{} // the feed's finished calls sent, not yet met in the log
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case rows := <-fed:
			for _, row := range rows {
				if row.Seq == 0 && !row.Running {
					shown[row.CallID] = true
				}
				if _, err = w.Write(row.event); err != nil {
					break
				}
			}
		case <-poll.C:
			var logged []CallRow
			logged, after, err = c.calls(r, f, after)
			if err != nil {
				if r.Context().Err() == nil {
					c.log.Warn("console: reading new audit records", "err", err)
				}
				err = nil
			}
			for _, row := range logged {
				if shown[row.CallID] { // sent as the feed told
					delete(shown, row.CallID)
					continue
				}
				if err = c.sendRow(w, row); err != nil {
					break
				}
			}
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
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
