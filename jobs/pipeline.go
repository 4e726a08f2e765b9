package jobs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgPipeline runs the statements run outside a transaction on PostgreSQL
// (backend.direct: the steps' reads and writes, Get, List, Cancel),
// coalescing those issued at once into one round trip, as River's completer does with its completions: the
// statements that arrive while a batch is on the wire wait, and go
// together in the next one, sent as a pgx batch (one write, one read of
// the results). A lone statement goes at once, so nothing waits on a
// timer. Round trips were most of the queue's CPU per job on PostgreSQL
// (bench/HISTORY.md, "Durable jobs on PostgreSQL: cross-job batching").
//
// A batch runs in one implicit transaction: its statements commit
// together at its end, and each one's result is handed back only after
// that commit. When the server refuses one statement (a PostgreSQL
// error), the batch rolls back and its statements are run again one by
// one, so that one job's bad statement fails only that job; when the
// connection fails, whether the batch committed is unknown and every
// statement in it reports the failure (a step is retried, as after any
// failed write; Cancel returns the error). A statement whose caller's
// context ended before its batch was sent is not sent. One batch is on
// the wire at a time, so two batches never wait on each other's row
// locks.
type pgPipeline struct {
	pool *pgxpool.Pool

	mu       sync.Mutex
	pending  []*pgStatement
	flushing bool
}

// pgBatchTimeout bounds one batch.
const pgBatchTimeout = 30 * time.Second

type pgStatement struct {
	ctx  context.Context // the caller's: ended, the statement is not sent
	sql  string
	args []any
	jobs bool // a query of jobColumns, whose rows are scanned

	n    int64 // rows affected (exec)
	rows []row // rows returned (jobs)
	err  error
	done chan struct{}
}

// run queues s, sends it with whatever else is waiting, and returns once
// its batch has committed (or ctx ended: the statement may still run if
// its batch was already sent).
func (p *pgPipeline) run(ctx context.Context, s *pgStatement) error {
	s.ctx, s.done = ctx, make(chan struct{})
	p.mu.Lock()
	p.pending = append(p.pending, s)
	if !p.flushing {
		p.flushing = true
		go p.flush()
	}
	p.mu.Unlock()
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush sends the waiting statements, batch after batch, until none wait.
func (p *pgPipeline) flush() {
	for {
		p.mu.Lock()
		batch := p.pending
		p.pending = nil
		if len(batch) == 0 {
			p.flushing = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.send(batch)
	}
}

// send runs batch's statements, whose callers still wait, in one round
// trip, and hands each its result.
func (p *pgPipeline) send(batch []*pgStatement) {
	defer func() {
		for _, s := range batch {
			close(s.done)
		}
	}()
	live := make([]*pgStatement, 0, len(batch))
	for _, s := range batch {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			continue
		}
		live = append(live, s)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pgBatchTimeout)
	defer cancel()
	var b pgx.Batch
	for _, s := range live {
		b.Queue(rebind(s.sql), s.args...)
	}
	br := p.pool.SendBatch(ctx, &b)
	var failed error
	for _, s := range live {
		if s.jobs {
			s.rows, s.err = scanJobs(br.Query())
		} else {
			var tag pgconn.CommandTag
			tag, s.err = br.Exec()
			s.n = tag.RowsAffected()
		}
		if failed == nil {
			failed = s.err
		}
	}
	// Close reads to the end of the batch, its commit. After a failure
	// the batch rolled back: none of it holds.
	if err := br.Close(); failed == nil {
		failed = err
	}
	var refused *pgconn.PgError
	switch {
	case failed == nil:
	case errors.As(failed, &refused) && len(live) > 1:
		// The server refused a statement, so the batch rolled back:
		// each runs again alone, and only the bad one fails.
		q := pgQuerier{p.pool}
		for _, s := range live {
			s.n, s.rows, s.err = 0, nil, nil
			if s.jobs {
				s.rows, s.err = q.jobs(ctx, s.sql, s.args...)
			} else {
				s.n, s.err = q.exec(ctx, s.sql, s.args...)
			}
		}
	default:
		for _, s := range live {
			s.err, s.n, s.rows = failed, 0, nil
		}
	}
}

// pgPipeQuerier is a querier whose statements go through the pipeline.
type pgPipeQuerier struct{ p *pgPipeline }

func (q pgPipeQuerier) exec(ctx context.Context, query string, args ...any) (int64, error) {
	s := &pgStatement{sql: query, args: args}
	if err := q.p.run(ctx, s); err != nil {
		return 0, err // s may still be written to after ctx ended
	}
	return s.n, nil
}

func (q pgPipeQuerier) jobs(ctx context.Context, query string, args ...any) ([]row, error) {
	s := &pgStatement{sql: query, args: args, jobs: true}
	if err := q.p.run(ctx, s); err != nil {
		return nil, err
	}
	return s.rows, nil
}
