package jobs

import (
	"context"
	"errors"
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

// TestPipelineFailedStatementFailsAlone: when the server refuses one
// statement of a batch, the batch rolls back and its statements run again
// one by one, so only the bad one fails and the others hold; a statement
// whose caller gave up before its batch was sent is not run.
func TestPipelineFailedStatementFailsAlone(t *testing.T) {
	t.Parallel()
	p, _ := pipelineOn(t)
	ctx := context.Background()
	if _, err := (pgPipeQuerier{p}).exec(ctx, "INSERT INTO t (id, v) VALUES (?, ?)", 1, "one"); err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	batch := []*pgStatement{
		{ctx: ctx, sql: "UPDATE t SET v = ? WHERE id = ?", args: []any{"changed", 1}},
		{ctx: ctx, sql: "INSERT INTO t (id, v) VALUES (?, ?)", args: []any{2, "two"}},
		{ctx: ctx, sql: "INSERT INTO t (id, v) VALUES (?, ?)", args: []any{1, "duplicate"}}, // refused
		{ctx: gone, sql: "INSERT INTO t (id, v) VALUES (?, ?)", args: []any{3, "three"}},    // not sent
		{ctx: ctx, sql: "UPDATE t SET v = v || '!' WHERE id = ?", args: []any{2}},
	}
	for _, s := range batch {
		s.done = make(chan struct{})
	}
	p.send(batch)
	for i, s := range batch {
		select {
		case <-s.done:
		default:
			t.Errorf("statement %d: not marked done", i)
		}
		switch i {
		case 2:
			if s.err == nil || !strings.Contains(s.err.Error(), "duplicate key") {
				t.Errorf("the refused statement: err = %v, want its duplicate key", s.err)
			}
		case 3:
			if !errors.Is(s.err, context.Canceled) {
				t.Errorf("the abandoned statement: err = %v", s.err)
			}
		default:
			if s.err != nil || s.n != 1 {
				t.Errorf("statement %d: %d rows, %v; want it to hold", i, s.n, s.err)
			}
		}
	}
	var got []string
	rows, err := p.pool.Query(ctx, "SELECT v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if rows.Err() != nil || strings.Join(got, ",") != "changed,two!" {
		t.Fatalf("after the batch: %q, %v; want changed,two!", got, rows.Err())
	}
}
