package console

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// TestFedCallsStayBounded: the streams' memory of the calls the feed told
// of holds at most fedCalls of them however many calls were made, the
// newest, and the polls leave out the rows of those alone.
func TestFedCallsStayBounded(t *testing.T) {
	var l live
	const n = 10 * fedCalls
	for i := range n {
		l.finished(fmt.Sprint("c-", i))
	}
	if len(l.fed.ids) != fedCalls {
		t.Errorf("after %d calls the streams remember %d, want %d", n, len(l.fed.ids), fedCalls)
	}
	rows := []CallRow{{CallID: fmt.Sprint("c-", n-fedCalls-1)}, {CallID: fmt.Sprint("c-", n-1)}, {CallID: "other"}}
	var got []string
	for _, r := range l.notFed(rows) {
		got = append(got, r.CallID)
	}
	if want := []string{fmt.Sprint("c-", n-fedCalls-1), "other"}; !slices.Equal(got, want) {
		t.Errorf("the poll would send %v, want %v (a call forgotten, and another process's)", got, want)
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
