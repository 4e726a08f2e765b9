package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Schedules keeps the cron tool's schedules of one workspace and their
// runs. It stores what it is given: computing when a schedule runs next is
// the scheduler's.
type Schedules struct {
	s         *Store
	workspace string
}

// Schedules returns the schedules of the workspace (an absolute directory).
func (s *Store) Schedules(workspace string) *Schedules {
	return &Schedules{s: s, workspace: workspace}
}

// spec is a schedule's timing as the spec column holds it.
type spec struct {
	Kind   string     `json:"kind"`
	Expr   string     `json:"expr,omitempty"`
	TZ     string     `json:"tz,omitempty"`
	Every  string     `json:"every,omitempty"`
	At     *time.Time `json:"at,omitempty"`
	Anchor time.Time  `json:"anchor"`
}

func ns(t *time.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeOf(n int64) *time.Time {
	if n == 0 {
		return nil
	}
	t := time.Unix(0, n).UTC()
	return &t
}

// Add keeps a new schedule; s.ID must be new.
func (ss *Schedules) Add(ctx context.Context, s tool.Schedule) error {
	sp, payload, owner, err := encodeSchedule(s)
	if err != nil {
		return err
	}
	now := ss.s.now().UnixNano()
	err = ss.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO schedules (id, workspace, name, spec, payload, owner, enabled, next_run_ns, last_run_ns, created_ns, updated_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, ss.workspace, s.Name, sp, payload, owner, s.Enabled, ns(s.NextRun), ns(s.LastRun), now, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("adding schedule %s: %w", s.ID, err)
	}
	return nil
}

func encodeSchedule(s tool.Schedule) (sp, payload, owner string, err error) {
	if s.ID == "" {
		return "", "", "", errors.New("a schedule needs an id")
	}
	b, err := json.Marshal(spec{Kind: s.Kind, Expr: s.Expr, TZ: s.TZ, Every: s.Every, At: s.At, Anchor: s.Anchor})
	if err != nil {
		return "", "", "", err
	}
	p, err := encodePayload(s.Payload)
	if err != nil {
		return "", "", "", fmt.Errorf("schedule %s: encoding its payload: %w", s.ID, err)
	}
	o, err := json.Marshal(s.Owner)
	if err != nil {
		return "", "", "", err
	}
	return string(b), string(p), string(o), nil
}

// encodePayload returns p as JSON with <, > and & written as they are
// (json.Marshal would write \u003c…): a payload's arguments are shown to
// people as they were given.
func encodePayload(p tool.SchedulePayload) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Update replaces schedule s.ID's name, timing, payload, owner, enabled
// state and next run; its creation and last run stay, and so does the owner
// of a legacy schedule (s.Legacy) until it is given one. As Claim, it
// expects the next run the caller read (was, nil: none) and records runs
// (the occurrences it moves the schedule past) in the same transaction; ok
// is false, and nothing changes, when a claim moved the next run meanwhile.
func (ss *Schedules) Update(ctx context.Context, s tool.Schedule, was *time.Time, runs []tool.ScheduleRun) (ok bool, err error) {
	sp, payload, owner, err := encodeSchedule(s)
	if err != nil {
		return false, err
	}
	var found bool
	err = ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, "UPDATE schedules SET name = ?, spec = ?, payload = ?, owner = CASE WHEN ? THEN owner ELSE ? END, enabled = ?, next_run_ns = ?, updated_ns = ? WHERE id = ? AND workspace = ? AND next_run_ns = ?",
			s.Name, sp, payload, s.Legacy, owner, s.Enabled, ns(s.NextRun), ss.s.now().UnixNano(), s.ID, ss.workspace, ns(was))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			var count int
			err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM schedules WHERE id = ? AND workspace = ?", s.ID, ss.workspace).Scan(&count)
			found = count > 0
			return err
		}
		found, ok = true, true
		for _, run := range runs {
			run.ScheduleID = s.ID
			if err := insertRun(ctx, tx, &run); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("updating schedule %s: %w", s.ID, err)
	}
	if !found {
		return false, fmt.Errorf("schedule %s: %w", s.ID, tool.ErrNoSchedule)
	}
	return ok, nil
}

// Remove forgets a schedule and its runs.
func (ss *Schedules) Remove(ctx context.Context, id string) error {
	var n int64
	err := ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, "DELETE FROM schedules WHERE id = ? AND workspace = ?", id, ss.workspace)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM schedule_runs WHERE schedule_id = ?", id)
		return err
	})
	if err != nil {
		return fmt.Errorf("removing schedule %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("schedule %s: %w", id, tool.ErrNoSchedule)
	}
	return nil
}

const scheduleColumns = "id, name, spec, payload, owner, enabled, next_run_ns, last_run_ns, created_ns, updated_ns"

