// Package jobs runs the work of async tools as durable jobs, on River
// (github.com/riverqueue/river) in the store's database: the same SQLite
// file as the store, or the same PostgreSQL database, where several
// processes share the work (River's job locking and leader election).
//
// A call of an async tool (a tool with [tool.Tool.Async] set) records a job
// and returns at once with a pending result. River then works the job in
// steps: a submission (the handler's Submit, with an idempotency key, since
// a step may run again after a crash), then polls at the tool's interval
// (polling tools) or a wait for a verified webhook (webhook tools). A job
// finishes exactly once: the change of its row to a final status is
// conditional, and only the step that makes it reports the completion.
//
// Jobs are rows of async_jobs (a store migration) with a task id, the tool,
// a status (pending, processing, completed, failed, cancelled), progress
// 0–100 with a message, the result, and the session and workspace of the
// call that started them.
package jobs

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// The statuses of a job.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
)

// Config configures a Queue. Zero fields take the defaults.
type Config struct {
	// Workers is how many job steps run at once in this process
	// (DefaultWorkers).
	Workers int
	// StepTimeout bounds one step (a poll; a submission with the poll
	// that follows it at once) (1 minute). A step of a process that died
	// is taken over by another once it has been running this long plus a
	// margin.
	StepTimeout time.Duration
	// WebhookSecret verifies webhooks ("whsec_" and base64, the Standard
	// Webhooks form). Without it webhooks are refused.
	WebhookSecret string
	// PublicURL is the base URL the webhook paths are reached at
	// ("https://tools.example.com"); a webhook tool's Submit receives it
	// joined with its path. "" passes no URL.
	PublicURL string
	// NodeID names this process among those sharing the database
	// (default: a random id).
	NodeID string
	// Logger receives what River and the queue log (slog.Default()).
	Logger *slog.Logger
	// Run, when false, makes a queue that records and reads jobs but works
	// none (the CLI's `toolbelt jobs`).
	Run bool
	// FetchCooldown is the least time between two of River's fetches of
	// jobs to work (DefaultFetchCooldown); a fetch takes at most as many
	// jobs as there are free workers, so Workers / FetchCooldown bounds
	// the steps started per second.
	FetchCooldown time.Duration
	// FetchPollInterval is how often River looks for jobs it was not told
	// of (DefaultFetchPollInterval): on SQLite, which has no notifications,
	// how long a job queued by another process may wait.
	FetchPollInterval time.Duration
	// Retention is how long a finished job, with the webhook deliveries it
	// took, is kept (default DefaultRetention). A working queue prunes the
	// older ones at its start and every hour.
	Retention time.Duration
}

// The defaults of Config. The worker count and River's fetch cooldown
// were chosen from a sweep of draining 5,000 queued jobs on SQLite and
// PostgreSQL beside bare River (bench/HISTORY.md, "Durable jobs"): a
// fetch takes at most the free workers' worth of jobs, so River's
// defaults (100 ms) with 10 workers started at most 100 steps a second.
const (
	DefaultWorkers           = 25
	DefaultFetchCooldown     = 20 * time.Millisecond
	DefaultFetchPollInterval = 200 * time.Millisecond
	DefaultStepTimeout       = time.Minute
	DefaultRetention         = 30 * 24 * time.Hour
)

// Queue is a handle on the jobs of one database. It is safe for
// concurrent use. A queue opened with Run is a
// [github.com/toolbelt/toolbelt/lifecycle.Service]: Start starts working
// jobs, Stop stops (any queue's Stop closes its database).
type Queue struct {
	b   backend
	cfg Config
	log *slog.Logger
	now func() time.Time

	mu    sync.RWMutex
	tools map[string]tool.Tool // async tools by name
	hooks map[string]string    // webhook path → tool name
	subs  map[*subscriber]struct{}

	// events orders what publish sends: announcing holds, for each job
	// whose submission (Submit, Retry) is committing, the job's events
	// published before its submitted event. A worker may run the job as
	// soon as the transaction commits, before the submitter has published
	// that the job was submitted; subscribers see submitted first.
	events     sync.Mutex
	announcing map[string]*held

	life       sync.Mutex // guards started and stopped, held by Start and Stop
	started    bool
	stopped    bool
	stopPrunes context.CancelFunc
	prunes     sync.WaitGroup
}

