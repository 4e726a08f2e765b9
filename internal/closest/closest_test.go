package closest

import (
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	known := []string{"read", "write", "web_fetch", "web_search", "grep", "apply_patch", "exec"}
	for _, c := range []struct {
		name string
		n    int
		want []string
	}{
		{"Web-Fetch", 3, []string{"web_fetch", "web_search"}}, // case and separators first
		{"reed", 3, []string{"read"}},                         // one substitution
		{"erad", 3, []string{"read"}},                         // a swap counts once
		{"patch", 3, []string{"apply_patch"}},                 // contained
		{"web", 1, []string{"web_fetch"}},                     // contained, first kept
		{"xyzzy", 3, nil},                                     // too far from everything
		{"wirte", 2, []string{"write"}},                       // swap
		{"", 3, nil},
	} {
		if got := Names(c.name, known, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Names(%q, %d) = %q, want %q", c.name, c.n, got, c.want)
		}
	}
}

// TestHugeName: a name far longer than every candidate is not compared
// letter by letter (that would take memory in proportion to both lengths).
func TestHugeName(t *testing.T) {
	t.Parallel()
	if got := Names(strings.Repeat("path", 1<<18), []string{"path", "pattern"}, 3); len(got) != 0 {
		t.Errorf("got %q", got)
	}
}
