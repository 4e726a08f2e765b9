package console

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// keptBytes is how many bytes of results the console keeps in all: the
// results of this server's most recent calls, the oldest dropped first.
const keptBytes = 8 << 20

// previewChars is the most characters of a result's preview in the calls
// list.
const previewChars = 200

// results are the results of the most recent calls, as the feed's
// Returned events carry them, up to keptBytes in all. Safe for concurrent
// use.
type results struct {
	mu     sync.Mutex
	byCall map[string]*invoke.EventResult
	order  []string // the calls kept, oldest first
	bytes  int
}

// keep keeps a call's result, dropping the oldest results past keptBytes.
func (k *results) keep(callID string, r *invoke.EventResult) {
	r = &invoke.EventResult{Content: r.Content, IsError: r.IsError, Error: r.Error} // details are not kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byCall == nil {
		k.byCall = map[string]*invoke.EventResult{}
	}
	if old, ok := k.byCall[callID]; ok {
		k.bytes -= resultSize(old)
	} else {
		k.order = append(k.order, callID)
	}
	k.byCall[callID] = r
	k.bytes += resultSize(r)
	for k.bytes > keptBytes && len(k.order) > 0 {
		k.bytes -= resultSize(k.byCall[k.order[0]])
		delete(k.byCall, k.order[0])
		k.order = k.order[1:]
	}
}

// get returns a call's result, nil when it is not kept.
func (k *results) get(callID string) *invoke.EventResult {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.byCall[callID]
}

// resultSize is about how many bytes a kept result takes.
func resultSize(r *invoke.EventResult) int {
	n := 64 + len(r.Error)
	for _, c := range r.Content {
		n += 64 + len(c.Text) + len(c.MIMEType)
	}
	return n
}

// preview is a result in one line of at most previewChars: its error, or
// its first text, or what its first block is.
func preview(r *invoke.EventResult) string {
	if r == nil {
		return ""
	}
	if r.IsError && r.Error != "" {
		return content.FirstLine(r.Error, previewChars)
	}
	for _, c := range r.Content {
		if c.Type == tool.ImageContent || c.Type == tool.AudioContent {
			return fmt.Sprintf("%s (%s, %d bytes)", c.Type, c.MIMEType, c.Bytes)
		}
		if t := strings.TrimSpace(c.Text); t != "" {
			return content.FirstLine(t, previewChars)
		}
	}
	return ""
}

// keepResults keeps the results sub's Returned events carry until ctx
// ends.
func (c *Console) keepResults(ctx context.Context, sub *feed.Subscription) {
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-sub.Events():
			if e.Kind == feed.Returned && e.Result != nil {
				c.results.keep(e.CallID, e.Result)
			}
		}
	}
}

// withPreviews sets the rows' previews from the results kept.
func (c *Console) withPreviews(rows []CallRow) {
	for i := range rows {
		rows[i].Preview = preview(c.results.get(rows[i].CallID))
	}
}
