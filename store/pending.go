package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/tool"
)

// Pending is the queue of calls that wait for a person's approval in the
// console, shared by every process on the database: a call that needs
// approval and has nobody else to ask is added here and waits (Await)
// until the console decides it (Decide), it expires, or its caller stops
// waiting (Cancel). The console also beats a heartbeat here (Beat), so a
// call knows whether anyone could decide it at all (Console).
type Pending struct{ s *Store }

// Pending returns the queue of approvals waiting for the console.
func (s *Store) Pending() *Pending { return &Pending{s: s} }

// The states of a pending approval.
const (
	PendingWaiting   = "pending"
	PendingAllowed   = "allowed"
	PendingDenied    = "denied"
	PendingExpired   = "expired"
	PendingCancelled = "cancelled"
)

// The grants a decision that allows a call can give (see invoke.Grant).
const (
	GrantOnce      = "once"
	GrantSession   = "session"
	GrantWorkspace = "workspace"
)

// PendingApproval is one call waiting for (or given) a decision.
type PendingApproval struct {
	// ID identifies the request; CallID is the call's own id.
	ID, CallID string
	// Workspace is where the call runs (absolute).
	Workspace string
	Tool      string
	// Args are the call's arguments as JSON, secrets redacted.
	Args json.RawMessage
	// Caller is who asks for the call.
	Caller tool.Identity
	// Reason says why a person is asked; Message is the tool's or the
	// approval request's message.
	Reason, Message string
	// Always says what a grant for the session or the workspace would
	// cover; "" when only "once" is offered, and NoAlways says why.
	Always, NoAlways string
	// Effects is what the person must see to decide: the diff the call
	// would make, the command it would run.
	Effects string
	// Created is when the call began to wait; after Expires nobody may
	// decide it.
	Created, Expires time.Time
	// State is PendingWaiting, PendingAllowed, PendingDenied,
	// PendingExpired or PendingCancelled. A request still waiting past
	// Expires reads as PendingExpired.
	State string
	// Grant is how far an allowing decision reaches: GrantOnce,
	// GrantSession or GrantWorkspace.
	Grant string
	// By is who decided, Decided when; DenyReason is the reason a denial
	// gave, for the model.
	By         string
	Decided    time.Time
	DenyReason string
}

// PendingDecision is a person's decision about a pending approval.
type PendingDecision struct {
	Allow bool
	// Grant is how far an allowing decision reaches ("" is GrantOnce).
	Grant string
	// By is who decided (the console user).
	By string
	// Reason, for a denial, is passed on to the model.
	Reason string
}

// PendingFilter selects pending approvals; zero fields select all.
type PendingFilter struct {
	Workspace string
	// State is one of the states (PendingWaiting: those still waiting
	// and not expired).
	State string
	// Limit is the most to return (0: no limit).
	Limit int
}

// ErrNoPending is the error of an id the queue does not hold.
var ErrNoPending = errors.New("no such pending approval")

// ErrDecided is the error of deciding (or expiring, or cancelling) a
// request that is no longer waiting: it was decided, or its caller stopped
// waiting. The wrapping error says what happened.
var ErrDecided = errors.New("the approval was already settled")

// ErrExpired is the error of deciding a request after it expired.
var ErrExpired = errors.New("the approval request expired")

// ConsoleLive is how recent a console's heartbeat must be for Console to
// count it.
const ConsoleLive = 15 * time.Second

// pendingKeep is how long settled requests are kept, for the console to
// show; older ones are removed as new ones are added.
const pendingKeep = 7 * 24 * time.Hour

// pendingPoll is how often Await reads the request.
const pendingPoll = 100 * time.Millisecond

// pendingColumns are the columns scanPending reads, the state as it reads
// (a request waiting past its expiry reads as expired; the query's first
// parameter is the time now).
const pendingColumns = `id, call_id, workspace, tool, args, caller, reason, message, always_covers, no_always, effects,
	created_ns, expires_ns, ` + effectiveState + `, grant_scope, decided_by, decided_ns, deny_reason`

const effectiveState = "CASE WHEN state = 'pending' AND expires_ns <= ? THEN 'expired' ELSE state END"

