// Package store keeps what must survive a restart: full outputs of results the
// pipeline cut short, the journal of file changes that undo reverses, and the
// audit log. One Store works over SQLite (the default, a file in the user's
// data directory) or PostgreSQL (for several processes sharing state); the
// logic is written once and the SQL differences live in a small dialect.
//
// Open applies the schema's versioned migrations. SQLite runs in WAL mode
// with one writer: writes go through a single connection in immediate
// transactions, so they are serialized in this process and with other
// processes, while readers use a pool of their own.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultFile is the name of the SQLite database in the data directory.
const DefaultFile = "toolbelt.db"

// DefaultDir returns the user's data directory for Toolbelt:
// $XDG_DATA_HOME/toolbelt, or ~/.local/share/toolbelt when XDG_DATA_HOME is
// unset or not absolute. It does not create it.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "toolbelt"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the data directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "toolbelt"), nil
}

// Store is a handle on the database. It is safe for concurrent use.
type Store struct {
	d dialect
	// w takes the writes; r the reads. They are the same pool for
	// PostgreSQL; for SQLite w holds a single connection.
	w, r *sql.DB
	// where names the database in errors (a path, or a URL without its
	// password).
	where string
	// now is the clock retention reads; tests set it.
	now func() time.Time
	// ready is closed when a store opened in the background is open, or
	// failed to open with openErr; nil for a store Open returned.
	ready   chan struct{}
	openErr error
	// wanted is closed by the first use of a store whose open waits
	// (OpenAfter), closing by Close; each once.
	wanted, closing     chan struct{}
	wantOnce, closeOnce sync.Once
	// process is this process's lock and site, which intents name (see
	// Journal.Intend); made at the first intent, in the directory locks.
	locks   string
	process process
}

// Option adjusts how Open opens a database.
type Option func(*options)

type options struct {
	sync  bool
	after <-chan struct{}
	locks string
}

func optionsOf(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// SyncCommits makes every commit wait until its data is on disk (SQLite:
// synchronous=FULL, an fsync of the write-ahead log per commit), so that
// committed data survives a power loss, not only the process being killed.
// Without it a commit returns once its data is written to the operating
// system. PostgreSQL commits as its server is configured.
func SyncCommits() Option { return func(o *options) { o.sync = true } }

// OpenAfter makes OpenInBackground begin opening the database when start
// is closed, or at the store's first use if that comes first, instead of at
// once: a server passes the end of its start, so that connecting, WAL mode
// and the schema check do not take a processor from its first answers.
// Closing a store whose open has not begun closes it without opening the
// database. Open ignores it.
func OpenAfter(start <-chan struct{}) Option { return func(o *options) { o.after = start } }

// LockDir is where the processes that use the store keep the lock files
// that tell each other they still run (see [Journal.Intend]). Processes
// recover each other's interrupted changes only when they share it. The
// default is the directory "locks" beside a SQLite database and, for
// PostgreSQL, in the user's data directory ([DefaultDir]): processes on
// other machines, or of other users, leave each other's changes alone.
func LockDir(dir string) Option { return func(o *options) { o.locks = dir } }

// Open opens the database dsn names and brings its schema up to date:
// "postgres://…" or "postgresql://…" is PostgreSQL; anything else is the path
// of a SQLite file, optionally written "sqlite:PATH", which is created (with
// its directory, 0700, and the file 0600) when missing. A database whose
// schema is newer than this program is refused.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	return open(ctx, dsn, migrations, opts...)
}

