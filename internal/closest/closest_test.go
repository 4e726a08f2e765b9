package closest

import (
	"slices"
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