func scanSchedule(row scanner) (tool.Schedule, error) {
	var (
		s                  tool.Schedule
		sp, payload, owner string
		next, last, c, u   int64
		decoded            spec
	)
	err := row.Scan(&s.ID, &s.Name, &sp, &payload, &owner, &s.Enabled, &next, &last, &c, &u)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(sp), &decoded); err != nil {
		return s, fmt.Errorf("schedule %s: its timing cannot be read: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(payload), &s.Payload); err != nil {
		return s, fmt.Errorf("schedule %s: its payload cannot be read: %w", s.ID, err)
	}
	if s.Owner, s.Legacy, err = decodeOwner(owner); err != nil {
		return s, fmt.Errorf("schedule %s: who set it cannot be read: %w", s.ID, err)
	}
	s.Kind, s.Expr, s.TZ, s.Every, s.At, s.Anchor = decoded.Kind, decoded.Expr, decoded.TZ, decoded.Every, decoded.At, decoded.Anchor
	s.NextRun, s.LastRun = timeOf(next), timeOf(last)
	s.Created, s.Updated = time.Unix(0, c).UTC(), time.Unix(0, u).UTC()
	return s, nil
}

// decodeOwner reads the owner column: the identity of who set the schedule.
// One kept before identities were recorded has no owner flag: legacy is
// true then, and the identity holds only who set it — except for a
// schedule a person set at the command line (toolbelt cron add, or the cron
// tool through toolbelt call: channel cli, no agent, session or principal),
// which was the owner then as now.
func decodeOwner(col string) (id tool.Identity, legacy bool, err error) {
	var flag struct {
		Owner *bool `json:"owner"`
	}
	if err := json.Unmarshal([]byte(col), &flag); err != nil {
		return id, false, err
	}
	if err := json.Unmarshal([]byte(col), &id); err != nil {
		return id, false, err
	}
	if flag.Owner == nil && id == (tool.Identity{Channel: "cli"}) {
		return tool.Identity{Channel: "cli", Owner: true}, false, nil
	}
	return id, flag.Owner == nil, nil
}

// Get returns a schedule of the workspace; tool.ErrNoSchedule when there is
// none.
func (ss *Schedules) Get(ctx context.Context, id string) (tool.Schedule, error) {
	var s tool.Schedule
	err := ss.s.Read(ctx, func(tx *Tx) error {
		var err error
		s, err = scanSchedule(tx.QueryRow(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE id = ? AND workspace = ?", id, ss.workspace))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("schedule %s: %w", id, tool.ErrNoSchedule)
	}
	if err != nil {
		return s, fmt.Errorf("reading schedule %s: %w", id, err)
	}
	return s, nil
}

// List returns the workspace's schedules: those that will run, soonest
// first, then those that will not.
func (ss *Schedules) List(ctx context.Context) ([]tool.Schedule, error) {
	return ss.query(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE workspace = ? ORDER BY next_run_ns = 0, next_run_ns, id", ss.workspace)
}

// Due returns the enabled schedules of the workspace whose next run is at
// or before now, the most overdue first.
func (ss *Schedules) Due(ctx context.Context, now time.Time) ([]tool.Schedule, error) {
	return ss.query(ctx, "SELECT "+scheduleColumns+" FROM schedules WHERE workspace = ? AND enabled = ? AND next_run_ns > 0 AND next_run_ns <= ? ORDER BY next_run_ns, id",
		ss.workspace, true, now.UnixNano())
}

func (ss *Schedules) query(ctx context.Context, q string, args ...any) ([]tool.Schedule, error) {
	out, err := readAll(ctx, ss.s, scanSchedule, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing schedules: %w", err)
	}
	return out, nil
}

// Claim takes the occurrences of schedule id from was, the one it is due
// at, up to next: in one transaction it moves the schedule's next run from
// was to next (nil: never again) and records runs — what became of each of
// those occurrences, the one started and those skipped (finished) — and
// returns them with their ids. Only one claim of an occurrence succeeds,
// across processes sharing the database: the others find the next run
// moved and get ok false.
func (ss *Schedules) Claim(ctx context.Context, id string, was time.Time, next *time.Time, runs []tool.ScheduleRun) (_ []tool.ScheduleRun, ok bool, err error) {
	if len(runs) == 0 {
		return nil, false, fmt.Errorf("claiming a run of schedule %s: nothing to record", id)
	}
	out := make([]tool.ScheduleRun, len(runs))
	err = ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, "UPDATE schedules SET next_run_ns = ?, last_run_ns = ? WHERE id = ? AND workspace = ? AND enabled = ? AND next_run_ns = ?",
			ns(next), runs[0].Started.UnixNano(), id, ss.workspace, true, was.UnixNano())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		for i, run := range runs {
			run.ScheduleID = id
			if err := insertRun(ctx, tx, &run); err != nil {
				return err
			}
			out[i] = run
		}
		ok = true
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("claiming a run of schedule %s: %w", id, err)
	}
	if !ok {
		return nil, false, nil
	}
	return out, true, nil
}

// Start records a run of schedule id that is not claimed from the
// schedule's timing (one asked for with run now).
func (ss *Schedules) Start(ctx context.Context, id string, run tool.ScheduleRun) (tool.ScheduleRun, error) {
	run.ScheduleID = id
	err := ss.s.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM schedules WHERE id = ? AND workspace = ?", id, ss.workspace).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("schedule %s: %w", id, tool.ErrNoSchedule)
		}
		if _, err := tx.Exec(ctx, "UPDATE schedules SET last_run_ns = ? WHERE id = ?", run.Started.UnixNano(), id); err != nil {
			return err
		}
		return insertRun(ctx, tx, &run)
	})
	if err != nil {
		return run, fmt.Errorf("starting a run of schedule %s: %w", id, err)
	}
	return run, nil
}

