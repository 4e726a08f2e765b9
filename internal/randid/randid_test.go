package randid

import (
	"regexp"
	"testing"
)

// TestNew: the prefix, then twice n lowercase hexadecimal digits; two ids
// differ.
func TestNew(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		prefix string
		n      int
		want   string
	}{
		{"", 3, `^[0-9a-f]{6}$`},
		{"run-", 6, `^run-[0-9a-f]{12}$`},
		{"web_", 8, `^web_[0-9a-f]{16}$`},
	} {
		a, b := New(tt.prefix, tt.n), New(tt.prefix, tt.n)
		if !regexp.MustCompile(tt.want).MatchString(a) {
			t.Errorf("New(%q, %d) = %q, want %s", tt.prefix, tt.n, a, tt.want)
		}
		if a == b {
			t.Errorf("New(%q, %d) returned %q twice", tt.prefix, tt.n, a)
		}
	}
}
