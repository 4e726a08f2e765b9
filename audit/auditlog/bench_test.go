package auditlog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/store"
)

// benchDatabases are the databases benchmarks run on: SQLite, and
// PostgreSQL when TOOLBELT_TEST_POSTGRES_URL is set.
func benchDatabases(b *testing.B, f func(b *testing.B, st *store.Store)) {
	b.Run("sqlite", func(b *testing.B) {
		f(b, storetest.Open(b, filepath.Join(b.TempDir(), store.DefaultFile)))
	})
	if os.Getenv(storetest.PostgresEnv) != "" {
		b.Run("postgres", func(b *testing.B) { f(b, storetest.Open(b, storetest.Postgres(b))) })
	}
}

// BenchmarkAppend appends one record with arguments, policy verdicts and a
// confirmation: redaction, encoding, hashing and the write transaction.
func BenchmarkAppend(b *testing.B) {
	benchDatabases(b, func(b *testing.B, st *store.Store) {
		l := auditlog.New(st)
		r := full()
		b.ReportAllocs()
		for b.Loop() {
			if err := l.Append(context.Background(), r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkVerify10k verifies a log of 10,000 records.
func BenchmarkVerify10k(b *testing.B) {
	benchDatabases(b, func(b *testing.B, st *store.Store) {
		l := auditlog.New(st)
		for range 10_000 {
			appendAll(b, l, full())
		}
		b.ResetTimer()
		for b.Loop() {
			if sum, err := l.Verify(context.Background()); err != nil || sum.Records != 10_000 {
				b.Fatal(sum, err)
			}
		}
	})
}

// BenchmarkDurableAppend measures Append as a caller waits for it, from 8
// goroutines: "spool" returns once the record is written to the spool file
// (drained in the background), "commit" once it is committed to SQLite.
func BenchmarkDurableAppend(b *testing.B) {
	for _, path := range []string{"spool", "commit"} {
		b.Run(path, func(b *testing.B) {
			dir := b.TempDir()
			st := storetest.Open(b, filepath.Join(dir, store.DefaultFile))
			l := auditlog.New(st)
			var a interface {
				Append(context.Context, audit.Record) error
				lifecycle.Service
			}
			if path == "spool" {
				sp, err := l.Spool(filepath.Join(dir, "spool"), auditlog.SpoolOptions{})
				if err != nil {
					b.Fatal(err)
				}
				a = sp
			} else {
				a = l.Writer(auditlog.WriterOptions{})
			}
			ctx := context.Background()
			if err := a.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer a.Stop(ctx)
			r := full()
			b.SetParallelism(4)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := a.Append(context.Background(), r); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
}
