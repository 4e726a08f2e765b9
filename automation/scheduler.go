// Package automation runs the cron tool's schedules: it keeps them in the
// store, and a Scheduler claims each due occurrence in the database and runs
// it — a tool call through the same governed pipeline as any call, or a
// message delivered to an agent session — recording every run.
//
// An occurrence is claimed with an UPDATE that expects the next-run time the
// scheduler read, so schedulers in several processes sharing one database
// run each occurrence once.
//
// Missed runs: when the schedulers were down at an occurrence, the first
// scheduler to see it runs the schedule once if an occurrence fell within
// the grace window (Options.Grace, default DefaultGrace) before now, and
// records the run as skipped otherwise. Either way the schedule then moves
// to its first occurrence after now: a schedule never runs more than once
// to catch up. The claim that moves it records, in the same transaction,
// what became of every occurrence it moves past — the one run, and the
// others skipped, a span of them in one record — so every occurrence has
// exactly one record however late a scheduler looks (a slow database, a
// loaded machine, a tick that straddles two occurrences, an outage).
package automation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/internal/randid"
	"github.com/toolbelt/toolbelt/internal/textclip"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
)

// DefaultGrace is how late a missed occurrence may still run.
const DefaultGrace = time.Hour

// DefaultPoll is how often a started Scheduler looks for due schedules.
const DefaultPoll = time.Second

// SummaryChars bounds the start of a result a run keeps.
const SummaryChars = 500

// Deliver runs an agent with a schedule's message (s.Payload.Text) as the
// user prompt on its session, and returns the start of the agent's answer.
type Deliver func(ctx context.Context, s tool.Schedule) (summary string, err error)

// Options adjust a Scheduler.
type Options struct {
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// Grace is how late a missed occurrence may still run (default
	// DefaultGrace).
	Grace time.Duration
	// Deliver delivers messages to agent sessions; without it a message
	// run fails, saying why.
	Deliver Deliver
	// NoDeliver says why messages cannot be delivered, for the runs that
	// fail for want of Deliver.
	NoDeliver string
	// Log receives what goes wrong outside a run (default: discarded).
	Log *slog.Logger
	// Poll is how often a started scheduler looks for due schedules
	// (default DefaultPoll).
	Poll time.Duration
	// ApprovalTimeout is how long a run whose call needs a person's
	// approval waits for it in the console (console.approvalTimeout), for
	// what Add and Update say of such a schedule (tool.Schedule.Approval).
	ApprovalTimeout time.Duration
}

// Scheduler keeps the schedules of one workspace and runs them. It is the
// cron.Scheduler of the cron tool. Its zero value is not usable: use New.
//
// It is a [lifecycle.Service]: between Start and Stop it runs due
// schedules on its own, and records the runs of stopped processes as
// failed (Expire). Stop lets the runs in progress finish until its context
// ends, then cancels them.
type Scheduler struct {
	st     *store.Schedules
	o      Options
	node   string // this process, on the runs it starts
	runner atomic.Pointer[invoke.Runner]
	// inFlight holds the ids of the schedules this process is running, so
	// a run that outlasts its interval is not started again beside itself.
	inFlight sync.Map
	wg       sync.WaitGroup // the runs a started scheduler makes

	life       sync.Mutex // guards what follows, held by Start and Stop
	started    bool
	stopped    bool
	stopClaims context.CancelFunc // ends the loop that claims due schedules
	cancelRuns context.CancelFunc // cancels the runs in progress
	loop       sync.WaitGroup
}

var _ cron.Scheduler = (*Scheduler)(nil)

// New returns a scheduler over the schedules st keeps.
func New(st *store.Schedules, o Options) *Scheduler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	host, _ := os.Hostname()
	return &Scheduler{st: st, o: o, node: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), randid.New("", 6))}
}

// SetRunner sets the pipeline tool-call runs go through. The runner's tool
// context usually holds the scheduler itself (the cron tool), hence not a
// field of New.
func (s *Scheduler) SetRunner(r *invoke.Runner) { s.runner.Store(r) }

func (s *Scheduler) now() time.Time { return s.o.Now().UTC() }