// Open opens the jobs of the database dsn names (as store.Open reads it),
// bringing the store's schema and River's up to date.
func Open(ctx context.Context, dsn string, cfg Config) (*Queue, error) {
	cfg.Workers = cmp.Or(cfg.Workers, DefaultWorkers)
	cfg.StepTimeout = cmp.Or(cfg.StepTimeout, DefaultStepTimeout)
	cfg.Retention = cmp.Or(cfg.Retention, DefaultRetention)
	cfg.FetchCooldown = cmp.Or(cfg.FetchCooldown, DefaultFetchCooldown)
	cfg.FetchPollInterval = cmp.Or(cfg.FetchPollInterval, DefaultFetchPollInterval)
	if cfg.NodeID == "" {
		cfg.NodeID = randid.New("toolbelt_", 6)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WebhookSecret != "" {
		if err := stdwebhook.CheckSecret(cfg.WebhookSecret); err != nil {
			return nil, err
		}
	}
	// The store's migrations make async_jobs.
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	st.Close()
	q := &Queue{cfg: cfg, log: cfg.Logger, now: time.Now, tools: map[string]tool.Tool{}, hooks: map[string]string{}, subs: map[*subscriber]struct{}{}, announcing: map[string]*held{}}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[jobArgs]) error {
		return q.work(ctx, job.JobRow, job.Args.TaskID, job.Args.Round)
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[submitArgs]) error {
		return q.work(ctx, job.JobRow, job.Args.TaskID, job.Args.Round)
	}))
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[pollArgs]) error {
		return q.work(ctx, job.JobRow, job.Args.TaskID, job.Args.Round)
	}))
	rc := &river.Config{
		ID:                   cfg.NodeID,
		Logger:               quiet(cfg.Logger),
		JobTimeout:           cfg.StepTimeout,
		RescueStuckJobsAfter: cfg.StepTimeout + 10*time.Second,
		RetryPolicy:          retryPolicy{},
		FetchCooldown:        cfg.FetchCooldown,
		FetchPollInterval:    cfg.FetchPollInterval,
		Workers:              workers,
	}
	if cfg.Run {
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}}
	}
	if q.b, err = openBackend(ctx, dsn, rc); err != nil {
		return nil, err
	}
	return q, nil
}

// quiet passes River's logs on at warning level and above: its
// informational lines are about its own machinery.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{l.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// Register makes the queue work the jobs of async tools: tools without
// Async are ignored. A webhook path already taken by another tool is an
// error.
func (q *Queue) Register(tools ...tool.Tool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, t := range tools {
		if t.Async == nil {
			continue
		}
		if err := t.Check(); err != nil {
			return err
		}
		if p := t.Async.WebhookPath; p != "" {
			if other, ok := q.hooks[p]; ok && other != t.Name {
				return fmt.Errorf("async tools %s and %s both use webhook path %s: give each its own", other, t.Name, p)
			}
			q.hooks[p] = t.Name
		}
		q.tools[t.Name] = t
	}
	return nil
}

// Start starts working jobs (a queue opened with Run) and returns; ctx
// bounds starting only: the queue works jobs until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if !q.cfg.Run {
		return errors.New("jobs: this queue was opened without Run: it records jobs but works none")
	}
	q.life.Lock()
	defer q.life.Unlock()
	switch {
	case q.stopped:
		return errors.New("jobs: the queue is stopped")
	case q.started:
		return errors.New("jobs: the queue is started already")
	}
	life := context.WithoutCancel(ctx)
	if err := q.b.start(life); err != nil {
		return fmt.Errorf("jobs: starting River: %w", err)
	}
	q.started = true
	life, q.stopPrunes = context.WithCancel(life)
	q.prunes.Go(func() { q.pruneEvery(life, time.Hour) })
	return nil
}