// Add puts p in the queue, waiting (its State, Grant and decision are
// ignored). Its ID must be new; Created defaults to now.
func (q *Pending) Add(ctx context.Context, p PendingApproval) error {
	if p.ID == "" {
		return errors.New("adding a pending approval: no id")
	}
	now := q.s.now()
	if p.Created.IsZero() {
		p.Created = now
	}
	caller, _ := json.Marshal(p.Caller) // an Identity always marshals
	args := string(p.Args)
	if args == "" {
		args = "{}"
	}
	err := q.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM pending_approvals WHERE state <> 'pending' AND created_ns < ?", now.Add(-pendingKeep).UnixNano()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO pending_approvals (id, call_id, workspace, tool, args, caller, reason, message, always_covers, no_always, effects,
	created_ns, expires_ns, state, grant_scope, decided_by, decided_ns, deny_reason)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', '', '', 0, '')`,
			p.ID, p.CallID, p.Workspace, p.Tool, args, string(caller), p.Reason, p.Message, p.Always, p.NoAlways, p.Effects,
			p.Created.UnixNano(), p.Expires.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("adding pending approval %s: %w", p.ID, err)
	}
	return nil
}

// Get returns the request with this id (ErrNoPending when there is none).
func (q *Pending) Get(ctx context.Context, id string) (PendingApproval, error) {
	ps, err := readAll(ctx, q.s, scanPending, "SELECT "+pendingColumns+" FROM pending_approvals WHERE id = ?", q.s.now().UnixNano(), id)
	switch {
	case err != nil:
		return PendingApproval{}, fmt.Errorf("reading pending approval %s: %w", id, err)
	case len(ps) == 0:
		return PendingApproval{}, fmt.Errorf("%w: %s", ErrNoPending, id)
	}
	return ps[0], nil
}

// List returns the requests f selects: those still waiting first, then
// the others, each newest first.
func (q *Pending) List(ctx context.Context, f PendingFilter) ([]PendingApproval, error) {
	now := q.s.now().UnixNano()
	var where []string
	args := []any{now}
	if f.Workspace != "" {
		where, args = append(where, "workspace = ?"), append(args, f.Workspace)
	}
	if f.State != "" {
		where, args = append(where, effectiveState+" = ?"), append(args, now, f.State)
	}
	query := "SELECT " + pendingColumns + " FROM pending_approvals"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY CASE WHEN state = 'pending' AND expires_ns > ? THEN 0 ELSE 1 END, created_ns DESC, id DESC"
	args = append(args, now)
	if f.Limit > 0 {
		query, args = query+" LIMIT ?", append(args, f.Limit)
	}
	ps, err := readAll(ctx, q.s, scanPending, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing pending approvals: %w", err)
	}
	return ps, nil
}

// Decide records d as the decision of the request with this id. Only a
// request still waiting can be decided: one settled already gives
// ErrDecided, one past its expiry ErrExpired, each wrapped with what
// happened.
func (q *Pending) Decide(ctx context.Context, id string, d PendingDecision) error {
	state, grant, reason := PendingDenied, "", d.Reason
	if d.Allow {
		state, grant, reason = PendingAllowed, d.Grant, ""
		switch grant {
		case "":
			grant = GrantOnce
		case GrantOnce, GrantSession, GrantWorkspace:
		default:
			return fmt.Errorf("deciding pending approval %s: grant %q is not %s, %s or %s", id, grant, GrantOnce, GrantSession, GrantWorkspace)
		}
	}
	return q.settle(ctx, id, state, grant, d.By, reason)
}

// Expire marks the request with this id expired, if it still waits: its
// caller stopped waiting for a decision. A request settled already gives
// ErrDecided.
func (q *Pending) Expire(ctx context.Context, id string) error {
	return q.settle(ctx, id, PendingExpired, "", "", "")
}

// Cancel marks the request with this id cancelled, if it still waits: its
// call ended before anyone decided. A request settled already gives
// ErrDecided.
func (q *Pending) Cancel(ctx context.Context, id string) error {
	return q.settle(ctx, id, PendingCancelled, "", "", "")
}

