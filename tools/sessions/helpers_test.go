package sessions_test

import (
	"fmt"
	"strconv"
	"strings"
)

// fmtSscan reads the next offset from a footer "[… Use offset=N to continue.]".
func fmtSscan(footer string, next *int) (int, error) {
	_, rest, ok := strings.Cut(footer, "offset=")
	if !ok {
		return 0, fmt.Errorf("no offset in %q", footer)
	}
	return fmt.Sscanf(rest, "%d", next)
}

func itoa(n int) string { return strconv.Itoa(n) }
