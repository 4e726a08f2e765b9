package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

// deliver runs an agent with a schedule's message, as toolbelt run --agent
// would, on the message's session (by default the agent's main session, or
// a session of the schedule's own when it names no agent), asked for by
// whoever set the schedule: a kept session runs as itself, and only when it
// has no right they lacked; a new one runs as them. Without a model
// configured the run fails, saying so.
func (e *env) deliver(workspace string) automation.Deliver {
	return func(ctx context.Context, s tool.Schedule) (string, error) {
		p := s.Payload
		key := p.SessionKey
		switch {
		case key != "":
		case p.AgentID != "":
			key = store.SessionKey(p.AgentID, "", "")
		default:
			key = "cron:" + s.ID
		}
		as := s.Owner
		as.Channel = cmp.Or(as.Channel, "cron")
		f := agentFlags{Agent: p.AgentID, Session: key, as: &as}
		if p.AgentID == "" {
			f.Workspace = workspace
		}
		ar, err := f.setup(e)
		if err != nil {
			return "", fmt.Errorf("cannot run an agent for the message: %w", err)
		}
		defer ar.closer.Close()
		transcript, err := ar.runSession(ctx, e, key, p.Text)
		answer := ""
		if n := len(transcript); n > 0 && transcript[n-1].Role == "assistant" {
			answer = transcript[n-1].Text()
		}
		return answer, err
	}
}

type cronCmd struct {
	List   cronListCmd   `cmd:"" default:"withargs" help:"List the workspace's schedules, the next to run first."`
	Add    cronAddCmd    `cmd:"" help:"Add a schedule: a tool call or a message to an agent, on a cron expression, an interval or once."`
	Remove cronRemoveCmd `cmd:"" help:"Remove a schedule and its history."`
	Run    cronRunCmd    `cmd:"" help:"Run a schedule now, through the pipeline, whether due or not."`
	Runs   cronRunsCmd   `cmd:"" help:"Show a schedule's latest runs, the newest first."`
}

// schedules opens the workspace's schedules, with a root of kind.
func (w workspaceFlags) schedules(e *env, kind rootKind) (*automation.Scheduler, error) {
	_, tb, err := w.root(e, kind)
	if err != nil {
		return nil, err
	}
	return tb.Scheduler(), nil
}

type cronListCmd struct {
	JSON bool `name:"json" help:"Print a JSON array of the schedules."`
	workspaceFlags
}

func (c *cronListCmd) Run(e *env) error {
	s, err := c.schedules(e, stateRoot)
	if err != nil {
		return err
	}
	list, err := s.List(context.Background())
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No schedules. Add one with toolbelt cron add, or let an agent use the cron tool.")
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tWHEN\tNEXT\tLAST\tDOES")
	for _, s := range list {
		next := "-"
		switch {
		case s.Legacy:
			next = "never: add it again"
		case !s.Enabled:
			next = "paused"
		case s.NextRun != nil:
			next = s.NextRun.Local().Format(time.DateTime)
		}
		last := "-"
		if s.LastRun != nil {
			last = s.LastRun.Local().Format(time.DateTime)
		}
		tableRow(tw, s.ID, orDash(s.Name), automation.When(s), next, last, does(s.Payload))
	}
	return tw.Flush()
}

// does says a payload in a few words.
func does(p tool.SchedulePayload) string {
	if !p.IsMessage() {
		// Schedules stored before their arguments were kept unescaped
		// have \u003e for >.
		return clipLine(p.Tool+" "+string(unescapeHTML([]byte(string(p.Arguments)))), 60)
	}
	to := p.AgentID
	if to == "" {
		to = "default model"
	}
	return clipLine("→ "+to+": "+p.Text, 60)
}