// pruneEvery prunes the jobs past their retention now and then every
// interval, until ctx ends.
func (q *Queue) pruneEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := q.Prune(ctx, q.now().Add(-q.cfg.Retention))
		switch {
		case err != nil && ctx.Err() == nil:
			q.log.Warn("jobs: pruning finished jobs", "err", err)
		case n > 0:
			q.log.Info("jobs: pruned finished jobs", "jobs", n, "retention", q.cfg.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Prune deletes the jobs that finished (completed, failed or cancelled)
// before before, with the webhook deliveries they took, and returns how
// many jobs. Jobs still pending or processing are kept, however old.
func (q *Queue) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	cut := before.UnixNano()
	err := q.b.tx(ctx, func(qr querier, _ enqueueFunc) error {
		if _, err := qr.exec(ctx, "DELETE FROM async_webhooks WHERE task_id IN (SELECT task_id FROM async_jobs WHERE completed_ns IS NOT NULL AND completed_ns < ?)", cut); err != nil {
			return err
		}
		var err error
		n, err = qr.exec(ctx, "DELETE FROM async_jobs WHERE completed_ns IS NOT NULL AND completed_ns < ?", cut)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("jobs: pruning finished jobs: %w", err)
	}
	return n, nil
}

// Stop stops working jobs — steps running are given until ctx ends to
// finish, then cancelled (a step cut short runs again later) — ends the
// subscriptions and closes the database. It is idempotent and safe on a
// queue that never started ([github.com/toolbelt/toolbelt/lifecycle.Service]).
func (q *Queue) Stop(ctx context.Context) error {
	q.life.Lock()
	defer q.life.Unlock()
	if q.stopped {
		return nil
	}
	q.stopped = true
	var err error
	if q.started {
		q.stopPrunes()
		q.prunes.Wait()
		err = q.b.stop(ctx)
	}
	q.b.close()
	q.mu.Lock()
	for s := range q.subs {
		s.close()
	}
	q.subs = map[*subscriber]struct{}{}
	q.mu.Unlock()
	return err
}

// SetPublicURL sets the base URL webhook URLs are made from, when the
// configuration gave none (a server learns its address once it listens).
func (q *Queue) SetPublicURL(u string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cfg.PublicURL == "" {
		q.cfg.PublicURL = u
	}
}

func (q *Queue) publicURL() string {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.cfg.PublicURL
}

// Retention is how long a finished job is kept (Config.Retention).
func (q *Queue) Retention() time.Duration { return q.cfg.Retention }

// Backend names the database kind: "sqlite" or "postgres".
func (q *Queue) Backend() string { return q.b.name() }

// WebhookPaths returns the webhook paths of the registered tools.
func (q *Queue) WebhookPaths() []string {
	q.mu.RLock()
	defer q.mu.RUnlock()
	out := make([]string, 0, len(q.hooks))
	for p := range q.hooks {
		out = append(out, p)
	}
	return out
}

func (q *Queue) toolNamed(name string) (tool.Tool, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	t, ok := q.tools[name]
	return t, ok
}

// jobArgs are the args of the one River job that works an async job: its
// submission, then (polling tools) its polls, the River job snoozing for
// the polling interval between them. Round tells apart the runs of a job
// that was retried. One River job, not one per step: each River job costs
// a fetch, a completion and its row, which was half of the drain rate
// and most of River's CPU per job when the poll was a second job (see
// bench/HISTORY.md, "Durable jobs").
type jobArgs struct {
	TaskID     string `json:"taskId"`
	Round      int64  `json:"round"`
	IntervalMS int64  `json:"intervalMs,omitempty"`
}

func (jobArgs) Kind() string { return "toolbelt_async" }

// submitArgs and pollArgs are the River jobs of earlier versions, a job's
// submission and its polls; they are still worked, the same way as
// jobArgs, so jobs an earlier version queued finish.
type submitArgs struct {
	TaskID string `json:"taskId"`
	Round  int64  `json:"round"`
}

func (submitArgs) Kind() string { return "toolbelt_async_submit" }

type pollArgs struct {
	TaskID     string `json:"taskId"`
	Round      int64  `json:"round"`
	IntervalMS int64  `json:"intervalMs"`
}

func (pollArgs) Kind() string { return "toolbelt_async_poll" }

// enqueueJob inserts the River job that works the job of taskID. Each
// step has its budget of attempts (see stepFailed); River's, which
// counts the attempts of both, is their sum, and its last attempt fails
// the job whatever failed (see work).
func enqueueJob(enqueue enqueueFunc, taskID string, round int64, spec tool.AsyncSpec) error {
	a := jobArgs{TaskID: taskID, Round: round}
	if spec.Type == tool.AsyncPolling {
		a.IntervalMS = spec.PollingInterval.Milliseconds()
	}
	return enqueue(a, &river.InsertOpts{MaxAttempts: 2 * (spec.MaxRetries + 1)})
}

// retryPolicy retries a failed step after an exponential backoff: from
// the polling interval (polling tools) or a second (webhook tools),
// doubling, at most 5 minutes.
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	base := time.Second
	var a jobArgs // pollArgs and submitArgs decode into it too
	if json.Unmarshal(job.EncodedArgs, &a) == nil && a.IntervalMS > 0 {
		base = time.Duration(a.IntervalMS) * time.Millisecond
	}
	d := base
	for i := 1; i < len(job.Errors)+1 && d < 5*time.Minute; i++ {
		d *= 2
	}
	return time.Now().Add(min(d, 5*time.Minute))
}

// Submit records a job for call of the async tool t, run in scope, and
// enqueues its submission; it implements [tool.Jobs].
func (q *Queue) Submit(ctx context.Context, t *tool.Tool, call tool.Call, scope tool.Scope) (tool.JobInfo, error) {
	if t.Async == nil {
		return tool.JobInfo{}, fmt.Errorf("tool %s is not async", t.Name)
	}
	spec := t.Async.WithDefaults()
	now := q.now()
	j := tool.JobInfo{
		TaskID: tool.NewCallID("task"), Tool: t.Name, Status: StatusPending, CreatedAt: now,
		Session: scope.Session, Workspace: scope.Workspace, CallID: call.ID, AsyncType: spec.Type,
		EstimatedTime: spec.EstimatedTime.Seconds(),
	}
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	q.announce(j.TaskID)
	err := q.b.tx(ctx, func(qr querier, enqueue enqueueFunc) error {
		if _, err := qr.exec(ctx, `INSERT INTO async_jobs (task_id, tool, workspace, session_key, call_id, async_type, webhook_path, arguments,
			status, progress, message, external_id, result, error, round, estimated_ms, created_ns, updated_ns, completed_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', '', NULL, '', 0, ?, ?, ?, NULL)`,
			j.TaskID, j.Tool, j.Workspace, j.Session, j.CallID, string(spec.Type), spec.WebhookPath, string(args),
			StatusPending, spec.EstimatedTime.Milliseconds(), now.UnixNano(), now.UnixNano()); err != nil {
			return err
		}
		return enqueueJob(enqueue, j.TaskID, 0, spec)
	})
	if err != nil {
		q.announced(j.TaskID, nil)
		return tool.JobInfo{}, fmt.Errorf("recording the job: %w", err)
	}
	q.announced(j.TaskID, &tool.JobEvent{Type: tool.JobSubmitted, Job: j})
	return j, nil
}

const jobColumns = `task_id, tool, workspace, session_key, call_id, async_type, status, progress, message, external_id,
	result, error, round, estimated_ms, created_ns, completed_ns, arguments`

// row is a job as stored.
type row struct {
	tool.JobInfo
	externalID string
	round      int64
	arguments  string
}

func scanJobs(r rows, err error) ([]row, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []row
	for r.Next() {
		var (
			j         row
			asyncType string
			result    sql.NullString
			estMS     int64
			created   int64
			completed sql.NullInt64
		)
		if err := r.Scan(&j.TaskID, &j.Tool, &j.Workspace, &j.Session, &j.CallID, &asyncType, &j.Status, &j.Progress, &j.Message,
			&j.externalID, &result, &j.Error, &j.round, &estMS, &created, &completed, &j.arguments); err != nil {
			return nil, err
		}
		j.AsyncType = tool.AsyncType(asyncType)
		if result.Valid {
			j.Result = json.RawMessage(result.String)
		}
		j.EstimatedTime = float64(estMS) / 1000
		j.CreatedAt = time.Unix(0, created)
		if completed.Valid {
			t := time.Unix(0, completed.Int64)
			j.CompletedAt = &t
		}
		out = append(out, j)
	}
	return out, r.Err()
}

// ErrNotFound is returned for a task id no job has (in the caller's scope).
var ErrNotFound = errors.New("no such job")

func (q *Queue) load(ctx context.Context, qr querier, taskID string) (row, error) {
	rs, err := qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE task_id = ?", taskID)
	if err != nil {
		return row{}, err
	}
	if len(rs) == 0 {
		return row{}, fmt.Errorf("job %s: %w", taskID, ErrNotFound)
	}
	return rs[0], nil
}

// Get returns the job of that task id, whatever its scope (for the CLI and
// the embedding program).
func (q *Queue) Get(ctx context.Context, taskID string) (tool.JobInfo, error) {
	var r row
	err := q.b.direct(ctx, func(qr querier) (err error) {
		r, err = q.load(ctx, qr, taskID)
		return err
	})
	return r.JobInfo, err
}

// visible says whether a call in scope may see job j: jobs of the same
// workspace, and of the same session when the call has one.
func visible(scope tool.Scope, j tool.JobInfo) bool {
	if j.Workspace != scope.Workspace {
		return false
	}
	return scope.Session == "" || j.Session == scope.Session
}

// Job returns the job of that task id when scope may see it; it
// implements [tool.Jobs].
func (q *Queue) Job(ctx context.Context, scope tool.Scope, taskID string) (tool.JobInfo, error) {
	j, err := q.Get(ctx, taskID)
	if err == nil && !visible(scope, j) {
		return tool.JobInfo{}, fmt.Errorf("job %s: %w", taskID, ErrNotFound)
	}
	return j, err
}

// Filter selects jobs for List.
type Filter struct {
	// Session and Workspace, when set, keep the jobs of that session or
	// workspace; Status of that status.
	Session, Workspace, Status string
	// Limit bounds the number of jobs (newest first); 0 means 100.
	Limit int
}

// List returns jobs, newest first.
func (q *Queue) List(ctx context.Context, f Filter) ([]tool.JobInfo, error) {
	where := []string{"1 = 1"}
	var args []any
	for _, c := range []struct{ col, v string }{{"session_key", f.Session}, {"workspace", f.Workspace}, {"status", f.Status}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	args = append(args, cmp.Or(f.Limit, 100))
	var rs []row
	err := q.b.direct(ctx, func(qr querier) (err error) {
		rs, err = qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE "+strings.Join(where, " AND ")+" ORDER BY created_ns DESC, task_id LIMIT ?", args...)
		return err
	})
	out := make([]tool.JobInfo, len(rs))
	for i, r := range rs {
		out[i] = r.JobInfo
	}
	return out, err
}

// Pending returns the jobs of session that have not finished.
func (q *Queue) Pending(ctx context.Context, session string) ([]tool.JobInfo, error) {
	var rs []row
	err := q.b.direct(ctx, func(qr querier) (err error) {
		rs, err = qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE session_key = ? AND status IN (?, ?) ORDER BY created_ns", session, StatusPending, StatusProcessing)
		return err
	})
	out := make([]tool.JobInfo, len(rs))
	for i, r := range rs {
		out[i] = r.JobInfo
	}
	return out, err
}

// Finished returns the jobs of session that finished (completed, failed or
// cancelled) at or after since, oldest first.
func (q *Queue) Finished(ctx context.Context, session string, since time.Time) ([]tool.JobInfo, error) {
	var rs []row
	err := q.b.direct(ctx, func(qr querier) (err error) {
		rs, err = qr.jobs(ctx, "SELECT "+jobColumns+" FROM async_jobs WHERE session_key = ? AND status IN (?, ?, ?) AND completed_ns >= ? ORDER BY completed_ns",
			session, StatusCompleted, StatusFailed, StatusCancelled, since.UnixNano())
		return err
	})
	out := make([]tool.JobInfo, len(rs))
	for i, r := range rs {
		out[i] = r.JobInfo
	}
	return out, err
}

// Cancel cancels a job of scope that has not finished; it implements
// [tool.Jobs].
func (q *Queue) Cancel(ctx context.Context, scope tool.Scope, taskID string) (tool.JobInfo, error) {
	if _, err := q.Job(ctx, scope, taskID); err != nil {
		return tool.JobInfo{}, err
	}
	return q.CancelAny(ctx, taskID)
}

// CancelAny cancels the job of that id whatever its scope. A job that has
// finished is returned unchanged with an error saying so.
func (q *Queue) CancelAny(ctx context.Context, taskID string) (tool.JobInfo, error) {
	j, changed, err := q.finish(ctx, taskID, -1, StatusCancelled, tool.AsyncStatus{Message: "cancelled"})
	if err != nil {
		return j, err
	}
	if !changed {
		return j, fmt.Errorf("job %s has already finished (%s): nothing to cancel", taskID, j.Status)
	}
	return j, nil
}

// Retry runs a failed or cancelled job again from its submission, with a
// new idempotency key.
func (q *Queue) Retry(ctx context.Context, taskID string) (tool.JobInfo, error) {
	var j row
	q.announce(taskID)
	err := q.b.tx(ctx, func(qr querier, enqueue enqueueFunc) error {
		var err error
		if j, err = q.load(ctx, qr, taskID); err != nil {
			return err
		}
		if j.Status != StatusFailed && j.Status != StatusCancelled {
			return fmt.Errorf("job %s is %s: only a failed or cancelled job can be retried", taskID, j.Status)
		}
		spec := tool.AsyncSpec{Type: j.AsyncType}.WithDefaults()
		if t, ok := q.toolNamed(j.Tool); ok {
			spec = t.Async.WithDefaults()
		}
		now := q.now().UnixNano()
		if _, err := qr.exec(ctx, `UPDATE async_jobs SET status = ?, progress = 0, message = '', external_id = '', result = NULL, error = '',
			round = round + 1, updated_ns = ?, completed_ns = NULL WHERE task_id = ?`, StatusPending, now, taskID); err != nil {
			return err
		}
		if j, err = q.load(ctx, qr, taskID); err != nil {
			return err
		}
		return enqueueJob(enqueue, taskID, j.round, spec)
	})
	if err != nil {
		q.announced(taskID, nil)
		return tool.JobInfo{}, err
	}
	q.announced(taskID, &tool.JobEvent{Type: tool.JobSubmitted, Job: j.JobInfo})
	return j.JobInfo, nil
}

// finish moves a job that has not finished to a final status, and reports
// whether it did: only the one change that does reports the event, so a
// job completes once however many steps, nodes or webhooks race. round,
// when not -1, must be the job's round.
func (q *Queue) finish(ctx context.Context, taskID string, round int64, status string, st tool.AsyncStatus) (tool.JobInfo, bool, error) {
	var (
		j  row
		ev *tool.JobEvent
	)
	err := q.b.direct(ctx, func(qr querier) (err error) {
		j, ev, err = q.finishTx(ctx, qr, taskID, round, status, st)
		return err
	})
	if err != nil {
		return tool.JobInfo{}, false, err
	}
	q.emit(ev)
	return j.JobInfo, ev != nil, nil
}

// finishTx is finish on qr (in a transaction or not: the change is one
// statement); it returns the event to report once it is committed (nil
// when the job had finished already). A cancellation reports no event of
// its own.
func (q *Queue) finishTx(ctx context.Context, qr querier, taskID string, round int64, status string, st tool.AsyncStatus) (row, *tool.JobEvent, error) {
	now := q.now().UnixNano()
	var result any
	if len(st.Result) > 0 {
		result = string(st.Result)
	}
	progress := st.Progress
	if status == StatusCompleted {
		progress = 100
	}
	query := `UPDATE async_jobs SET status = ?, progress = CASE WHEN ? > progress THEN ? ELSE progress END, message = ?, result = ?, error = ?,
		updated_ns = ?, completed_ns = ? WHERE task_id = ? AND status IN (?, ?)`
	args := []any{status, progress, progress, st.Message, result, st.Error, now, now, taskID, StatusPending, StatusProcessing}
	if round >= 0 {
		query += " AND round = ?"
		args = append(args, round)
	}
	rs, err := qr.jobs(ctx, query+" RETURNING "+jobColumns, args...)
	if err != nil {
		return row{}, nil, err
	}
	if len(rs) == 0 { // finished already, or another round
		j, err := q.load(ctx, qr, taskID)
		return j, nil, err
	}
	j := rs[0]
	ev := &tool.JobEvent{Type: tool.JobCompleted, Job: j.JobInfo}
	switch status {
	case StatusFailed:
		ev.Type = tool.JobFailed
	case StatusCancelled:
		ev.Type = eventCancelled
	}
	return j, ev, nil
}

// eventCancelled is logged, not published.
const eventCancelled = "tool:async:cancelled"

// emit reports an event after its transaction committed.
func (q *Queue) emit(ev *tool.JobEvent) {
	if ev == nil {
		return
	}
	if ev.Type == tool.JobCompleted || ev.Type == tool.JobFailed || ev.Type == eventCancelled {
		q.log.Info("job finished", "taskId", ev.Job.TaskID, "tool", ev.Job.Tool, "status", ev.Job.Status, "node", q.cfg.NodeID)
	}
	if ev.Type != eventCancelled {
		q.publish(*ev)
	}
}

// progressTx records how a job goes; it returns the event to report when
// anything changed.
func (q *Queue) progressTx(ctx context.Context, qr querier, taskID string, round int64, st tool.AsyncStatus) (*tool.JobEvent, error) {
	rs, err := qr.jobs(ctx, `UPDATE async_jobs SET status = ?, progress = ?, message = ?, updated_ns = ?
		WHERE task_id = ? AND round = ? AND status IN (?, ?) AND (progress <> ? OR message <> ? OR status <> ?) RETURNING `+jobColumns,
		StatusProcessing, st.Progress, st.Message, q.now().UnixNano(), taskID, round, StatusPending, StatusProcessing,
		st.Progress, st.Message, StatusProcessing)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &tool.JobEvent{Type: tool.JobProgress, Job: rs[0].JobInfo}, nil
}

// applyTx records a status a handler reported (a poll, a webhook) and
// returns the event to report, and whether the job is now final.
func (q *Queue) applyTx(ctx context.Context, qr querier, taskID string, round int64, st tool.AsyncStatus) (*tool.JobEvent, bool, error) {
	switch st.Status {
	case tool.AsyncCompleted:
		_, ev, err := q.finishTx(ctx, qr, taskID, round, StatusCompleted, st)
		return ev, true, err
	case tool.AsyncFailed:
		if st.Error == "" {
			st.Error = cmp.Or(st.Message, "the work failed without saying why")
		}
		_, ev, err := q.finishTx(ctx, qr, taskID, round, StatusFailed, st)
		return ev, true, err
	default:
		ev, err := q.progressTx(ctx, qr, taskID, round, st)
		return ev, false, err
	}
}

// apply is applyTx outside a transaction (its change is one statement),
// on a context of its own (afterHandler).
func (q *Queue) apply(ctx context.Context, taskID string, round int64, st tool.AsyncStatus) (final bool, err error) {
	ctx, cancel := afterHandler(ctx)
	defer cancel()
	var ev *tool.JobEvent
	err = q.b.direct(ctx, func(qr querier) (err error) {
		ev, final, err = q.applyTx(ctx, qr, taskID, round, st)
		return err
	})
	if err == nil {
		q.emit(ev)
	}
	return final, err
}

// work works the job of taskID from where it is (step), and finishes its
// row as failed when River will not run it again: River's MaxAttempts is
// the sum of the steps' budgets, but failures no step counts (a store
// error, a rescue after a process died) use River's attempts too, and a
// job whose last attempt fails is discarded, which would leave its row
// pending for ever. Raising MaxAttempts would only move that point, so
// the last attempt finishes the row whatever failed. All kinds, the
// earlier ones too, are worked here.
func (q *Queue) work(ctx context.Context, job *rivertype.JobRow, taskID string, round int64) error {
	err := q.step(ctx, job, taskID, round)
	var snooze *rivertype.JobSnoozeError
	if err == nil || errors.As(err, &snooze) || job.Attempt < job.MaxAttempts {
		return err
	}
	if ferr := q.fail(ctx, taskID, round, err, job.Attempt); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// step works one run of the River job: a pending job is submitted (the
// handler's Submit, with the job's idempotency key, then the external id
// recorded at once, so a step cut short later never submits again); a
// processing job of a polling tool is polled, and the River job snoozes
// for the polling interval until the work is done. A webhook job's River
// job ends after the submission.
func (q *Queue) step(ctx context.Context, job *rivertype.JobRow, taskID string, round int64) error {
	var stored row
	if err := q.b.direct(ctx, func(qr querier) (err error) { stored, err = q.load(ctx, qr, taskID); return err }); err != nil {
		return err
	}
	if stored.Final() || stored.round != round {
		return nil // finished, or a retry superseded this run
	}
	t, ok := q.toolNamed(stored.Tool)
	if !ok {
		return q.stepFailed(ctx, job, stepOf(stored), job.MaxAttempts, taskID, round,
			fmt.Errorf("tool %s is not registered as an async tool in this process", stored.Tool))
	}
	spec := t.Async.WithDefaults()
	switch {
	case stored.Status == StatusPending:
		ext, ended, err := q.submit(ctx, job, t, spec, stored)
		if err != nil || ended {
			return err
		}
		if err := q.recordSubmission(ctx, stored, ext); err != nil {
			return err
		}
		if spec.Type != tool.AsyncPolling {
			return nil // the webhook finishes it
		}
		stored.externalID = ext // the first poll runs at once
	case spec.Type != tool.AsyncPolling:
		return nil
	}
	q.log.Info("job step", "step", "poll", "taskId", taskID, "attempt", job.Attempt, "node", q.cfg.NodeID)
	st, err := callSafely(func() (tool.AsyncStatus, error) { return t.Handler.Poll(ctx, stored.externalID) })
	if err == nil {
		err = st.Check()
	}
	if err != nil {
		return q.stepFailed(ctx, job, stepPoll, spec.MaxRetries+1, taskID, round, err)
	}
	final, err := q.apply(ctx, taskID, round, st)
	if err != nil || final {
		return err
	}
	return river.JobSnooze(spec.PollingInterval)
}

// submit is the submission step of a pending job: it calls the handler's
// Submit with the job's idempotency key and returns the external id, or
// ended when the submission failed its last attempt and the job is failed
// (err is then nil: River must not run it again).
func (q *Queue) submit(ctx context.Context, job *rivertype.JobRow, t tool.Tool, spec tool.AsyncSpec, stored row) (ext string, ended bool, err error) {
	taskID, round := stored.TaskID, stored.round
	q.log.Info("job step", "step", "submit", "taskId", taskID, "attempt", job.Attempt, "node", q.cfg.NodeID)
	key := taskID
	if round > 0 {
		key = fmt.Sprintf("%s.r%d", taskID, round)
	}
	req := tool.AsyncSubmit{TaskID: taskID, IdempotencyKey: key, Tool: stored.Tool, Arguments: json.RawMessage(stored.arguments)}
	if base := q.publicURL(); spec.Type == tool.AsyncWebhook && base != "" {
		req.WebhookURL = strings.TrimRight(base, "/") + spec.WebhookPath
	}
	ext, err = callSafely(func() (string, error) { return t.Handler.Submit(ctx, req) })
	if err != nil {
		err = q.stepFailed(ctx, job, stepSubmit, spec.MaxRetries+1, taskID, round, err)
		return "", err == nil, err // stepFailed returns nil only when it failed the job
	}
	return ext, false, nil
}

// afterHandlerTimeout bounds a write that records what a handler did.
const afterHandlerTimeout = 10 * time.Second

// afterHandler returns the context of a write that records what a handler
// did: not the step's, which ends at the step's timeout (when a handler
// overran it) and would lose the record — an external id not recorded is
// a second submission — but one of its own, with its own short timeout.
func afterHandler(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), afterHandlerTimeout)
}

// recordSubmission records the external id of a pending job's submission
// and that the job is processing, on a context of its own (afterHandler).
func (q *Queue) recordSubmission(ctx context.Context, stored row, ext string) error {
	ctx, cancel := afterHandler(ctx)
	defer cancel()
	var changed bool
	err := q.b.direct(ctx, func(qr querier) error {
		n, err := qr.exec(ctx, `UPDATE async_jobs SET status = ?, external_id = ?, updated_ns = ? WHERE task_id = ? AND round = ? AND status = ?`,
			StatusProcessing, ext, q.now().UnixNano(), stored.TaskID, stored.round, StatusPending)
		changed = n == 1
		return err
	})
	if err == nil && changed {
		j := stored.JobInfo
		j.Status = StatusProcessing
		q.publish(tool.JobEvent{Type: tool.JobProgress, Job: j})
	}
	return err
}

// The steps of a job, as its failures are worded ("submitting: …").
const (
	stepSubmit = "submitting"
	stepPoll   = "polling"
)

// stepOf names the step a job is at.
func stepOf(r row) string {
	if r.Status == StatusPending {
		return stepSubmit
	}
	return stepPoll
}

// stepFailed fails the job when the step has used its last attempt (the
// step's budget: the tool's retries plus one; River's own count of
// attempts bounds it too) and returns nil, and otherwise returns err so
// River retries the job after a backoff. A step's earlier failures are
// the River job's recorded errors worded as its own.
func (q *Queue) stepFailed(ctx context.Context, job *rivertype.JobRow, step string, budget int, taskID string, round int64, err error) error {
	err = fmt.Errorf("%s: %w", step, err)
	failures := 1
	for _, e := range job.Errors {
		if strings.HasPrefix(e.Error, step+": ") {
			failures++
		}
	}
	if failures >= budget || job.Attempt >= job.MaxAttempts {
		if ferr := q.fail(ctx, taskID, round, err, failures); ferr != nil {
			return errors.Join(err, ferr)
		}
		return nil
	}
	q.log.Warn("job step failed; it is retried", "taskId", taskID, "step", step, "attempt", failures, "of", budget, "err", err)
	return err
}

// fail finishes the job as failed with err, after attempts attempts, on a
// context of its own (afterHandler: the step's may have timed out), and
// returns the store's error.
func (q *Queue) fail(ctx context.Context, taskID string, round int64, err error, attempts int) error {
	ctx, cancel := afterHandler(ctx)
	defer cancel()
	msg := fmt.Sprintf("%v (after %d attempts)", err, attempts)
	_, _, ferr := q.finish(ctx, taskID, round, StatusFailed, tool.AsyncStatus{Error: msg, Message: "failed"})
	return ferr
}

// callSafely turns a handler's panic into an error.
func callSafely[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the handler panicked: %v", p)
		}
	}()
	return f()
}

