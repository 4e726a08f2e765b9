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

// live follows the feed for the calls pages open: one subscriber, whose
// rows each page's stream gets already rendered. It subscribes while a
// page is open, and not otherwise.
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

// liveRun is the feed subscriber of the pages open now.
type liveRun struct {
	streams map[*liveStream]struct{}
	cancel  func()
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

// join starts sending the rows f matches; leave stops it.
func (l *live) join(f callFilter) *liveStream {
	s := &liveStream{f: f, rows: make(chan []liveRow, streamBacklog)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run == nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.run = &liveRun{streams: map[*liveStream]struct{}{}, cancel: cancel}
		go l.follow(ctx, l.run, l.c.opts.Feed.Subscribe(0))
	}
	l.run.streams[s] = struct{}{}
	return s
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

// follow turns the feed's events into rows, and sends them every
// sendEvery, until ctx ends.
func (l *live) follow(ctx context.Context, run *liveRun, sub *feed.Subscription) {
	defer sub.Close()
	batch := time.NewTicker(sendEvery)
	defer batch.Stop()
	running := map[string]CallRow{} // the calls not finished yet
	var pending rowBatch
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-sub.Events():
			if e.Kind == feed.Finished {
				l.finished(e.CallID)
			}
			if row, ok := follow(running, e); ok {
				pending.add(row)
			}
		case <-batch.C:
			l.send(run, pending.take())
		}
	}
}

// send hands each stream of run the newest batchRows of rows its filter
// matches, rendering each row once.
func (l *live) send(run *liveRun, rows []CallRow) {
	if len(rows) == 0 {
		return
	}
	l.mu.Lock()
	streams := slices.Collect(maps.Keys(run.streams))
	l.mu.Unlock()
	rendered := map[string][]byte{}
	for _, s := range streams {
		var out []liveRow
		for _, row := range newest(rows, s.f, batchRows) {
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
		default: // the page is behind: the audit poll sends it what it missed
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
