package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClip: text of every width of character — one byte (a), two (é),
// three (€), four (😀) and a byte that is not UTF-8 — is cut at every limit
// from before its start to past its end: the result is the text itself
// while it fits, else exactly its first n characters and "…"; valid UTF-8
// stays valid.
func TestClip(t *testing.T) {
	t.Parallel()
	chars := []string{"a", "é", "€", "😀", "a", "\xff", "€", "é", "😀", "b"}
	s := strings.Join(chars, "")
	for n := -1; n <= len(chars)+1; n++ {
		want := s
		if n < len(chars) {
			want = strings.Join(chars[:max(n, 0)], "") + "…"
		}
		if got := Clip(s, n); got != want {
			t.Errorf("Clip(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	valid := strings.Repeat("é€😀", 4)
	for n := range utf8.RuneCountInString(valid) {
		if got := Clip(valid, n); !utf8.ValidString(got) || utf8.RuneCountInString(got) != n+1 {
			t.Errorf("Clip(%q, %d) = %q: not %d characters and the marker, or not valid UTF-8", valid, n, got, n)
		}
	}
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"", 5, ""},
		{"ééé", 3, "ééé"}, // six bytes, three characters: nothing to cut
		{strings.Repeat("x", 1200), 500, strings.Repeat("x", 500) + "…"},
	} {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