// plan checks sch and sets its next run from now. What is wrong with sch
// is a *tool.InputError.
func (s *Scheduler) plan(sch *tool.Schedule, now time.Time) error {
	if err := cron.Check(sch); err != nil {
		return &tool.InputError{Message: err.Error()}
	}
	if sch.Anchor.IsZero() {
		sch.Anchor = now
	}
	next, ok, err := cron.Next(*sch, now)
	if err != nil {
		return err
	}
	if !ok {
		if sch.Kind == tool.ScheduleAt {
			return tool.InputErrorf("at %s is in the past (it is now %s): give a future time", sch.At.Format(time.RFC3339), now.Format(time.RFC3339))
		}
		sch.NextRun = nil
		return nil
	}
	sch.NextRun = &next
	return nil
}

// Add keeps a new schedule, with a new id, and returns it as kept.
func (s *Scheduler) Add(ctx context.Context, sch tool.Schedule) (tool.Schedule, error) {
	now := s.now()
	sch.ID, sch.Anchor, sch.LastRun = randid.New("cron_", 6), time.Time{}, nil
	if err := s.plan(&sch, now); err != nil {
		return sch, err
	}
	if err := s.st.Add(ctx, sch); err != nil {
		return sch, err
	}
	return s.kept(ctx, sch)
}

// kept returns schedule sch as kept, saying whether its runs wait for a
// person's approval.
func (s *Scheduler) kept(ctx context.Context, sch tool.Schedule) (tool.Schedule, error) {
	got, err := s.st.Get(ctx, sch.ID)
	if err != nil {
		return got, err
	}
	got.Approval = s.approval(ctx, got)
	return got, nil
}

// Update replaces a schedule's name, timing, payload and enabled state. A
// schedule that stays enabled with the same timing keeps its next run, due
// or not; otherwise its next run is computed again from now (a zero Anchor
// restarts an interval from now), and the occurrences of the old timing
// that came due before the update and that no scheduler claimed are
// recorded skipped.
func (s *Scheduler) Update(ctx context.Context, sch tool.Schedule) (tool.Schedule, error) {
	for {
		cur, err := s.st.Get(ctx, sch.ID)
		if err != nil {
			return sch, err
		}
		now := s.now()
		if err := s.plan(&sch, now); err != nil {
			return sch, err
		}
		var missed []tool.ScheduleRun
		switch due := cur.NextRun; {
		case cur.Enabled && sch.Enabled && sameTiming(cur, sch):
			sch.NextRun = due
		case cur.Enabled && due != nil && !due.After(now):
			if run, err := s.skippedUntilNow(cur, now, "the schedule was changed at "+now.Format(time.RFC3339)+" before a scheduler ran it"); err == nil {
				missed = []tool.ScheduleRun{run}
			}
		}
		ok, err := s.st.Update(ctx, sch, cur.NextRun, missed)
		if err != nil {
			return sch, err
		}
		if ok {
			return s.kept(ctx, sch)
		}
		// A scheduler claimed the schedule's occurrence meanwhile: look again.
	}
}

// sameTiming says a and b run at the same times.
func sameTiming(a, b tool.Schedule) bool {
	sameAt := a.At == b.At || a.At != nil && b.At != nil && a.At.Equal(*b.At)
	return a.Kind == b.Kind && a.Expr == b.Expr && a.TZ == b.TZ && a.Every == b.Every && sameAt && a.Anchor.Equal(b.Anchor)
}

// Get returns a schedule.
func (s *Scheduler) Get(ctx context.Context, id string) (tool.Schedule, error) {
	return s.st.Get(ctx, id)
}

// Remove forgets a schedule and its runs.
func (s *Scheduler) Remove(ctx context.Context, id string) error { return s.st.Remove(ctx, id) }

// List returns the schedules, the next to run first.
func (s *Scheduler) List(ctx context.Context) ([]tool.Schedule, error) { return s.st.List(ctx) }

// Runs returns a schedule's latest runs, the newest first.
func (s *Scheduler) Runs(ctx context.Context, id string, limit int) ([]tool.ScheduleRun, error) {
	return s.st.Runs(ctx, id, limit)
}

// RunNow runs a schedule at once, due or not, enabled or not, and returns
// the finished run. Its timing is left as it was.
func (s *Scheduler) RunNow(ctx context.Context, id string) (tool.ScheduleRun, error) {
	sch, err := s.st.Get(ctx, id)
	if err != nil {
		return tool.ScheduleRun{}, err
	}
	run, err := s.st.Start(ctx, id, tool.ScheduleRun{Trigger: tool.TriggerManual, Started: s.now(), Status: tool.RunRunning, Node: s.node})
	if err != nil {
		return run, err
	}
	return s.execute(ctx, sch, run), nil
}

