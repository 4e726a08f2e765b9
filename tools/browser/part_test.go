package browser

import (
	"testing"
	"unicode/utf8"
)

// TestPartCutsAtLinesAndCharacters: a part ends at a line's end when one
// fits, else at a character's start, and says where the next begins.
func TestPartCutsAtLinesAndCharacters(t *testing.T) {
	for _, c := range []struct {
		text        string
		offset, max int
		want        string
		wantNext    int
	}{
		{"ab\ncd\nef\n", 0, 7, "ab\ncd\n", 6},
		{"ab\ncd\nef\n", 6, 7, "ef\n", 0},
		{"ab\ncd\n", 9, 7, "", 0},
		{"ééééé", 0, 5, "éé", 4}, // 5 bytes would split the third é
	} {
		got, next := part(c.text, c.offset, c.max)
		if got != c.want || next != c.wantNext || !utf8.ValidString(got) {
			t.Errorf("part(%q, %d, %d) = %q, %d; want %q, %d", c.text, c.offset, c.max, got, next, c.want, c.wantNext)
		}
	}
}