// OpenInBackground is Open that returns at once: the checks that need no
// database (the file's path, a URL's form) are made before it returns, the
// rest — connecting, WAL mode, the schema — in the background. Every use
// of the store waits for the open and, when it failed, fails with its
// error. A server opens its store this way to answer its first requests
// (the list of its tools needs no state) while the database opens.
func OpenInBackground(dsn string, opts ...Option) (*Store, error) {
	d, locks, connect, err := prepare(dsn, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{d: d, ready: make(chan struct{}), wanted: make(chan struct{}), closing: make(chan struct{}), now: time.Now, locks: locks}
	after := optionsOf(opts).after
	go func() {
		defer close(s.ready)
		if after != nil {
			select {
			case <-after:
			case <-s.wanted:
			case <-s.closing:
				s.openErr = errClosedUnopened
				return
			}
		}
		o, err := connect(context.Background(), migrations)
		if err != nil {
			s.openErr = err
			return
		}
		s.w, s.r, s.where = o.w, o.r, o.where
	}()
	return s, nil
}

func open(ctx context.Context, dsn string, ms []migration, opts ...Option) (*Store, error) {
	_, locks, connect, err := prepare(dsn, opts)
	if err != nil {
		return nil, err
	}
	s, err := connect(ctx, ms)
	if err != nil {
		return nil, err
	}
	s.locks = locks
	return s, nil
}

// prepare checks dsn and, for SQLite, makes the file; it returns the
// database's dialect, its lock directory (see LockDir; "" when there is no
// default one), and connect, which opens the database and brings its
// schema up to date.
func prepare(dsn string, opts []Option) (d dialect, locks string, connect func(context.Context, []migration) (*Store, error), err error) {
	o := optionsOf(opts)
	lower := strings.ToLower(dsn)
	var open func(context.Context) (*Store, error)
	switch {
	case strings.TrimSpace(dsn) == "":
		return d, "", nil, errors.New("no database given: use a file path or a postgres:// URL")
	case strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://"):
		d = postgresDialect
		open = func(ctx context.Context) (*Store, error) { return openPostgres(ctx, dsn) }
		if dir, err := DefaultDir(); err == nil {
			locks = filepath.Join(dir, "locks")
		}
	default:
		path, err := prepareSQLite(strings.TrimPrefix(dsn, "sqlite:"))
		if err != nil {
			return d, "", nil, err
		}
		d = sqliteDialect
		open = func(ctx context.Context) (*Store, error) { return openSQLite(ctx, path, o) }
		locks = filepath.Join(filepath.Dir(path), "locks")
	}
	if o.locks != "" {
		locks = o.locks
	}
	return d, locks, func(ctx context.Context, ms []migration) (*Store, error) {
		s, err := open(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.migrate(ctx, ms); err != nil {
			s.Close()
			return nil, fmt.Errorf("database %s: %w", s.where, err)
		}
		return s, nil
	}, nil
}

// prepareSQLite makes the database file at path, with its directory, when
// missing, and returns its absolute path.
func prepareSQLite(path string) (string, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("database %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("database %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("database %s is not a regular file: give the path of the database file, e.g. %s", path, filepath.Join(path, DefaultFile))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("database %s: %w", path, err)
	}
	f.Close()
	return path, nil
}

// openSQLite opens the database file at path, which prepareSQLite made.
func openSQLite(ctx context.Context, path string, o options) (*Store, error) {
	// A file: URI, so that no character of the path is read as a parameter.
	uri := (&url.URL{Scheme: "file", Path: path}).String()
	// In WAL mode, NORMAL writes each commit to the log before it returns
	// (so it survives the process) and fsyncs at checkpoints; FULL fsyncs
	// every commit.
	sync := "NORMAL"
	if o.sync {
		sync = "FULL"
	}
	// journal_mode is not among the parameters: enableWAL sets it once (it
	// is kept in the file), so that no connection the pools open later
	// needs the lock that switching it takes.
	params := fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=synchronous(%s)&_pragma=foreign_keys(1)&_pragma=temp_store(2)", busyTimeout.Milliseconds(), sync)
	w, err := sql.Open("sqlite", uri+params+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	s := &Store{d: sqliteDialect, w: w, where: path, now: time.Now}
	// The writer connects first: it turns WAL on before any reader opens.
	if err := enableWAL(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if s.r, err = sql.Open("sqlite", uri+params+"&_pragma=query_only(1)"); err != nil {
		w.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	s.r.SetMaxOpenConns(8)
	return s, nil
}

// busyTimeout is how long a SQLite connection waits for another's lock.
const busyTimeout = 10 * time.Second

// enableWAL connects w and switches the database to WAL mode. When several
// processes open a new database at once, SQLite can answer SQLITE_BUSY at
// once, without waiting in its busy handler (one connection switching the
// journal mode while another reads the header, or recovers or removes the
// log), so a busy answer is retried with a growing pause until busyTimeout.
func enableWAL(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(busyTimeout)
	pause := time.Millisecond
	for {
		_, err := w.ExecContext(ctx, "PRAGMA journal_mode=WAL")
		if err == nil || !isBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// isBusy tells whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		// The message of url.Error quotes the URL, password included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("database %s: not a valid PostgreSQL URL: %v", redactURL(dsn), err)
	}
	where := u.Redacted()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: not a valid PostgreSQL URL: %w", where, err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	// Tables are created in the first schema of the search path that
	// exists; say so plainly when none does.
	var schema sql.NullString
	var path string
	if err := db.QueryRowContext(ctx, "SELECT current_schema(), current_setting('search_path')").Scan(&schema, &path); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	if !schema.Valid {
		db.Close()
		return nil, fmt.Errorf("database %s: no schema of its search_path (%s) exists: create it (CREATE SCHEMA …) or leave search_path out to use public", where, path)
	}
	return &Store{d: postgresDialect, w: db, r: db, where: where, now: time.Now}, nil
}

// redactURL hides the password of a URL that url.Parse refuses.
func redactURL(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return "(PostgreSQL URL)"
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return dsn
	}
	user, _, hasPassword := strings.Cut(authority[:at], ":")
	if !hasPassword {
		return dsn
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// errClosedUnopened is the error of a use of a store closed before its
// open began (OpenAfter).
var errClosedUnopened = errors.New("the store was closed before it was opened")

// wait waits for a store opened in the background to be open, and begins
// the open if it waits for a first use (OpenAfter).
func (s *Store) wait(ctx context.Context) error {
	if s.ready == nil {
		return nil
	}
	s.wantOnce.Do(func() { close(s.wanted) })
	select {
	case <-s.ready:
		return s.openErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the database (waiting for an open in the background to end)
// and lets go of this process's lock (see Journal.Intend).
func (s *Store) Close() error {
	if s.ready != nil {
		s.closeOnce.Do(func() { close(s.closing) })
		<-s.ready
		if s.openErr != nil {
			return nil
		}
	}
	lerr := s.releaseProcess()
	if s.r == s.w {
		return errors.Join(lerr, s.w.Close())
	}
	return errors.Join(lerr, s.r.Close(), s.w.Close())
}

// Tx is a transaction of Write or Read. Queries use ? for their
// parameters, whichever the database.
type Tx struct {
	tx *sql.Tx
	d  dialect
}

// Exec runs a statement.
func (t *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.d.rebind(query), args...)
}

// Query runs a query that returns rows.
func (t *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.d.rebind(query), args...)
}

// QueryRow runs a query that returns at most one row.
func (t *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.d.rebind(query), args...)
}

// scanner is a row to scan: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// readAll runs query in a read transaction and returns one value per row,
// each made by scan.
func readAll[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	out := []T{}
	err := s.Read(ctx, func(tx *Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	return out, err
}

// Write runs fn in a write transaction and commits it when fn returns nil.
// On SQLite, write transactions run one at a time, across processes too. On
// PostgreSQL they run at READ COMMITTED; a writer that must see the latest
// state serializes on a row it updates first.
func (s *Store) Write(ctx context.Context, fn func(*Tx) error) error {
	return s.run(ctx, true, fn)
}

// Read runs fn in a read-only transaction that sees one consistent snapshot.
func (s *Store) Read(ctx context.Context, fn func(*Tx) error) error {
	return s.run(ctx, false, fn)
}

func (s *Store) run(ctx context.Context, write bool, fn func(*Tx) error) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	db, opts := s.w, (*sql.TxOptions)(nil)
	if !write {
		db, opts = s.r, s.d.readTx
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("database %s: %w", s.where, err)
	}
	if err := fn(&Tx{tx: tx, d: s.d}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("database %s: %w", s.where, err)
	}
	return nil
}