// Tick claims the schedules due now and runs them, and returns their runs
// when all have ended (skipped ones included). A started scheduler does
// the same on a timer; tests call it with their own clock.
func (s *Scheduler) Tick(ctx context.Context) ([]tool.ScheduleRun, error) {
	claimed, err := s.claimDue(ctx)
	out := make([]tool.ScheduleRun, len(claimed))
	var runs sync.WaitGroup
	for i, c := range claimed {
		out[i] = c.run
		if !running(c.run) {
			continue
		}
		runs.Go(func() {
			defer s.inFlight.Delete(c.sch.ID)
			out[i] = s.execute(ctx, c.sch, c.run)
		})
	}
	runs.Wait()
	return out, err
}

// Start starts running due schedules, looking every Options.Poll; ctx
// bounds starting only ([lifecycle.Service]).
func (s *Scheduler) Start(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	switch {
	case s.stopped:
		return errors.New("cron: the scheduler is stopped")
	case s.started:
		return errors.New("cron: the scheduler is started already")
	}
	s.started = true
	runs, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	claims, stopClaims := context.WithCancel(runs)
	s.stopClaims, s.cancelRuns = stopClaims, cancelRuns
	s.loop.Go(func() { s.serve(claims, runs) })
	return nil
}

// Stop stops claiming due schedules, lets the runs in progress finish
// until ctx ends, then cancels them (with ctx's error) and returns once
// they have ended ([lifecycle.Service]).
func (s *Scheduler) Stop(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	running := s.started && !s.stopped
	s.stopped = true
	if !running {
		return nil
	}
	s.stopClaims()
	s.loop.Wait()
	err := lifecycle.Drain(ctx, &s.wg, s.cancelRuns)
	s.cancelRuns()
	return err
}

// serve claims due schedules every poll until claims ends, and runs them
// with runs, the context of the runs.
func (s *Scheduler) serve(claims, runs context.Context) {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	expiry := time.NewTicker(store.RunLease / 2)
	defer expiry.Stop()
	s.expire(claims)
	for {
		claimed, err := s.claimDue(claims)
		if err != nil && claims.Err() == nil {
			s.o.Log.Warn("cron: looking for due schedules", "err", err)
		}
		for _, c := range claimed {
			if !running(c.run) {
				s.o.Log.Info("cron: recorded an occurrence that did not run", "schedule", c.sch.ID, "status", c.run.Status, "reason", c.run.Error)
				continue
			}
			s.wg.Go(func() {
				defer s.inFlight.Delete(c.sch.ID)
				s.execute(runs, c.sch, c.run)
			})
		}
		select {
		case <-claims.Done():
			return
		case <-expiry.C:
			s.expire(claims)
		case <-t.C:
		}
	}
}

func (s *Scheduler) expire(ctx context.Context) {
	n, err := s.Expire(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.o.Log.Warn("cron: looking for runs left by a stopped process", "err", err)
	case n > 0:
		s.o.Log.Warn("cron: runs left by a stopped process recorded as failed", "runs", n)
	}
}

// Expire records as failed the runs whose lease ran out — a process that
// started them stopped before it finished them (a run in progress renews
// its lease, store.RunLease, as it goes) — and returns how many.
func (s *Scheduler) Expire(ctx context.Context) (int64, error) {
	return s.st.Expire(ctx, s.now())
}