// settle moves a waiting request to state. Deciding (allowed, denied)
// also needs it unexpired; expiring and cancelling do not.
func (q *Pending) settle(ctx context.Context, id, state, grant, by, reason string) error {
	now := q.s.now()
	decide := state == PendingAllowed || state == PendingDenied
	err := q.s.Write(ctx, func(tx *Tx) error {
		query := "UPDATE pending_approvals SET state = ?, grant_scope = ?, decided_by = ?, decided_ns = ?, deny_reason = ? WHERE id = ? AND state = 'pending'"
		args := []any{state, grant, by, now.UnixNano(), reason, id}
		if decide {
			query, args = query+" AND expires_ns > ?", append(args, now.UnixNano())
		}
		res, err := tx.Exec(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		return q.whyNot(ctx, tx, id, now)
	})
	if err != nil {
		return fmt.Errorf("settling pending approval %s: %w", id, err)
	}
	return nil
}

// whyNot says why the request with this id could not be settled.
func (q *Pending) whyNot(ctx context.Context, tx *Tx, id string, now time.Time) error {
	var state, by string
	var decided, expires int64
	err := tx.QueryRow(ctx, "SELECT state, decided_by, decided_ns, expires_ns FROM pending_approvals WHERE id = ?", id).Scan(&state, &by, &decided, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNoPending
	case err != nil:
		return err
	case state == PendingWaiting, state == PendingExpired:
		return fmt.Errorf("%w at %s", ErrExpired, time.Unix(0, expires).Format(time.RFC3339))
	case by != "":
		return fmt.Errorf("%w: %s by %s at %s", ErrDecided, state, by, time.Unix(0, decided).Format(time.RFC3339))
	}
	return fmt.Errorf("%w: %s at %s", ErrDecided, state, time.Unix(0, decided).Format(time.RFC3339))
}

// Await waits until the request with this id is decided or expires (it is
// marked expired then) or ctx ends, and returns it as it is then.
func (q *Pending) Await(ctx context.Context, id string) (PendingApproval, error) {
	t := time.NewTicker(pendingPoll)
	defer t.Stop()
	for {
		p, err := q.Get(ctx, id)
		switch {
		case err != nil:
			return p, err
		case p.State == PendingExpired:
			if err := q.Expire(ctx, id); err != nil && !errors.Is(err, ErrDecided) {
				return p, err
			}
			return q.Get(ctx, id)
		case p.State != PendingWaiting:
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-t.C:
		}
	}
}

// Beat records that the console at url is live now.
func (q *Pending) Beat(ctx context.Context, url string) error {
	err := q.s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM console_beats WHERE url = ?", url); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO console_beats (url, beat_ns) VALUES (?, ?)", url, q.s.now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the console's heartbeat: %w", err)
	}
	return nil
}

// Console returns the URL of the console that beat last, and whether it
// beat within ConsoleLive.
func (q *Pending) Console(ctx context.Context) (url string, ok bool, err error) {
	var ns int64
	err = q.s.Read(ctx, func(tx *Tx) error {
		return tx.QueryRow(ctx, "SELECT url, beat_ns FROM console_beats ORDER BY beat_ns DESC LIMIT 1").Scan(&url, &ns)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("reading the console's heartbeat: %w", err)
	}
	return url, q.s.now().Sub(time.Unix(0, ns)) < ConsoleLive, nil
}

func scanPending(row scanner) (PendingApproval, error) {
	var p PendingApproval
	var args, caller string
	var created, expires, decided int64
	err := row.Scan(&p.ID, &p.CallID, &p.Workspace, &p.Tool, &args, &caller, &p.Reason, &p.Message, &p.Always, &p.NoAlways, &p.Effects,
		&created, &expires, &p.State, &p.Grant, &p.By, &decided, &p.DenyReason)
	if err != nil {
		return p, err
	}
	p.Args = json.RawMessage(args)
	p.Created, p.Expires = time.Unix(0, created), time.Unix(0, expires)
	if decided != 0 {
		p.Decided = time.Unix(0, decided)
	}
	return p, json.Unmarshal([]byte(caller), &p.Caller)
}
