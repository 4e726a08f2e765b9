package stmtcache_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/toolbelt/toolbelt/internal/stmtcache"
)

// counting is SQLite's driver counting the statements its connections
// prepare.
type counting struct {
	driver.Driver
	prepares *atomic.Int64
}

type countingConn struct {
	driver.Conn
	prepares *atomic.Int64
}

func (d counting) Open(name string) (driver.Conn, error) {
	c, err := d.Driver.Open(name)
	return countingConn{c, d.prepares}, err
}

func (c countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.prepares.Add(1)
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}
func (c countingConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, o)
}
func (c countingConn) ExecContext(ctx context.Context, q string, a []driver.NamedValue) (driver.Result, error) {
	c.prepares.Add(1) // an uncached query prepares its statement
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, a)
}
func (c countingConn) QueryContext(ctx context.Context, q string, a []driver.NamedValue) (driver.Rows, error) {
	c.prepares.Add(1)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, a)
}

// open opens a database of the test's own with the statements its
// connections prepare counted in prepares.
func open(t *testing.T, prepares *atomic.Int64) *sql.DB {
	t.Helper()
	plain, err := sql.Open("sqlite", "")
	if err != nil {
		t.Fatal(err)
	}
	name := "sqlite-counting-" + t.Name()
	sql.Register(name, counting{plain.Driver(), prepares})
	plain.Close()
	db, err := stmtcache.Open(name, "file:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestStatementsPreparedOnce: a query run again, in or out of a
// transaction, runs its statement again instead of preparing it anew, and
// gets its own arguments' results.
func TestStatementsPreparedOnce(t *testing.T) {
	t.Parallel()
	var prepares atomic.Int64
	db := open(t, &prepares)
	ctx := context.Background()
	before := prepares.Load()
	for i := range 100 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (?, ?)", i, "x"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM t WHERE id <= ?", i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("count = %d, %v; want %d", n, err, i+1)
		}
	}
	if got := prepares.Load() - before; got != 2 {
		t.Errorf("statements prepared for 200 queries = %d, want 2", got)
	}
}

// TestQueryAgainWhileItsRowsAreOpen: the same query run while its first
// rows are still being read runs uncached, and both read their rows.
func TestQueryAgainWhileItsRowsAreOpen(t *testing.T) {
	t.Parallel()
	db := open(t, new(atomic.Int64))
	ctx := context.Background()
	for i := range 3 {
		if _, err := db.Exec("INSERT INTO t (id, v) VALUES (?, ?)", i, "x"); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = "SELECT id FROM t WHERE id >= ? ORDER BY id"
	outer, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for outer.Next() {
		var id int
		if err := outer.Scan(&id); err != nil {
			t.Fatal(err)
		}
		var inner int
		if err := tx.QueryRowContext(ctx, q, id+1).Scan(&inner); err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		got = append(got, id, inner)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 1, 2, 2, 0}; len(got) != len(want) || got[0] != 0 || got[1] != 1 || got[2] != 1 || got[3] != 2 || got[4] != 2 || got[5] != 0 {
		t.Fatalf("rows = %v, want %v", got, want)
	}
	// Released: the statement serves the next query.
	var n int
	if err := tx.QueryRowContext(ctx, q, 1).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the rows closed: %d, %v", n, err)
	}
}

// TestErrorsLeaveTheStatementUsable: a statement that failed (a
// constraint) runs again.
func TestErrorsLeaveTheStatementUsable(t *testing.T) {
	t.Parallel()
	db := open(t, new(atomic.Int64))
	const ins = "INSERT INTO t (id, v) VALUES (?, ?)"
	if _, err := db.Exec(ins, 1, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ins, 1, "b"); err == nil {
		t.Fatal("a duplicate key was inserted")
	}
	if _, err := db.Exec(ins, 2, "c"); err != nil {
		t.Fatalf("after a failure: %v", err)
	}
	var v string
	if err := db.QueryRow("SELECT group_concat(v, '') FROM t").Scan(&v); err != nil || v != "ac" {
		t.Fatalf("rows = %q, %v", v, err)
	}
}

// TestFullCacheEvictsLeastRecentlyUsed: past MaxStatements, a new
// statement takes the place of the one used least recently, so the
// statements in use stay cached however many others came and went.
func TestFullCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	var prepares atomic.Int64
	db := open(t, &prepares)
	query := func(i int) string { return fmt.Sprintf("SELECT %d + ?", i) }
	run := func(i int) {
		t.Helper()
		var n int
		if err := db.QueryRow(query(i), 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("%s = %d, %v; want %d", query(i), n, err, i+1)
		}
	}
	const extra = 44
	total := stmtcache.MaxStatements + extra
	for i := range total {
		run(i)
	}
	// The last MaxStatements queries are kept: running them again, the
	// newest first, prepares nothing.
	before := prepares.Load()
	for i := total - 1; i >= extra; i-- {
		run(i)
	}
	if got := prepares.Load() - before; got != 0 {
		t.Errorf("running the %d most recent queries again prepared %d statements, want 0", stmtcache.MaxStatements, got)
	}
	// The first ones were evicted: query 0 is prepared again and takes the
	// place of the least recently used, query total-1 (run first above).
	before = prepares.Load()
	run(0)
	run(0)
	run(extra)
	if got := prepares.Load() - before; got != 1 {
		t.Errorf("an evicted query run twice, then a kept one: %d statements prepared, want 1", got)
	}
	before = prepares.Load()
	run(total - 1)
	if got := prepares.Load() - before; got != 1 {
		t.Errorf("the least recently used query after an eviction: %d statements prepared, want 1", got)
	}
}

// TestFullCacheOfBusyStatements: when every kept statement is in use
// (its rows open), another query runs uncached and nothing open is
// finalized.
func TestFullCacheOfBusyStatements(t *testing.T) {
	t.Parallel()
	db := open(t, new(atomic.Int64))
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var reading []*sql.Rows
	for i := range stmtcache.MaxStatements {
		r, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT %d UNION ALL SELECT %d", i, i+1))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Next() {
			t.Fatalf("query %d: no rows: %v", i, r.Err())
		}
		reading = append(reading, r)
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("with a full cache of open rows: %d, %v", n, err)
	}
	for i, r := range reading {
		var v int
		if !r.Next() {
			t.Fatalf("query %d: its second row is gone: %v", i, r.Err())
		}
		if err := r.Scan(&v); err != nil || v != i+1 {
			t.Fatalf("query %d: second row %d, %v; want %d", i, v, err, i+1)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