// RunLease is how long a process vouches for a run it started: it renews
// the leases of its runs well within it, and a run whose lease ran out was
// left by a process that stopped (see Expire).
const RunLease = time.Minute

func insertRun(ctx context.Context, tx *Tx, run *tool.ScheduleRun) error {
	var lease int64
	if run.Status == tool.RunRunning {
		lease = run.Started.Add(RunLease).UnixNano()
	}
	return tx.QueryRow(ctx, `INSERT INTO schedule_runs (schedule_id, trigger_kind, scheduled_ns, until_ns, started_ns, finished_ns, status, summary, error, node, lease_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, run.ScheduleID, run.Trigger, ns(run.Scheduled), ns(run.Until), run.Started.UnixNano(), ns(run.Finished), run.Status, run.Summary, run.Error, run.Node, lease).Scan(&run.ID)
}

// Renew extends the lease of run id (of a schedule of this workspace) to
// until, while it is running.
func (ss *Schedules) Renew(ctx context.Context, id int64, until time.Time) error {
	err := ss.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "UPDATE schedule_runs SET lease_ns = ? WHERE id = ? AND status = ? AND schedule_id IN (SELECT id FROM schedules WHERE workspace = ?)",
			until.UnixNano(), id, tool.RunRunning, ss.workspace)
		return err
	})
	if err != nil {
		return fmt.Errorf("renewing the lease of run %d: %w", id, err)
	}
	return nil
}

// Expire records as failed the runs of this workspace's schedules whose
// lease ran out before now — their process stopped before it finished them
// (killed, or its machine lost) — and returns how many there were.
func (ss *Schedules) Expire(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := ss.s.Write(ctx, func(tx *Tx) error {
		res, err := tx.Exec(ctx, `UPDATE schedule_runs SET status = ?, finished_ns = ?,
error = 'interrupted: the process that ran it (' || node || ') stopped before it finished'
WHERE status = ? AND lease_ns > 0 AND lease_ns < ? AND schedule_id IN (SELECT id FROM schedules WHERE workspace = ?)`,
			tool.RunError, now.UnixNano(), tool.RunRunning, now.UnixNano(), ss.workspace)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expiring runs whose process stopped: %w", err)
	}
	return n, nil
}

// Finish records how run ended: its status, finish time, summary and error.
func (ss *Schedules) Finish(ctx context.Context, run tool.ScheduleRun) error {
	err := ss.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(ctx, "UPDATE schedule_runs SET finished_ns = ?, status = ?, summary = ?, error = ? WHERE id = ?",
			ns(run.Finished), run.Status, run.Summary, run.Error, run.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("finishing run %d of schedule %s: %w", run.ID, run.ScheduleID, err)
	}
	return nil
}

// Runs returns the latest runs of schedule id, the newest first; limit
// bounds them (default 20).
func (ss *Schedules) Runs(ctx context.Context, id string, limit int) ([]tool.ScheduleRun, error) {
	if limit <= 0 {
		limit = 20
	}
	if _, err := ss.Get(ctx, id); err != nil {
		return nil, err
	}
	out, err := readAll(ctx, ss.s, scanRun, "SELECT id, schedule_id, trigger_kind, scheduled_ns, until_ns, started_ns, finished_ns, status, summary, error, node FROM schedule_runs WHERE schedule_id = ? ORDER BY id DESC LIMIT ?", id, limit)
	if err != nil {
		return nil, fmt.Errorf("listing the runs of schedule %s: %w", id, err)
	}
	return out, nil
}

func scanRun(row scanner) (tool.ScheduleRun, error) {
	var r tool.ScheduleRun
	var sched, until, started, finished int64
	if err := row.Scan(&r.ID, &r.ScheduleID, &r.Trigger, &sched, &until, &started, &finished, &r.Status, &r.Summary, &r.Error, &r.Node); err != nil {
		return r, err
	}
	r.Scheduled, r.Until, r.Finished = timeOf(sched), timeOf(until), timeOf(finished)
	r.Started = time.Unix(0, started).UTC()
	return r, nil
}
