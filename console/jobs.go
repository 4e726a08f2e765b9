package console

import (
	"context"
	"fmt"
	"net/http"

	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
)

// jobsShown is the most jobs the Jobs page lists.
const jobsShown = 200

// jobStatuses are the statuses a job can be in, for the filter.
var jobStatuses = []string{jobs.StatusPending, jobs.StatusProcessing, jobs.StatusCompleted, jobs.StatusFailed, jobs.StatusCancelled}

// jobsView is the Jobs page's data.
type jobsView struct {
	Status, Session string
	Statuses        []string
	Jobs            []tool.JobInfo
}

func (c *Console) loadJobs(r *http.Request, _ User) (any, error) {
	q := r.URL.Query()
	v := jobsView{Status: q.Get("status"), Session: q.Get("session"), Statuses: jobStatuses}
	if c.opts.Jobs == nil {
		return v, nil
	}
	var err error
	v.Jobs, err = c.opts.Jobs.List(r.Context(), jobs.Filter{Status: v.Status, Session: v.Session, Limit: jobsShown})
	return v, err
}

// cancelJob cancels a job that has not finished, as toolbelt jobs cancel
// does.
func (c *Console) cancelJob(w http.ResponseWriter, r *http.Request, _ User) {
	c.jobAction(w, r, "Cancelled", c.opts.Jobs.CancelAny)
}

// retryJob runs a failed or cancelled job again, as toolbelt jobs retry
// does.
func (c *Console) retryJob(w http.ResponseWriter, r *http.Request, _ User) {
	c.jobAction(w, r, "Retrying", c.opts.Jobs.Retry)
}

// jobAction does what to the job of the request's id and goes back to the
// Jobs page saying how it went.
func (c *Console) jobAction(w http.ResponseWriter, r *http.Request, done string, do func(ctx context.Context, id string) (tool.JobInfo, error)) {
	id := r.PathValue("id")
	if c.opts.Jobs == nil {
		redirect(w, r, "/jobs", "Nothing was done: this server keeps no jobs.")
		return
	}
	if _, err := do(r.Context(), id); err != nil {
		redirect(w, r, "/jobs", "Nothing was done: "+err.Error())
		return
	}
	redirect(w, r, "/jobs", fmt.Sprintf("%s job %s.", done, id))
}
