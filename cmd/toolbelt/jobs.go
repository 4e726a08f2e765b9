package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// envWebhookSecret holds the webhook secret; it wins over jobs.webhookSecret.
const envWebhookSecret = "TOOLBELT_WEBHOOK_SECRET"

type jobsCmd struct {
	List   jobsListCmd   `cmd:"" default:"withargs" help:"List the jobs of async tools, the newest first."`
	Show   jobsShowCmd   `cmd:"" help:"Show a job: its status, progress, result or error."`
	Cancel jobsCancelCmd `cmd:"" help:"Cancel a job that has not finished."`
	Retry  jobsRetryCmd  `cmd:"" help:"Run a failed or cancelled job again (a server working jobs picks it up)."`
}

type jobsListCmd struct {
	Status  string `help:"Only jobs of this status (pending, processing, completed, failed, cancelled)." placeholder:"STATUS"`
	Session string `help:"Only the jobs of this session." placeholder:"KEY"`
	Limit   int    `help:"Show at most N jobs (default 100)." placeholder:"N"`
	JSON    bool   `name:"json" help:"Print a JSON array of the jobs."`
	workspaceFlags
}

type jobsShowCmd struct {
	ID   string `arg:"" help:"The job's task id."`
	JSON bool   `name:"json" help:"Print the job as JSON."`
	workspaceFlags
}

type jobsCancelCmd struct {
	ID   string `arg:"" help:"The job's task id."`
	JSON bool   `name:"json" help:"Print the job as JSON."`
	workspaceFlags
}

type jobsRetryCmd struct {
	ID   string `arg:"" help:"The job's task id."`
	JSON bool   `name:"json" help:"Print the job as JSON."`
	workspaceFlags
}

// readQueue opens the jobs of the workspace's store without working them.
func (e *env) readQueue(f workspaceFlags) (*jobs.Queue, error) {
	_, tb, err := f.root(e, pipelineRoot)
	if err != nil {
		return nil, err
	}
	return tb.JobRecords(context.Background())
}

var jobStatuses = []string{jobs.StatusPending, jobs.StatusProcessing, jobs.StatusCompleted, jobs.StatusFailed, jobs.StatusCancelled}

func (c *jobsListCmd) Run(e *env) error {
	if c.Limit < 0 {
		return fmt.Errorf("--limit must not be negative")
	}
	if c.Status != "" && !contains(jobStatuses, c.Status) {
		return fmt.Errorf("--status %q: use one of %s", c.Status, strings.Join(jobStatuses, ", "))
	}
	q, err := e.readQueue(c.workspaceFlags)
	if err != nil {
		return err
	}
	list, err := q.List(context.Background(), jobs.Filter{Status: c.Status, Session: c.Session, Limit: c.Limit})
	if err != nil {
		return err
	}
	if c.JSON {
		if list == nil {
			list = []tool.JobInfo{}
		}
		return writeJSON(e.stdout, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No jobs. Calls of async tools start them (toolbelt serve or toolbelt run works them).")
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tTOOL\tSTATUS\tPROGRESS\tCREATED\tCOMPLETED\tSESSION")
	for _, j := range list {
		done := "-"
		if j.CompletedAt != nil {
			done = j.CompletedAt.Local().Format(time.DateTime)
		}
		tableRow(tw, j.TaskID, j.Tool, j.Status, fmt.Sprintf("%d%%", j.Progress), j.CreatedAt.Local().Format(time.DateTime), done, orDash(j.Session))
	}
	return tw.Flush()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// printJob prints one job for people, or as JSON.
func (e *env) printJob(j tool.JobInfo, asJSON bool) error {
	if asJSON {
		return writeJSON(e.stdout, j)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			tableRow(tw, k, v)
		}
	}
	row("task", j.TaskID)
	row("tool", j.Tool)
	row("status", j.Status)
	row("progress", fmt.Sprintf("%d%%", j.Progress))
	row("message", j.Message)
	row("created", j.CreatedAt.Local().Format(time.DateTime))
	if j.CompletedAt != nil {
		row("completed", j.CompletedAt.Local().Format(time.DateTime))
	}
	row("session", j.Session)
	row("workspace", j.Workspace)
	row("call", j.CallID)
	if len(j.Result) > 0 {
		row("result", jobtools.ResultText(j.Result))
	}
	row("error", j.Error)
	return tw.Flush()
}

// jobOrNotFound turns the queue's not-found error into a usage error that
// says how to find ids.
func jobOrNotFound(err error, id string) error {
	if err != nil && strings.Contains(err.Error(), jobs.ErrNotFound.Error()) {
		return fmt.Errorf("no job %q: toolbelt jobs lists them", id)
	}
	return err
}

func (c *jobsShowCmd) Run(e *env) error {
	q, err := e.readQueue(c.workspaceFlags)
	if err != nil {
		return err
	}
	j, err := q.Get(context.Background(), strings.TrimSpace(c.ID))
	if err != nil {
		return jobOrNotFound(err, c.ID)
	}
	return e.printJob(j, c.JSON)
}

func (c *jobsCancelCmd) Run(e *env) error {
	q, err := e.readQueue(c.workspaceFlags)
	if err != nil {
		return err
	}
	j, err := q.CancelAny(context.Background(), strings.TrimSpace(c.ID))
	if err != nil {
		return jobOrNotFound(err, c.ID)
	}
	return e.printJob(j, c.JSON)
}

func (c *jobsRetryCmd) Run(e *env) error {
	q, err := e.readQueue(c.workspaceFlags)
	if err != nil {
		return err
	}
	j, err := q.Retry(context.Background(), strings.TrimSpace(c.ID))
	if err != nil {
		return jobOrNotFound(err, c.ID)
	}
	return e.printJob(j, c.JSON)
}
