// Package stmtcache opens a database/sql pool whose connections keep the
// statements they prepare, by their SQL text, and run them again instead
// of preparing them anew: database/sql prepares and finalizes a statement
// for every query that is not an explicit *sql.Stmt, and code that is not
// ours (River's drivers) queries through *sql.DB and *sql.Tx. On SQLite,
// preparing is parsing and planning the SQL: it was 38% of the CPU of
// draining jobs (bench/HISTORY.md, "Durable jobs").
//
// It is written for modernc.org/sqlite, whose statements can be reset and
// run again and whose rows, when closed, reset their statement instead of
// finalizing it.
package stmtcache

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// MaxStatements bounds the statements a connection keeps: once it keeps
// that many, preparing another finalizes the one used least recently
// (and not in use). A query finding every kept statement in use runs
// uncached.
const MaxStatements = 256

// Open opens a pool of connections of the registered driver driverName
// to dsn, each keeping its statements.
func Open(driverName, dsn string) (*sql.DB, error) {
	db, err := sql.Open(driverName, dsn) // no connection yet: for its driver
	if err != nil {
		return nil, err
	}
	d := db.Driver()
	db.Close()
	return sql.OpenDB(connector{d: d, dsn: dsn}), nil
}

type connector struct {
	d   driver.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	inner, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ic, ok := inner.(innerConn)
	if !ok {
		inner.Close()
		return nil, errors.New("stmtcache: the driver's connections lack the context methods (database/sql/driver's ConnPrepareContext, ConnBeginTx, ExecerContext, QueryerContext)")
	}
	return &conn{inner: ic, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c connector) Driver() driver.Driver { return c.d }

// innerConn is what conn needs of the driver's connections.
type innerConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
}

// conn is one connection and its statements. database/sql uses a
// connection from one goroutine at a time, so conn needs no lock; a
// statement whose rows are still open (a query run again before its
// first rows were closed) is busy, and the second runs uncached.
type conn struct {
	inner innerConn
	stmts map[string]*list.Element // of lru
	lru   *list.List               // of *stmt, the most recently used first
}

type stmt struct {
	query string
	s     driver.Stmt
	busy  bool
}

// cached returns the statement of query, prepared on first use, or nil
// when it is busy, or when the cache is full and every statement in it
// is busy.
func (c *conn) cached(ctx context.Context, query string) (*stmt, error) {
	if e, ok := c.stmts[query]; ok {
		s := e.Value.(*stmt)
		if s.busy {
			return nil, nil
		}
		c.lru.MoveToFront(e)
		return s, nil
	}
	if len(c.stmts) >= MaxStatements && !c.evict() {
		return nil, nil
	}
	ds, err := c.inner.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &stmt{query: query, s: ds}
	c.stmts[query] = c.lru.PushFront(s)
	return s, nil
}

// evict finalizes the statement used least recently that is not busy,
// and reports whether there was one.
func (c *conn) evict() bool {
	for e := c.lru.Back(); e != nil; e = e.Prev() {
		s := e.Value.(*stmt)
		if s.busy {
			continue
		}
		c.lru.Remove(e)
		delete(c.stmts, s.query)
		// SQLite's finalize repeats the statement's last error (one a
		// query already reported); the statement is gone either way.
		_ = s.s.Close()
		return true
	}
	return false
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.inner.ExecContext(ctx, query, args)
	}
	return s.s.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.inner.QueryContext(ctx, query, args)
	}
	r, err := s.s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	release := func() { s.busy = false }
	if tr, ok := r.(typedRows); ok {
		return &rows{typedRows: tr, release: release}, nil
	}
	return &plainRows{Rows: r, release: release}, nil
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.inner.PrepareContext(ctx, query)
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.inner.PrepareContext(context.Background(), query)
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.inner.BeginTx(ctx, opts)
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.inner.BeginTx(context.Background(), driver.TxOptions{})
}

// Close finalizes the statements and closes the connection.
func (c *conn) Close() error {
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*stmt).s.Close())
	}
	clear(c.stmts)
	c.lru.Init()
	return errors.Join(append(errs, c.inner.Close())...)
}

func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// typedRows are rows that describe their columns' types, as
// modernc.org/sqlite's do; rows passes that on.
type typedRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// rows frees its statement for the next query when it is closed.
type rows struct {
	typedRows
	release func()
}

func (r *rows) Close() error {
	err := r.typedRows.Close()
	r.release()
	return err
}

type plainRows struct {
	driver.Rows
	release func()
}

func (r *plainRows) Close() error {
	err := r.Rows.Close()
	r.release()
	return err
}
