package console

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/feed"
)

// How the rows of this process's calls are sent: every sendEvery, each
// call's latest row once, rendered once for all the calls pages open, and
// to each page at most batchRows of them (the newest its filter matches) —
// 200 rows a second is more than a person reads; the audit poll brings a
// page the finished calls it was not sent, and the page, reloaded, shows
// every call.
const (
	sendEvery = 100 * time.Millisecond
	batchRows = 20
	// streamBacklog is how many batches a page may have unsent; a page
	// slower than that misses the next ones.
	streamBacklog = 4
	// fedCalls is how many of the feed's finished calls the pages'
	// streams remember, so that their audit polls do not send those rows
	// again (their live rows came from the feed, or were left out as too
	// many); past it, the oldest are forgotten, and a poll that meets them
	// sends them again, in place of the same row.
	fedCalls = 16384
)

// live follows the calls for the calls pages open: one subscriber to the
// feed and one reader of the audit log, whose rows each page's stream gets
// already rendered. It follows while a page is open, and not otherwise.
type live struct {
	c   *Console
	mu  sync.Mutex
	run *liveRun // nil while no page is open
	fed *recent  // the feed's finished calls
}

// notFed returns the rows of calls the feed has not told of: those of
// other processes, and this one's made while no page was open.
func (l *live) notFed(rows []CallRow) []CallRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(rows, func(r CallRow) bool { return l.fed != nil && l.fed.ids[r.CallID] })
}

// finished remembers that the feed told of a call's end.
func (l *live) finished(callID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fed == nil {
		l.fed = newRecent(fedCalls)
	}
	l.fed.add(callID)
}

// liveRun is the follower of the pages open now.
type liveRun struct {
	streams map[*liveStream]struct{}
	cancel  func()
	// cursor is the place of the last audit record it read.
	cursor int64
}

// liveStream is an open page's share of the live rows.
type liveStream struct {
	f    callFilter
	rows chan []liveRow
}

// liveRow is a row and its event, rendered once for every page.
type liveRow struct {
	CallRow
	event []byte
}

// join starts sending the rows f matches, and returns the place of the
// last audit record read: the rows of the records after it will be sent.
// leave stops it.
func (l *live) join(ctx context.Context, f callFilter) (*liveStream, int64, error) {
	s := &liveStream{f: f, rows: make(chan []liveRow, streamBacklog)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run == nil {
		cursor, err := l.c.newestSeq(ctx)
		if err != nil {
			return nil, 0, err
		}
		var sub *feed.Subscription
		if l.c.opts.Feed != nil {
			sub = l.c.opts.Feed.Subscribe(0)
		}
		runCtx, cancel := context.WithCancel(context.Background())
		l.run = &liveRun{streams: map[*liveStream]struct{}{}, cancel: cancel, cursor: cursor}
		go l.follow(runCtx, l.run, sub)
	}
	l.run.streams[s] = struct{}{}
	return s, l.run.cursor, nil
}

// leave stops sending rows to s; the last page to leave ends the
// subscription.
func (l *live) leave(s *liveStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.run.streams, s)
	if len(l.run.streams) == 0 {
		l.run.cancel()
		l.run = nil
	}
}

// follow turns the feed's events (sub's; nil for none) into rows, and
// sends them every sendEvery; every auditPoll it sends the calls of the
// audit records appended that the feed did not tell of. It stops when ctx
// ends.
func (l *live) follow(ctx context.Context, run *liveRun, sub *feed.Subscription) {
	var events <-chan feed.Event
	if sub != nil {
		defer sub.Close()
		events = sub.Events()
	}
	batch, poll := time.NewTicker(sendEvery), time.NewTicker(auditPoll)
	defer batch.Stop()
	defer poll.Stop()
	running := map[string]CallRow{} // the calls not finished yet
	var pending rowBatch
	cursor := run.cursor // only follow changes it
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
			rows, last, err := l.c.newCalls(ctx, callFilter{}, cursor, 0)
			if err != nil && ctx.Err() == nil {
				l.c.log.Warn("console: reading new audit records", "err", err)
			}
			rows = l.notFed(rows)
			l.mu.Lock()
			cursor, run.cursor = last, last
			streams := slices.Collect(maps.Keys(run.streams))
			l.mu.Unlock()
			l.send(streams, rows, len(rows))
		case e := <-events:
			if e.Kind == feed.Finished {
				l.finished(e.CallID)
			}
			if row, ok := follow(running, e); ok {
				pending.add(row)
			}
		case <-batch.C:
			l.mu.Lock()
			streams := slices.Collect(maps.Keys(run.streams))
			l.mu.Unlock()
			l.send(streams, pending.take(), batchRows)
		}
	}
}

// send hands each stream the newest n of rows its filter matches,
// rendering each row once.
func (l *live) send(streams []*liveStream, rows []CallRow, n int) {
	if len(rows) == 0 {
		return
	}
	rendered := map[string][]byte{}
	for _, s := range streams {
		var out []liveRow
		for _, row := range newest(rows, s.f, n) {
			ev, ok := rendered[row.CallID]
			if !ok {
				var err error
				if ev, err = l.c.rowEvent(row); err != nil {
					l.c.log.Error("console: rendering a live row", "call", row.CallID, "err", err)
					continue
				}
				rendered[row.CallID] = ev
			}
			out = append(out, liveRow{row, ev})
		}
		if len(out) == 0 {
			continue
		}
		select {
		case s.rows <- out:
		default: // the page is behind: it misses these rows until reloaded
		}
	}
}

// newest returns the last n of rows f matches, in order.
func newest(rows []CallRow, f callFilter, n int) []CallRow {
	var out []CallRow
	for i := len(rows) - 1; i >= 0 && len(out) < n; i-- {
		if f.match(rows[i]) {
			out = append(out, rows[i])
		}
	}
	slices.Reverse(out)
	return out
}

// rowBatch are the rows to send next: each call's latest, in the order the
// calls were first met.
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
	rows := make([]CallRow, 0, len(b.order))
	for _, id := range b.order {
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
		returned, ok := running[e.CallID]
		delete(running, e.CallID)
		if e.Record == nil || e.Record.Kind != "" {
			return CallRow{}, false
		}
		row := rowOf(*e.Record)
		if ok && !returned.Running {
			row.Preview = returned.Preview
		}
		return row, true
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
	case feed.Returned: // its row is sent once it is audited (Finished)
		row.Running, row.Preview = false, preview(e.Result)
		running[e.CallID] = row
		return CallRow{}, false
	}
	running[e.CallID] = row
	return row, true
}
