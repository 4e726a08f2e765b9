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
// The query string filters as the page's does; after is the place of the
// newest record the page showed.
func (c *Console) callEvents(w http.ResponseWriter, r *http.Request, _ visitor) {
	f := filterOf(r.URL.Query())
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
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
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-poll.C:
			rows, last, err := c.calls(r, f, after)
			if err != nil {
				c.log.Warn("console: reading new audit records", "err", err)
				continue
			}
			after = last
			for _, row := range rows {
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
