package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestShownStaysBounded: a stream's memory of the calls it sent from the
// feed (shown) holds at most shownCalls of them however many calls it
// sent, the newest, and forgets one once the poll meets it.
func TestShownStaysBounded(t *testing.T) {
	shown := newRecent(shownCalls)
	const n = 10 * shownCalls
	for i := range n {
		shown.add(fmt.Sprint("c-", i))
	}
	if len(shown.ids) != shownCalls {
		t.Errorf("after %d calls the stream remembers %d, want %d", n, len(shown.ids), shownCalls)
	}
	if shown.take(fmt.Sprint("c-", n-shownCalls-1)) {
		t.Error("a call older than the newest shownCalls is still remembered")
	}
	last := fmt.Sprint("c-", n-1)
	if !shown.take(last) || shown.take(last) {
		t.Error("the newest call is not remembered once, then forgotten when taken")
	}
}

// TestResultsStayBounded: the results kept take at most keptBytes; past
// it the oldest are dropped first, and the newest kept.
func TestResultsStayBounded(t *testing.T) {
	var kept results
	text := strings.Repeat("x", 64<<10)
	const n = 1000 // 64 MiB of results
	for i := range n {
		kept.keep(fmt.Sprint("c-", i), &invoke.EventResult{Content: []invoke.EventContent{{Type: tool.TextContent, Text: text}}})
	}
	if kept.bytes > keptBytes || len(kept.byCall) != len(kept.order) {
		t.Errorf("%d results kept in %d bytes, over %d", len(kept.byCall), kept.bytes, keptBytes)
	}
	if kept.get("c-0") != nil {
		t.Error("the oldest result is still kept")
	}
	if r := kept.get(fmt.Sprint("c-", n-1)); r == nil || r.Content[0].Text != text {
		t.Error("the newest result is not kept whole")
	}
}
