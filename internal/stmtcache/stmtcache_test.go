package stmtcache_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
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
