package jobs

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolbelt/toolbelt/internal/storetest"
)

// batchCounter counts the batches a pool sends.
type batchCounter struct{ n atomic.Int64 }

func (c *batchCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (*batchCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (*batchCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (*batchCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (*batchCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// pipelineOn returns a pipeline on a PostgreSQL schema of the test's own
// with a table t (id, v), and the count of the batches it sends.
func pipelineOn(t *testing.T) (*pgPipeline, *batchCounter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(storetest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	bc := &batchCounter{}
	cfg.ConnConfig.Tracer = bc
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	return &pgPipeline{pool: pool}, bc
}

// TestPipelineSharesRoundTrips: statements issued at once by many
// goroutines all run, each with its own result, in fewer batches than
// statements.
func TestPipelineSharesRoundTrips(t *testing.T) {
	t.Parallel()
	p, bc := pipelineOn(t)
	q := pgPipeQuerier{p}
	ctx := context.Background()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			got, err := q.exec(ctx, "INSERT INTO t (id, v) VALUES (?, ?) ON CONFLICT (id) DO NOTHING", i%100, fmt.Sprint(i))
			if err != nil {
				errs <- err
				return
			}
			if got > 1 {
				errs <- fmt.Errorf("insert %d: %d rows affected", i, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var sum int64
	if err := p.pool.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&sum); err != nil || sum != 100 {
		t.Fatalf("rows = %d, %v; want 100", sum, err)
	}
	if b := bc.n.Load(); b >= n {
		t.Errorf("%d statements went in %d batches: none shared a round trip", n, b)
	}
}

// TestPipelineFailedBatchHoldsNothing: when one statement of a batch
// fails, the batch rolls back and every statement in it reports the
// failure, so no caller takes a write for done that is not.
func TestPipelineFailedBatchHoldsNothing(t *testing.T) {
	t.Parallel()
	p, _ := pipelineOn(t)
	ctx := context.Background()
	if _, err := (pgPipeQuerier{p}).exec(ctx, "INSERT INTO t (id, v) VALUES (?, ?)", 1, "one"); err != nil {
		t.Fatal(err)
	}
	batch := []*pgStatement{
		{sql: "UPDATE t SET v = ? WHERE id = ?", args: []any{"changed", 1}},
		{sql: "INSERT INTO t (id, v) VALUES (?, ?)", args: []any{2, "two"}},
		{sql: "INSERT INTO t (id, v) VALUES (?, ?)", args: []any{1, "duplicate"}}, // fails
		{sql: "SELECT v FROM t WHERE id = ?", args: []any{1}},
	}
	for _, s := range batch {
		s.done = make(chan struct{})
	}
	p.send(batch)
	for i, s := range batch {
		if s.err == nil || !strings.Contains(s.err.Error(), "duplicate key") {
			t.Errorf("statement %d: err = %v, want the batch's duplicate key", i, s.err)
		}
		if s.n != 0 {
			t.Errorf("statement %d: %d rows affected reported for a rolled back batch", i, s.n)
		}
		select {
		case <-s.done:
		default:
			t.Errorf("statement %d: not marked done", i)
		}
	}
	var v string
	var rows int
	if err := p.pool.QueryRow(ctx, "SELECT min(v), count(*) FROM t").Scan(&v, &rows); err != nil || v != "one" || rows != 1 {
		t.Fatalf("after the failed batch: v = %q, rows = %d, %v; want the row as it was", v, rows, err)
	}
	// The pipeline works on.
	if n, err := (pgPipeQuerier{p}).exec(ctx, "UPDATE t SET v = ? WHERE id = ?", "after", 1); err != nil || n != 1 {
		t.Fatalf("after a failed batch: %d, %v", n, err)
	}
}
