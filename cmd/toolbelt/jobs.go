package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/jobtools"
)

// envWebhookSecret holds the webhook secret; it wins over jobs.webhookSecret.
const envWebhookSecret = "TOOLBELT_WEBHOOK_SECRET"

// jobQueue returns the run's job queue, opening it on first use on the
// store's database, with the async tools the registry resolves for tc. A
// queue opened with work (serve, mcp, run) works jobs until the command
// ends (once startJobs is called); the jobs command's only reads and
// changes records.
func (e *env) jobQueue(tc *tool.Context, work bool) (*jobs.Queue, error) {
	if e.jobq != nil {
		return e.jobq, nil
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	if _, err := e.state(tc.Workspace); err != nil { // the store's checks and migrations
		return nil, err
	}
	dsn, _, err := e.storeDSN(os.Getenv)
	if err != nil {
		return nil, err
	}
	q, err := jobs.Open(context.Background(), dsn, jobs.Config{
		Workers: cfg.Jobs.Workers, StepTimeout: cfg.Jobs.StepTimeout.D(),
		WebhookSecret: cmp.Or(os.Getenv(envWebhookSecret), cfg.Jobs.WebhookSecret), PublicURL: cfg.Jobs.PublicURL,
		Logger: e.log, Run: work, Retention: cfg.Retention.Jobs.D(),
	})
	if err != nil {
		return nil, err
	}
	var async []tool.Tool
	for _, t := range e.toolsNow().ResolveAll(tc, nil) {
		if t.Async != nil {
			async = append(async, t)
		}
	}
	if err := q.Register(async...); err != nil {
		q.Stop(context.Background())
		return nil, err
	}
	e.jobq = q
	return q, nil
}

// startJobs starts working the jobs of a queue opened to work them, once
// the command is ready (serve: once it knows its address, which webhook
// URLs are made from).
func (e *env) startJobs() error {
	if e.jobq == nil || !e.workJobs {
		return nil
	}
	return e.jobq.Start(context.Background())
}

// hasAsyncTools says whether the registry holds an async tool. It does not
// wait for the imported MCP servers: their tools are never async.
func (e *env) hasAsyncTools() bool {
	return e.toolsNow().Any(func(m *tool.Meta) bool { return m.Async })
}

// closeJobs stops working jobs: steps in flight get a few seconds, and a
// step cut short runs again later.
func (e *env) closeJobs() {
	if e.jobq == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.jobq.Stop(ctx); err != nil {
		e.log.Debug("stopping the job queue", "err", err)
	}
}

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
	tc, err := f.runContext(e)
	if err != nil {
		return nil, err
	}
	return e.jobQueue(tc, false)
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