// subscriber receives events.
type subscriber struct {
	ch     chan tool.JobEvent
	mu     sync.Mutex
	closed bool
}

func (s *subscriber) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// Subscribe returns a channel of the events of jobs this process
// submits, moves on or finishes, with a buffer of buffer events (256 when
// <= 0; events that do not fit are dropped), and a function that ends the
// subscription. Other processes' events are not seen: ask the database
// (Get, Pending) for those.
func (q *Queue) Subscribe(buffer int) (<-chan tool.JobEvent, func()) {
	if buffer <= 0 {
		buffer = 256
	}
	s := &subscriber{ch: make(chan tool.JobEvent, buffer)}
	q.mu.Lock()
	q.subs[s] = struct{}{}
	q.mu.Unlock()
	return s.ch, func() {
		q.mu.Lock()
		delete(q.subs, s)
		q.mu.Unlock()
		s.close()
	}
}

// publish sends e to the subscribers, or holds it while its job's
// submission is committing (announce).
func (q *Queue) publish(e tool.JobEvent) {
	q.events.Lock()
	defer q.events.Unlock()
	if h, ok := q.announcing[e.Job.TaskID]; ok {
		h.events = append(h.events, e)
		return
	}
	q.send(e)
}

// held is what publish holds of a job while submissions of it commit:
// their number (two retries of a job may race) and the job's events.
type held struct {
	submissions int
	events      []tool.JobEvent
}

