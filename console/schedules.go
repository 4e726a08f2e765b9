package console

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/tool"
)

// runsShown is the most runs a schedule's page lists.
const runsShown = 50

// scheduleRow is a schedule with its timing in words.
type scheduleRow struct {
	tool.Schedule
	When string
}

// scheduleView is a schedule's page: the schedule and its latest runs.
type scheduleView struct {
	scheduleRow
	Runs []runRow
}

// runRow is a run of a schedule with how long it took.
type runRow struct {
	tool.ScheduleRun
	Took time.Duration
}

func (c *Console) loadSchedules(r *http.Request, _ User) (any, error) {
	if c.opts.Scheduler == nil {
		return []scheduleRow{}, nil
	}
	list, err := c.opts.Scheduler.List(r.Context())
	rows := make([]scheduleRow, len(list))
	for i, s := range list {
		rows[i] = scheduleRow{s, automation.When(s)}
	}
	return rows, err
}

func (c *Console) loadSchedule(r *http.Request, _ User) (any, error) {
	if c.opts.Scheduler == nil {
		return nil, ErrNotFound
	}
	id := r.PathValue("id")
	s, err := c.opts.Scheduler.Get(r.Context(), id)
	if errors.Is(err, tool.ErrNoSchedule) {
		return nil, fmt.Errorf("no schedule %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	runs, err := c.opts.Scheduler.Runs(r.Context(), id, runsShown)
	if err != nil {
		return nil, err
	}
	v := scheduleView{scheduleRow: scheduleRow{s, automation.When(s)}}
	for _, run := range runs {
		row := runRow{ScheduleRun: run}
		if run.Finished != nil {
			row.Took = run.Finished.Sub(run.Started)
		}
		v.Runs = append(v.Runs, row)
	}
	return v, nil
}