// keepLease renews run id's lease while it runs, until the returned stop.
func (s *Scheduler) keepLease(ctx context.Context, id int64) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(store.RunLease / 4)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.st.Renew(ctx, id, s.now().Add(store.RunLease)); err != nil && ctx.Err() == nil {
					s.o.Log.Warn("cron: renewing a run's lease", "run", id, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

type claimed struct {
	sch tool.Schedule
	run tool.ScheduleRun
}

// claimDue claims the occurrences due now, and returns the records of what
// became of each (runs to make and skipped ones). A run that is not skipped
// has its schedule marked in flight; the caller runs it.
func (s *Scheduler) claimDue(ctx context.Context) ([]claimed, error) {
	now := s.now()
	due, err := s.st.Due(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []claimed
	var errs []error
	for _, sch := range due {
		if _, busy := s.inFlight.LoadOrStore(sch.ID, true); busy {
			continue
		}
		runs, next, err := s.decide(sch, now)
		if err != nil {
			// A schedule kept by an older or broken writer: stop it rather
			// than fail on it every tick.
			runs = []tool.ScheduleRun{{Trigger: tool.TriggerSchedule, Scheduled: sch.NextRun, Started: now, Finished: &now, Status: tool.RunError,
				Error: "the schedule cannot be computed: " + err.Error() + "; fix it with update"}}
			next = nil
		}
		runs, ok, err := s.st.Claim(ctx, sch.ID, *sch.NextRun, next, runs)
		if err != nil || !ok || !slices.ContainsFunc(runs, running) {
			s.inFlight.Delete(sch.ID)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, run := range runs {
			out = append(out, claimed{sch, run})
		}
	}
	return out, errors.Join(errs...)
}

func running(r tool.ScheduleRun) bool { return r.Status == tool.RunRunning }

// decide applies the missed-run policy to a due schedule: the records of
// what becomes of each of its occurrences from the one it is due at up to
// the first after now — at most one runs, every other one is recorded
// skipped (a run of several occurrences in one record) — and that next
// occurrence. The records stand for every occurrence in that span exactly
// once, so that a claim, which moves the schedule past them, leaves none
// of them unaccounted for however late the scheduler looks.
func (s *Scheduler) decide(sch tool.Schedule, now time.Time) ([]tool.ScheduleRun, *time.Time, error) {
	var next *time.Time
	n, ok, err := cron.Next(sch, now)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		next = &n
	}
	due := *sch.NextRun
	earliest := now.Add(-s.o.Grace)
	run := tool.ScheduleRun{Trigger: tool.TriggerSchedule, Scheduled: &due, Started: now, Status: tool.RunRunning, Node: s.node}
	var out []tool.ScheduleRun
	if due.Before(earliest) {
		// Missed by more than the grace window: if later occurrences fell
		// within it, the schedule runs once for them (for the first of them).
		o, ok, err := cron.Next(sch, earliest.Add(-time.Nanosecond))
		if err != nil {
			return nil, nil, err
		}
		late := fmt.Sprintf("no scheduler looked until %s, past the grace window of %s", now.Format(time.RFC3339), s.o.Grace)
		if !ok || o.After(now) {
			skip, err := s.skipped(sch, due, next, now, late)
			return []tool.ScheduleRun{skip}, next, err
		}
		skip, err := s.skipped(sch, due, &o, now, late)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, skip)
		run.Trigger, run.Scheduled = tool.TriggerCatchUp, &o
	}
	out = append(out, run)
	// The occurrences after the one that runs, up to now: the run stands for
	// them.
	after, ok, err := cron.Next(sch, *run.Scheduled)
	if err != nil {
		return nil, nil, err
	}
	if ok && next != nil && after.Before(*next) {
		skip, err := s.skipped(sch, after, next, now, fmt.Sprintf("the run for %s, started %s, stood in: a schedule runs once to catch up", run.Scheduled.Format(time.RFC3339), now.Format(time.RFC3339)))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, skip)
	}
	return out, next, nil
}

// skippedUntilNow is the record of the occurrences of sch from its next
// run up to now, skipped for the reason why.
func (s *Scheduler) skippedUntilNow(sch tool.Schedule, now time.Time, why string) (tool.ScheduleRun, error) {
	end, ok, err := cron.Next(sch, now)
	if err != nil {
		return tool.ScheduleRun{}, err
	}
	if !ok {
		return s.skipped(sch, *sch.NextRun, nil, now, why)
	}
	return s.skipped(sch, *sch.NextRun, &end, now, why)
}

// skipped is the record of the occurrences of sch from first up to, not
// including, end (nil: first alone), skipped for the reason why.
func (s *Scheduler) skipped(sch tool.Schedule, first time.Time, end *time.Time, now time.Time, why string) (tool.ScheduleRun, error) {
	run := tool.ScheduleRun{Trigger: tool.TriggerSchedule, Scheduled: &first, Started: now, Finished: &now, Status: tool.RunSkipped, Node: s.node,
		Error: fmt.Sprintf("missed: due at %s; %s", first.Format(time.RFC3339), why)}
	if end == nil {
		return run, nil
	}
	second, ok, err := cron.Next(sch, first)
	if err != nil || !ok || !second.Before(*end) {
		return run, err
	}
	run.Until = end
	run.Error = fmt.Sprintf("missed: every occurrence from %s to before %s; %s", first.Format(time.RFC3339), end.Format(time.RFC3339), why)
	return run, nil
}

// execute runs a claimed or manual run and records how it ended.
func (s *Scheduler) execute(ctx context.Context, sch tool.Schedule, run tool.ScheduleRun) tool.ScheduleRun {
	stop := s.keepLease(ctx, run.ID)
	summary, err := s.perform(ctx, sch)
	stop()
	end := s.now()
	run.Finished, run.Summary, run.Status = &end, textclip.Clip(strings.TrimSpace(summary), SummaryChars), tool.RunOK
	if err != nil {
		run.Status, run.Error = tool.RunError, err.Error()
		if run.Trigger != tool.TriggerManual {
			// Nobody waits for this run: the process that ran it says so.
			s.o.Log.Warn("cron: a scheduled run failed", "schedule", sch.ID, "run", run.ID, "err", err)
		}
	}
	if err := s.st.Finish(context.WithoutCancel(ctx), run); err != nil {
		s.o.Log.Error("cron: recording a run", "schedule", sch.ID, "run", run.ID, "err", err)
	}
	return run
}

// approval says, when schedule sch's tool call would need a person's
// approval, that each run waits for it in the console of toolbelt serve
// (the runs' confirmer), and why; "" when it would run unasked. The call is
// checked as the pipeline would run it, without running it
// (invoke.Runner.NeedsApproval); what would stop it otherwise (a denial,
// an unknown tool) is left to the run, which records it, as the policy and
// the tools may change until then. A message to an agent session is not
// checked.
func (s *Scheduler) approval(ctx context.Context, sch tool.Schedule) string {
	r := s.runner.Load()
	if r == nil || sch.Payload.IsMessage() {
		return ""
	}
	call := tool.Call{ID: tool.NewCallID("cron"), Name: sch.Payload.Tool, Arguments: sch.Payload.Arguments}
	why, _ := r.NeedsApproval(invoke.WithCaller(ctx, callerOf(sch)), call)
	if why == "" {
		return ""
	}
	wait := "console.approvalTimeout"
	if d := s.o.ApprovalTimeout; d > 0 {
		wait = d.String() + " (console.approvalTimeout)"
	}
	return fmt.Sprintf("Each run of this call of %s needs a person's approval (%s): it waits for it in the console of `toolbelt serve` for up to %s, "+
		"and fails if nobody approves it by then. To run it unasked, allow this exact call in the workspace (call it at a terminal and answer \"this workspace\").",
		sch.Payload.Tool, why, wait)
}

// callerOf is who a schedule's tool call runs as: whoever set the
// schedule — their principal, channel, agent, owner flag, sandbox and
// sub-agent limits, so the same policy layers apply as to their own calls
// — in a session of the schedule's own, so the audit record says who and
// which schedule.
func callerOf(sch tool.Schedule) tool.Identity {
	as := sch.Owner
	as.SessionKey, as.Channel = "cron:"+sch.ID, cmp.Or(as.Channel, "cron")
	return as
}

// perform does what a schedule's payload says, as whoever set it.
func (s *Scheduler) perform(ctx context.Context, sch tool.Schedule) (string, error) {
	p := sch.Payload
	if sch.Legacy {
		return "", fmt.Errorf("schedule %s was kept before a schedule recorded the rights and limits of whoever set it, so it does not run: remove it and add it again (toolbelt cron remove %s, then toolbelt cron add …, or the cron tool's remove and add)", sch.ID, sch.ID)
	}
	if p.IsMessage() {
		if s.o.Deliver == nil {
			return "", errors.New(cmp.Or(s.o.NoDeliver, "messages to agent sessions cannot be delivered here: no agent runner is configured"))
		}
		return s.o.Deliver(ctx, sch)
	}
	r := s.runner.Load()
	if r == nil {
		return "", errors.New("no tool pipeline to run the call in")
	}
	ctx = invoke.WithCaller(ctx, callerOf(sch))
	msg := r.Run(ctx, tool.Call{ID: tool.NewCallID("cron"), Name: p.Tool, Arguments: p.Arguments})
	text := resultText(msg)
	if env, ok := tool.ParseEnvelope(text); ok && msg.IsError && env.Status == "blocked" {
		return text, fmt.Errorf("the call of %s was blocked, so it did not run: %s", p.Tool, env.Reason)
	}
	if msg.IsError {
		return text, fmt.Errorf("%s returned an error: %s", p.Tool, textclip.Clip(strings.TrimSpace(text), SummaryChars))
	}
	return text, nil
}

func resultText(msg tool.ResultMessage) string {
	var b strings.Builder
	for _, c := range msg.Content {
		if c.Type == tool.TextContent {
			b.WriteString(c.Text)
		} else {
			b.WriteString("[" + string(c.Type) + "]")
		}
	}
	return b.String()
}
