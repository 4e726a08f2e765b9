package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// versions returns the versions recorded in schema_migrations, in order.
func versions(t *testing.T, st *store.Store) []int {
	t.Helper()
	var vs []int
	err := st.Read(context.Background(), func(tx *store.Tx) error {
		rows, err := tx.Query(context.Background(), "SELECT version FROM schema_migrations ORDER BY version")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				return err
			}
			vs = append(vs, v)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func wantVersions(t *testing.T, st *store.Store, n int) {
	t.Helper()
	got := versions(t, st)
	if len(got) != n {
		t.Fatalf("schema versions %v, want 1…%d", got, n)
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("schema versions %v, want 1…%d", got, n)
		}
	}
}

func TestOpenAppliesMigrations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		wantVersions(t, st, store.SchemaVersion)
	})
}

func TestOpenUpgradesOlderDatabase(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		for n := 0; n < store.SchemaVersion; n++ {
			old, err := store.OpenAtVersion(ctx, dsn, n)
			if err != nil {
				t.Fatalf("opening at version %d: %v", n, err)
			}
			wantVersions(t, old, n)
			// Data written at version 1, as that version's program wrote
			// it, survives the later steps.
			if n == 1 {
				err := old.Write(ctx, func(tx *store.Tx) error {
					_, err := tx.Exec(ctx, "INSERT INTO outputs (call_id, created_ns, size, body) VALUES (?, ?, ?, ?)",
						"call-1", time.Now().UnixNano(), 20, []byte("kept across upgrades"))
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
		}
		st := storetest.Open(t, dsn)
		wantVersions(t, st, store.SchemaVersion)
		// Its origin was not recorded then: it is taken as from outside.
		if out, ok, err := st.Outputs(store.OutputOptions{}).Get(ctx, "call-1"); err != nil || !ok || out.Text != "kept across upgrades" || !out.Origin.IsExternal() {
			t.Fatalf("after the upgrade: %q from %+v, %v, %v", out.Text, out.Origin, ok, err)
		}
	})
}

func TestOpenRefusesNewerDatabase(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		future := store.SchemaVersion + 1
		err = st.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)", future)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		_, err = store.Open(ctx, dsn)
		want := fmt.Sprintf("the schema is at version %d, newer than this program knows (%d): use a newer toolbelt", future, store.SchemaVersion)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("opening a newer database: %v, want %q", err, want)
		}
	})
}

// TestConcurrentOpen opens one new database from several handles at once, as
// processes starting together do: each migration is applied once.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		var wg sync.WaitGroup
		stores := make([]*store.Store, 6)
		errs := make([]error, len(stores))
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = store.Open(context.Background(), dsn) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		wantVersions(t, stores[0], store.SchemaVersion)
	})
}

func TestOpenSQLiteFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "new", "data dir?#x")
	path := filepath.Join(dir, store.DefaultFile)
	st := storetest.Open(t, "sqlite:"+path)
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, os.ModeDir | 0o700}, {path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	err := st.Read(ctx, func(tx *store.Tx) error {
		var mode string
		var fk, busy int
		if err := tx.QueryRow(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			return err
		}
		if mode != "wal" || fk != 1 || busy == 0 {
			return fmt.Errorf("journal_mode %s, foreign_keys %d, busy_timeout %d", mode, fk, busy)
		}
		// Reads go to read-only connections.
		if _, err := tx.Exec(ctx, "DELETE FROM outputs"); err == nil {
			return errors.New("a read transaction could write")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL file: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, dsn, want string
		hide            string
	}{
		{"empty", " ", "no database given", ""},
		{"directory", dir, "is not a regular file: give the path of the database file, e.g. " + filepath.Join(dir, store.DefaultFile), ""},
		{"not sqlite", writeFile(t, "plain.txt", "this is not a database, just text that is long enough to be read as a header"), "plain.txt: file is not a database", ""},
		{"bad postgres URL", "postgres://user:hunter2@127.0.0.1:notaport/db", "database postgres://user:xxxxx@127.0.0.1:notaport/db: not a valid PostgreSQL URL", "hunter2"},
		{"postgres refusing", "postgresql://user:hunter2@127.0.0.1:1/db?connect_timeout=5", "database postgresql://user:xxxxx@127.0.0.1:1/db", "hunter2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := store.Open(context.Background(), tc.dsn)
			if err == nil {
				st.Close()
				t.Fatalf("opened %q", tc.dsn)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if tc.hide != "" && strings.Contains(err.Error(), tc.hide) {
				t.Errorf("error %q shows the password", err)
			}
			// Opened in the background: the same error, at once when no
			// database is needed to see it, else from the first use.
			bg, err := store.OpenInBackground(tc.dsn)
			if err == nil {
				err = bg.Write(context.Background(), func(*store.Tx) error { return nil })
				if cerr := bg.Close(); cerr != nil {
					t.Errorf("Close after a failed open: %v", cerr)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("in the background: error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestOpenInBackground: a store opened in the background works as one Open
// returned, once open; a use waiting for the open gives up with its context.
func TestOpenInBackground(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "deep", "state.db")
	st, err := store.OpenInBackground(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the file is not made before OpenInBackground returns: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Write(ctx, func(*store.Tx) error { return nil }); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled use: %v", err)
	}
	approveAndRead(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ok, _ := again.Approvals("/ws").Approved(context.Background(), "fp"); !ok {
		t.Error("the approval is not in the file")
	}
}

// approveAndRead writes an approval through st and reads it back, and
// checks that st's schema is up to date: a store that works.
func approveAndRead(t *testing.T, st *store.Store) {
	t.Helper()
	a := st.Approvals("/ws")
	if err := a.Approve(context.Background(), "fp", "exec", "me"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Approved(context.Background(), "fp"); !ok || err != nil {
		t.Errorf("Approved = %v, %v", ok, err)
	}
	wantVersions(t, st, store.SchemaVersion)
}

// TestOpenAfter: a store opened with OpenAfter leaves the database alone
// until start is closed or the store is first used, whichever comes first;
// closed before either, it never opens it.
func TestOpenAfter(t *testing.T) {
	t.Parallel()
	// untouched says whether the database is as prepare left it: an empty
	// file, no write-ahead log.
	untouched := func(path string) bool {
		fi, err := os.Stat(path)
		_, walErr := os.Stat(path + "-wal")
		return err == nil && fi.Size() == 0 && errors.Is(walErr, os.ErrNotExist)
	}
	open := func(t *testing.T) (string, *store.Store, chan struct{}) {
		path := filepath.Join(t.TempDir(), "state.db")
		start := make(chan struct{})
		st, err := store.OpenInBackground(path, store.OpenAfter(start))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if !untouched(path) {
			t.Fatal("the database was opened before start or a use")
		}
		return path, st, start
	}
	t.Run("start", func(t *testing.T) {
		t.Parallel()
		path, st, start := open(t)
		defer st.Close()
		close(start)
		for deadline := time.Now().Add(10 * time.Second); untouched(path); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("start was closed, the database was not opened")
			}
		}
		wantVersions(t, st, store.SchemaVersion)
	})
	t.Run("first use", func(t *testing.T) {
		t.Parallel()
		_, st, _ := open(t)
		defer st.Close()
		approveAndRead(t, st)
	})
	t.Run("closed first", func(t *testing.T) {
		t.Parallel()
		path, st, start := open(t)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		close(start)
		time.Sleep(100 * time.Millisecond)
		if !untouched(path) {
			t.Error("a store closed before its open began opened the database")
		}
		if _, err := st.Approvals("/ws").Approved(context.Background(), "fp"); err == nil {
			t.Error("a use after Close succeeded")
		}
	})
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDefaultDir cannot run in parallel: it sets environment variables.
func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ xdg, want string }{
		{"/srv/data", "/srv/data/toolbelt"},
		{"", filepath.Join(home, ".local", "share", "toolbelt")},
		{"relative/dir", filepath.Join(home, ".local", "share", "toolbelt")},
	} {
		t.Setenv("XDG_DATA_HOME", tc.xdg)
		got, err := store.DefaultDir()
		if err != nil || got != tc.want {
			t.Errorf("XDG_DATA_HOME=%q: %q, %v; want %q", tc.xdg, got, err, tc.want)
		}
	}
}

// TestConcurrentWriters writes from many goroutines through two handles on
// one database, as two processes would: no write is lost or refused.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b := storetest.Open(t, dsn).Outputs(store.OutputOptions{}), storetest.Open(t, dsn).Outputs(store.OutputOptions{})
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 64 {
			o := a
			if i%2 == 1 {
				o = b
			}
			wg.Go(func() { errs <- o.Put(ctx, fmt.Sprintf("call-%d", i), strings.Repeat("x", i)) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for i := range 64 {
			if out, ok, err := b.Get(ctx, fmt.Sprintf("call-%d", i)); err != nil || !ok || out.Text != strings.Repeat("x", i) {
				t.Fatalf("call-%d: %q, %v, %v", i, out.Text, ok, err)
			}
		}
	})
}

func TestWriteRollsBackOnError(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		boom := errors.New("boom")
		err := st.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO outputs (call_id, created_ns, size, body) VALUES (?, ?, ?, ?)", "c", 1, 1, []byte("x")); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Write returned %v, want fn's error", err)
		}
		var n int
		if err := st.Read(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT COUNT(*) FROM outputs").Scan(&n)
		}); err != nil || n != 0 {
			t.Fatalf("after a failed Write: %d rows, %v", n, err)
		}
	})
}

// TestPostgresMissingSchema: a search_path naming no existing schema is
// refused when the store opens, with what to do about it.
func TestPostgresMissingSchema(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	i := strings.Index(dsn, "search_path=")
	dsn = dsn[:i] + "search_path=no_such_schema"
	st, err := store.Open(context.Background(), dsn)
	if err == nil {
		st.Close()
		t.Fatal("opened a database whose search_path names no schema")
	}
	if want := "no schema of its search_path (no_such_schema) exists: create it (CREATE SCHEMA …) or leave search_path out to use public"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

func TestSyncCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		opts []store.Option
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{nil, 1}, {[]store.Option{store.SyncCommits()}, 2}} {
		st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.DefaultFile), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		err = st.Write(ctx, func(tx *store.Tx) error { return tx.QueryRow(ctx, "PRAGMA synchronous").Scan(&got) })
		st.Close()
		if err != nil || got != c.want {
			t.Errorf("synchronous = %d (%v), want %d", got, err, c.want)
		}
	}
}

// TestOpenUpToDateWhileAnotherWrites: opening a database that is already
// at the latest version reads the version and needs no write transaction,
// so it does not wait for another process's write to end (a server starts
// while another holds the write lock). Were Open to take the write lock it
// would wait for that write, which waits for Open: the open would fail when
// SQLite's busy timeout ran out.
func TestOpenUpToDateWhileAnotherWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), store.DefaultFile)
	writer := storetest.Open(t, dsn)
	opened := make(chan error, 1)
	err := writer.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO outputs (call_id, created_ns, size, body) VALUES (?, ?, ?, ?)", "c", 1, 1, []byte("x")); err != nil {
			return err
		}
		go func() {
			st, err := store.Open(ctx, dsn)
			if err == nil {
				err = st.Close()
			}
			opened <- err
		}()
		return <-opened
	})
	if err != nil {
		t.Fatalf("opening an up-to-date database during another write: %v", err)
	}
}
