package cron

import (
	"context"

	"github.com/toolbelt/toolbelt/tool"
)

// Scheduler keeps and runs the schedules of the cron tool (package
// automation's Scheduler is one).
type Scheduler interface {
	// Add keeps a new schedule (its ID, Created and NextRun are set) and
	// returns it as kept, with Approval set when each run of its call
	// waits for a person's approval.
	Add(ctx context.Context, s tool.Schedule) (tool.Schedule, error)
	// Update replaces schedule s.ID's timing, payload, name and enabled
	// state, recomputing its next run, and returns it as Add does.
	Update(ctx context.Context, s tool.Schedule) (tool.Schedule, error)
	// Get returns a schedule; tool.ErrNoSchedule when there is none.
	Get(ctx context.Context, id string) (tool.Schedule, error)
	// Remove forgets a schedule and its runs.
	Remove(ctx context.Context, id string) error
	// List returns the schedules by next run.
	List(ctx context.Context) ([]tool.Schedule, error)
	// RunNow runs a schedule at once, whether due or not, and returns the
	// run when it ends.
	RunNow(ctx context.Context, id string) (tool.ScheduleRun, error)
	// Runs returns a schedule's latest runs, the newest first.
	Runs(ctx context.Context, id string, limit int) ([]tool.ScheduleRun, error)
}

// SchedulerService is the key of the scheduler a tool context carries for
// the cron tool; without one the tool is unavailable.
var SchedulerService = tool.NewService[Scheduler]()
