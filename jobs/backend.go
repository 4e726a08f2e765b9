package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/toolbelt/toolbelt/internal/stmtcache"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// backend is what differs between SQLite and PostgreSQL: the River client
// (generic over the transaction type) and how our own queries run in the
// same transactions as River's inserts, so a job row and the River job
// that works it are written together or not at all.
type backend interface {
	// tx runs fn in a write transaction; enqueue inserts River jobs in it.
	tx(ctx context.Context, fn func(q querier, enqueue enqueueFunc) error) error
	// direct runs fn outside a transaction: reads, and writes of one
	// statement (one round trip on PostgreSQL where a transaction is
	// three; there the statements of steps running at once share a round
	// trip and an implicit transaction, see pgPipeline).
	direct(ctx context.Context, fn func(q querier) error) error
	start(ctx context.Context) error
	stop(ctx context.Context) error
	close()
	name() string
}

// stopRiver stops c: the steps running have until ctx ends to finish, are
// then cancelled, and it returns once they have returned (with ctx's error
// when they had to be cancelled).
func stopRiver[TTx any](ctx context.Context, c *river.Client[TTx]) error {
	err := c.Stop(ctx)
	if ctx.Err() == nil {
		return err
	}
	return errors.Join(err, c.StopAndCancel(context.Background()))
}

type enqueueFunc func(args river.JobArgs, opts *river.InsertOpts) error

// querier runs our queries; they are written with ? parameters.
type querier interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	// jobs runs a query whose rows are jobColumns.
	jobs(ctx context.Context, query string, args ...any) ([]row, error)
}

type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// isPostgres says whether dsn names a PostgreSQL database, as store.Open
// reads it.
func isPostgres(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

func openBackend(ctx context.Context, dsn string, cfg *river.Config) (backend, error) {
	if isPostgres(dsn) {
		return openPostgres(ctx, dsn, cfg)
	}
	return openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), cfg)
}

// ---- SQLite ----

type sqliteBackend struct {
	db     *sql.DB
	client *river.Client[*sql.Tx]
}

func openSQLite(ctx context.Context, path string, cfg *river.Config) (*sqliteBackend, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	uri := (&url.URL{Scheme: "file", Path: path}).String()
	// One connection, as River's SQLite driver asks; immediate
	// transactions, so a transaction that writes never fails to upgrade
	// its lock; the store's busy timeout. The connection keeps the
	// statements it prepares (River's and ours): preparing them anew was
	// most of the CPU of working jobs.
	db, err := stmtcache.Open("sqlite", uri+"?_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("jobs database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	driver := riversqlite.New(db)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: cfg.Logger})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs database %s: %w", path, err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs database %s: River migrations: %w", path, err)
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &sqliteBackend{db: db, client: client}, nil
}

func (b *sqliteBackend) name() string { return "sqlite" }

func (b *sqliteBackend) tx(ctx context.Context, fn func(querier, enqueueFunc) error) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	enqueue := func(args river.JobArgs, opts *river.InsertOpts) error {
		_, err := b.client.InsertTx(ctx, tx, args, opts)
		return err
	}
	if err := fn(sqlQuerier{tx}, enqueue); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (b *sqliteBackend) direct(ctx context.Context, fn func(querier) error) error {
	return fn(sqlQuerier{b.db})
}

func (b *sqliteBackend) start(ctx context.Context) error { return b.client.Start(ctx) }
func (b *sqliteBackend) stop(ctx context.Context) error  { return stopRiver(ctx, b.client) }
func (b *sqliteBackend) close()                          { b.db.Close() }

type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type sqlQuerier struct{ db sqlRunner }

func (q sqlQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) jobs(ctx context.Context, query string, args ...any) ([]row, error) {
	r, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanJobs(&sqlRows{r}, nil)
}

// sqlRows closes itself when Next runs out, as pgx's rows do.
type sqlRows struct{ *sql.Rows }

func (r *sqlRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Rows.Close()
	return false
}

func (r *sqlRows) Close() { r.Rows.Close() }

// ---- PostgreSQL ----

type pgBackend struct {
	pool   *pgxpool.Pool
	pipe   *pgPipeline
	client *river.Client[pgx.Tx]
}

func openPostgres(ctx context.Context, dsn string, cfg *river.Config) (*pgBackend, error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("jobs database: not a valid PostgreSQL URL: %w", redactErr(err, dsn))
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("jobs database: %w", redactErr(err, dsn))
	}
	driver := riverpgxv5.New(pool)
	if err := migratePostgres(ctx, pool, driver, cfg); err != nil {
		pool.Close()
		return nil, fmt.Errorf("jobs database: River migrations: %w", err)
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &pgBackend{pool: pool, pipe: &pgPipeline{pool: pool}, client: client}, nil
}

// migratePostgres runs River's migrations under an advisory lock of the
// schema, so that nodes starting together do not run them twice.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver, cfg *river.Config) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	const lock = "SELECT pg_advisory_lock(hashtextextended('toolbelt/river-migrations/' || coalesce(current_schema(), ''), 0))"
	const unlock = "SELECT pg_advisory_unlock(hashtextextended('toolbelt/river-migrations/' || coalesce(current_schema(), ''), 0))"
	if _, err := conn.Exec(ctx, lock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), unlock)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: cfg.Logger})
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// redactErr keeps a password out of an error that quotes the URL.
func redactErr(err error, dsn string) error {
	if u, perr := url.Parse(dsn); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return errors.New(strings.ReplaceAll(err.Error(), p, "xxxxx"))
		}
	}
	return err
}

func (b *pgBackend) name() string { return "postgres" }

func (b *pgBackend) tx(ctx context.Context, fn func(querier, enqueueFunc) error) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	enqueue := func(args river.JobArgs, opts *river.InsertOpts) error {
		_, err := b.client.InsertTx(ctx, tx, args, opts)
		return err
	}
	if err := fn(pgQuerier{tx}, enqueue); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// direct's statements go through the pipeline: those of steps running at
// once share a round trip.
func (b *pgBackend) direct(ctx context.Context, fn func(querier) error) error {
	return fn(pgPipeQuerier{b.pipe})
}

func (b *pgBackend) start(ctx context.Context) error { return b.client.Start(ctx) }
func (b *pgBackend) stop(ctx context.Context) error  { return stopRiver(ctx, b.client) }
func (b *pgBackend) close()                          { b.pool.Close() }

// pgxDB is what pgxpool.Pool and pgx.Tx share.
type pgxDB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

type pgQuerier struct{ db pgxDB }

func (q pgQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.db.Exec(ctx, rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (q pgQuerier) jobs(ctx context.Context, query string, args ...any) ([]row, error) {
	return scanJobs(q.db.Query(ctx, rebind(query), args...))
}

// rebound holds rebind's results by query: our queries are a fixed set
// of texts (List's a few combinations of its filters), and rewriting
// them for every statement was a fifth of the pipeline's CPU.
var rebound sync.Map // string → string

// rebind writes ? parameters as $1, $2, …; our queries hold no literal ?.
func rebind(query string) string {
	if r, ok := rebound.Load(query); ok {
		return r.(string)
	}
	r := rebindText(query)
	rebound.Store(query, r)
	return r
}

func rebindText(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
