package store

import "testing"

func TestRebind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d        dialect
		in, want string
	}{
		{sqliteDialect, "SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = ? AND c = ?"},
		{postgresDialect, "SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = $2"},
		{postgresDialect, "INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			"INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"},
		{postgresDialect, "SELECT 'é' FROM t", "SELECT 'é' FROM t"},
	} {
		if got := tc.d.rebind(tc.in); got != tc.want {
			t.Errorf("%s: rebind(%q) = %q, want %q", tc.d.name, tc.in, got, tc.want)
		}
	}
}
