package fs

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadPageCutsAWideLine: a first line longer than the page but
// shorter than the reader's buffer (so handed out without a copy) is cut
// at 50 KB like a longer one, and the next line still counts.
func TestReadPageCutsAWideLine(t *testing.T) {
	for _, width := range []int{60 << 10, 64<<10 - 1, 200 << 10} {
		r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("y", width)+"\nnext\n"), 64<<10)
		res, err := readPage("wide.js", r, 1, readLines, false, int64(width+6))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Repeat("y", readBytes-1) + "\n" +
			"\n[Line 1 is " + sizeText(int64(width)) + " long; only its first 50 KB is shown. Search the file with grep to find what you need in it.]" +
			"\n[Showing lines 1-1 of 2. Use offset=2 to continue.]"
		if got := res.Content[0].Text; got != want {
			t.Errorf("width %d: got %d bytes ending %q, want %d bytes ending %q", width, len(got), got[max(len(got)-150, 0):], len(want), want[len(want)-150:])
		}
	}
}
