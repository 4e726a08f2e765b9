package console

import (
	"fmt"
	"testing"
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
