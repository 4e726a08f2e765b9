package tokens_test

import (
	"testing"

	"github.com/toolbelt/toolbelt/content/tokens"
)

func TestO200k(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tokens are counted with the o200k encoding ", 10},
	} {
		if got := tokens.O200k(tc.text); got != tc.want {
			t.Errorf("O200k(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