type cronAddCmd struct {
	Name     string `help:"A short name for people."`
	Cron     string `help:"Run on a 5-field cron expression: minute hour day-of-month month day-of-week, e.g. \"30 9 * * 1-5\"." placeholder:"EXPR"`
	TZ       string `name:"tz" help:"The IANA time zone of --cron, e.g. Europe/Berlin (default UTC)." placeholder:"ZONE"`
	Every    string `help:"Run every interval, e.g. 30s, 15m, 2h." placeholder:"DURATION"`
	At       string `help:"Run once at an RFC 3339 time, e.g. 2026-12-24T18:00:00+01:00." placeholder:"TIME"`
	Tool     string `help:"Call this tool when due." placeholder:"NAME"`
	Args     string `help:"The tool call's arguments, a JSON object." placeholder:"JSON"`
	Message  string `help:"Deliver this message to an agent session when due (instead of --tool)." placeholder:"TEXT"`
	Agent    string `help:"With --message: the configured agent to run (default: the default model with no agent)." placeholder:"ID"`
	Session  string `help:"With --message: the session to deliver to (default: the agent's main session)." placeholder:"KEY"`
	Disabled bool   `help:"Add the schedule paused."`
	JSON     bool   `name:"json" help:"Print the schedule as JSON."`
	Quiet    bool   `short:"q" help:"Print only the new schedule's id."`
	workspaceFlags
}

func (c *cronAddCmd) Run(e *env) error {
	s := tool.Schedule{Name: c.Name, Enabled: !c.Disabled, Owner: tool.Identity{Channel: "cli", Owner: true}}
	var kinds []string
	if c.Cron != "" {
		s.Kind, s.Expr, s.TZ = tool.ScheduleCron, c.Cron, c.TZ
		kinds = append(kinds, "--cron")
	}
	if c.Every != "" {
		s.Kind, s.Every = tool.ScheduleEvery, c.Every
		kinds = append(kinds, "--every")
	}
	if c.At != "" {
		at, err := time.Parse(time.RFC3339, c.At)
		if err != nil {
			return fmt.Errorf("--at %q is not an RFC 3339 time: write it like 2026-12-24T18:00:00+01:00", c.At)
		}
		s.Kind, s.At = tool.ScheduleAt, &at
		kinds = append(kinds, "--at")
	}
	switch {
	case len(kinds) != 1:
		return errors.New("give the timing once: --cron EXPR (with --tz), --every DURATION or --at TIME")
	case c.TZ != "" && c.Cron == "":
		return errors.New("--tz goes with --cron")
	case (c.Tool == "") == (c.Message == ""):
		return errors.New("say what the schedule does: --tool NAME (with --args JSON) or --message TEXT (with --agent)")
	case c.Tool != "" && (c.Agent != "" || c.Session != ""):
		return errors.New("--agent and --session go with --message, not --tool")
	case c.Message != "" && c.Args != "":
		return errors.New("--args goes with --tool, not --message")
	}
	if c.Tool != "" {
		args := json.RawMessage(`{}`)
		if c.Args != "" {
			var obj map[string]any
			if err := json.Unmarshal([]byte(c.Args), &obj); err != nil {
				return fmt.Errorf("--args is not a JSON object: %v; give one, such as --args '{\"path\": \"notes.txt\"}'", err)
			}
			args = json.RawMessage(c.Args)
		}
		s.Payload = tool.SchedulePayload{Tool: c.Tool, Arguments: args}
	} else {
		s.Payload = tool.SchedulePayload{Text: c.Message, AgentID: c.Agent, SessionKey: c.Session}
	}
	sched, err := c.schedules(e, pipelineRoot)
	if err != nil {
		return err
	}
	if c.Tool != "" {
		if _, ok := e.tb.Registry().Lookup(c.Tool); !ok {
			return fmt.Errorf("no tool %q: toolbelt list shows the tools", c.Tool)
		}
	}
	if c.Agent != "" {
		cfg, err := e.config()
		if err != nil {
			return err
		}
		if _, err := configuredAgent(cfg, c.Agent); err != nil {
			return err
		}
	}
	s, err = sched.Add(context.Background(), s)
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, s)
	}
	if c.Quiet {
		_, err = fmt.Fprintln(e.stdout, s.ID)
	} else {
		next := "never"
		if s.NextRun != nil {
			next = s.NextRun.Local().Format(time.DateTime)
		}
		_, err = fmt.Fprintf(e.stdout, "Added %s (%s), next run %s. toolbelt serve runs it when due.\n", s.ID, automation.When(s), next)
	}
	if err != nil || s.Approval == "" {
		return err
	}
	// With -q, stdout is the id alone.
	w := e.stdout
	if c.Quiet {
		w = e.stderr
	}
	_, err = fmt.Fprintln(w, termsafe.Text(s.Approval))
	return err
}

