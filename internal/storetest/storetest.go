// Package storetest runs tests against every database the store supports:
// SQLite always, PostgreSQL when TOOLBELT_TEST_POSTGRES_URL is set. Each test
// gets a database of its own (a file in a temp dir, or a fresh PostgreSQL
// schema), so tests run in parallel.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/toolbelt/toolbelt/store"
)

// PostgresEnv names the variable holding the URL of a PostgreSQL database
// the tests may create schemas in.
const PostgresEnv = "TOOLBELT_TEST_POSTGRES_URL"

// Run runs f as a parallel subtest per database ("sqlite", "postgres"), each
// with the DSN of a new, empty database.
func Run(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, filepath.Join(t.TempDir(), store.DefaultFile))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, Postgres(t))
	})
}

// Each is Run with the database opened.
func Each(t *testing.T, f func(t *testing.T, st *store.Store)) {
	t.Helper()
	Run(t, func(t *testing.T, dsn string) { f(t, Open(t, dsn)) })
}

// Open opens the database, closing it when the test ends. Stores opened on
// one DSN share a lock directory (store.LockDir), as processes on one
// machine do: beside a SQLite database, in a temporary directory of the
// test's for a PostgreSQL one.
func Open(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.LockDir(lockDir(t, dsn)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return st
}

// lockDir is the lock directory of the stores opened on dsn.
func lockDir(t testing.TB, dsn string) string {
	if !strings.HasPrefix(dsn, "postgres") {
		return filepath.Join(filepath.Dir(dsn), "locks")
	}
	sum := sha256.Sum256([]byte(dsn))
	dir := filepath.Join(os.TempDir(), "toolbelt-storetest-locks", hex.EncodeToString(sum[:8]))
	if _, loaded := lockDirs.LoadOrStore(dir, true); !loaded {
		// Removed after the stores opened on dsn close: cleanups run
		// last registered first, and this is the first store's.
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	return dir
}

// lockDirs are the lock directories lockDir made.
var lockDirs sync.Map

// Postgres makes a PostgreSQL schema for the test or benchmark and returns a
// DSN that uses it; the schema is dropped when the test ends. It skips the
// test when PostgresEnv is not set.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set: skipping the PostgreSQL run (set it to a postgres:// URL of a database the tests may create schemas in; .ci/run starts a server and sets it)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := "test_" + strings.ToLower(rand.Text()[:16])
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Count returns the number of rows in table.
func Count(t testing.TB, st *store.Store, table string) int {
	t.Helper()
	var n int
	ctx := context.Background()
	if err := st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