// announce holds the events of the job taskID until announced is called
// as often: a submission of it is about to commit (see Queue.events).
func (q *Queue) announce(taskID string) {
	q.events.Lock()
	defer q.events.Unlock()
	h, ok := q.announcing[taskID]
	if !ok {
		h = &held{}
		q.announcing[taskID] = h
	}
	h.submissions++
}

// announced sends submitted (when the submission committed; nil when it
// failed), then the events of the job held so far, in order; once every
// submission announced is over, the job's events are no longer held.
func (q *Queue) announced(taskID string, submitted *tool.JobEvent) {
	q.events.Lock()
	defer q.events.Unlock()
	h := q.announcing[taskID]
	if submitted != nil {
		q.send(*submitted)
	}
	for _, e := range h.events {
		q.send(e)
	}
	h.events = nil
	if h.submissions--; h.submissions == 0 {
		delete(q.announcing, taskID)
	}
}

// send hands e to every subscriber, dropping it for one too slow to take
// it; its callers hold q.events, so events are sent in publish's order.
func (q *Queue) send(e tool.JobEvent) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	for s := range q.subs {
		s.mu.Lock()
		if !s.closed {
			select {
			case s.ch <- e:
			default:
				q.log.Warn("job event dropped: subscriber too slow", "type", e.Type, "taskId", e.Job.TaskID)
			}
		}
		s.mu.Unlock()
	}
}