type cronRemoveCmd struct {
	ID string `arg:"" help:"The schedule's id."`
	workspaceFlags
}

func (c *cronRemoveCmd) Run(e *env) error {
	s, err := c.schedules(e, stateRoot)
	if err != nil {
		return err
	}
	if err := s.Remove(context.Background(), c.ID); err != nil {
		return noSchedule(err)
	}
	_, err = fmt.Fprintf(e.stdout, "Removed %s.\n", c.ID)
	return err
}

// noSchedule adds where to find the ids to an unknown id's error.
func noSchedule(err error) error {
	if errors.Is(err, tool.ErrNoSchedule) {
		return fmt.Errorf("%w; toolbelt cron list shows them", err)
	}
	return err
}

type cronRunCmd struct {
	ID   string `arg:"" help:"The schedule's id."`
	JSON bool   `name:"json" help:"Print the run as JSON."`
	workspaceFlags
	runFlags
}

func (c *cronRunCmd) Run(e *env) error {
	if c.DryRun {
		return errors.New("--dry-run is for call: a schedule's run is recorded as run")
	}
	tc, err := c.runContext(e)
	if err != nil {
		return err
	}
	r, closer, err := e.runner(tc, c.runFlags, invoke.Config{})
	if err != nil {
		return err
	}
	defer closer.Close()
	// The calls run as the person who asks, approved as they say.
	sched := e.tb.Scheduler()
	sched.SetRunner(r)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run, err := sched.RunNow(ctx, c.ID)
	if err != nil {
		return noSchedule(err)
	}
	if c.JSON {
		if err := writeJSON(e.stdout, run); err != nil {
			return err
		}
	} else {
		printRun(e, run)
	}
	if run.Status != tool.RunOK {
		return exitCode(exitToolError)
	}
	return nil
}

func printRun(e *env, r tool.ScheduleRun) {
	text := r.Summary
	if r.Error != "" {
		text = r.Error
	}
	fmt.Fprintf(e.stdout, "run %d of %s: %s\n", r.ID, r.ScheduleID, r.Status)
	if text != "" {
		fmt.Fprintln(e.stdout, termsafe.Text(strings.TrimRight(text, "\n")))
	}
}

type cronRunsCmd struct {
	ID    string `arg:"" help:"The schedule's id."`
	Limit int    `help:"Show at most N runs (default 20)." placeholder:"N"`
	JSON  bool   `name:"json" help:"Print a JSON array of the runs."`
	workspaceFlags
}

func (c *cronRunsCmd) Run(e *env) error {
	if c.Limit < 0 {
		return errors.New("--limit must not be negative")
	}
	s, err := c.schedules(e, stateRoot)
	if err != nil {
		return err
	}
	runs, err := s.Runs(context.Background(), c.ID, c.Limit)
	if err != nil {
		return noSchedule(err)
	}
	if c.JSON {
		return writeJSON(e.stdout, runs)
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintf(e.stdout, "%s has not run yet.\n", c.ID)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tTRIGGER\tSTATUS\tTOOK\tRESULT")
	for _, r := range runs {
		took, text := "-", r.Summary
		if r.Finished != nil {
			took = r.Finished.Sub(r.Started).Round(time.Millisecond).String()
		}
		if r.Error != "" {
			text = r.Error
		}
		tableRow(tw, strconv.FormatInt(r.ID, 10), r.Started.Local().Format(time.DateTime), r.Trigger, r.Status, took, clipLine(text, 80))
	}
	return tw.Flush()
}
