package cron

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/agents"
)

// Register adds the cron tool to reg; it is available where the tool
// context keeps schedules (tool.Context.Cron).
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(cronTool, tool.Meta{
		ID: "cron", Label: "Schedule Tasks", Description: description, Source: tool.SourceCore,
	})
}

const description = "Schedule work for later or on a rhythm: a reminder or recurring task delivered as a message to an agent " +
	"session, or a tool call run with your rights. Timing: kind cron (expr, 5 fields \"min hour day month weekday\", " +
	"in time zone tz), every (an interval like \"15m\") or at (one time, RFC 3339). Actions: add, update (by id), " +
	"remove, list, status (counts and the next run), run (now), runs (history). Times in results are UTC."

type args struct {
	Action     string         `json:"action" enum:"add,update,remove,list,status,run,runs" jsonschema:"add: a new schedule. update: change one (only the fields given). remove: delete one and its history. list: all schedules with their next runs. status: how many schedules there are, how many are enabled, and which runs next. run: run one now. runs: one schedule's latest runs."`
	ID         string         `json:"id,omitempty" jsonschema:"The schedule's id (from add or list); for update, remove, run and runs."`
	Name       string         `json:"name,omitempty" jsonschema:"A short name for people." maxLength:"200"`
	Kind       string         `json:"kind,omitempty" enum:"cron,every,at" jsonschema:"The timing; inferred from expr, every or at when omitted."`
	Expr       string         `json:"expr,omitempty" jsonschema:"kind cron: minute hour day-of-month month day-of-week, e.g. \"30 9 * * 1-5\" (9:30 on weekdays), \"0 */2 * * *\", or @hourly, @daily, @weekly, @monthly."`
	TZ         string         `json:"tz,omitempty" jsonschema:"kind cron: the IANA time zone expr is read in, e.g. \"Europe/Berlin\" (default UTC)."`
	Every      string         `json:"every,omitempty" jsonschema:"kind every: the interval, e.g. \"30s\", \"15m\", \"2h\" (at least 1s)."`
	At         string         `json:"at,omitempty" jsonschema:"kind at: when to run once, RFC 3339 with an offset, e.g. \"2026-12-24T18:00:00+01:00\"." format:"date-time"`
	Message    string         `json:"message,omitempty" jsonschema:"Payload: the text delivered as a user message to the agent session (a reminder or a task)."`
	AgentID    string         `json:"agentId,omitempty" jsonschema:"With message: the agent to run (default: yours)."`
	SessionKey string         `json:"sessionKey,omitempty" jsonschema:"With message: the session to deliver to (default: your session, or the agent's main session)."`
	Tool       string         `json:"tool,omitempty" jsonschema:"Payload instead of message: the tool to call, through the same checks as any call."`
	Arguments  map[string]any `json:"arguments,omitempty" jsonschema:"With tool: the call's arguments."`
	Enabled    *bool          `json:"enabled,omitempty" jsonschema:"Whether the schedule runs when due (default true); false pauses it."`
	Limit      int            `json:"limit,omitempty" jsonschema:"runs: how many of the latest runs to return." minimum:"1" maximum:"200" default:"20"`
}

func cronTool(tc *tool.Context) (*tool.Tool, error) {
	c, ok := SchedulerService.Get(tc)
	if !ok {
		return nil, errors.New("no schedule store: this context does not keep schedules")
	}
	t, err := tool.New("cron", description, func(ctx context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		return do(ctx, c, inv.Context, in)
	})
	return &t, err
}

func do(ctx context.Context, c Scheduler, tc *tool.Context, in args) (tool.Result, error) {
	if in.Action != "add" && in.Action != "list" && in.Action != "status" && strings.TrimSpace(in.ID) == "" {
		return tool.Result{}, tool.InputErrorf("%s needs id: the schedule's id, as add returned it or list shows it.", in.Action)
	}
	id := strings.TrimSpace(in.ID)
	switch in.Action {
	case "add":
		// The schedule runs as its caller, with the caller's limits.
		s := tool.Schedule{Name: in.Name, Enabled: in.Enabled == nil || *in.Enabled, Owner: tc.Identity}
		if err := timing(&s, in); err != nil {
			return tool.Result{}, err
		}
		if !in.hasPayload() {
			return tool.Result{}, tool.InputErrorf("add needs a payload: message (text for an agent session) or tool (with arguments).")
		}
		if err := payload(&s, tc, in); err != nil {
			return tool.Result{}, err
		}
		s, err := c.Add(ctx, s)
		if err != nil {
			return tool.Result{}, inputError(err, id)
		}
		return tool.JSON(map[string]any{"added": s})
	case "update":
		s, err := manageable(ctx, c, tc, id)
		if err != nil {
			return tool.Result{}, err
		}
		if in.Kind != "" || in.Expr != "" || in.TZ != "" || in.Every != "" || in.At != "" {
			// A cron schedule keeps its expression when only tz is given,
			// and its zone when only expr is.
			if s.Kind == tool.ScheduleCron && (in.Kind == "" || in.Kind == tool.ScheduleCron) && in.Every == "" && in.At == "" {
				in.Kind = tool.ScheduleCron
				if in.Expr == "" {
					in.Expr = s.Expr
				}
				if in.TZ == "" {
					in.TZ = s.TZ
				}
			}
			if err := timing(&s, in); err != nil {
				return tool.Result{}, err
			}
			s.Anchor = time.Time{}
		}
		// Arguments alone change the call's arguments; agentId or
		// sessionKey alone, where the message goes.
		switch p := s.Payload; {
		case in.Tool == "" && in.Message == "" && in.Arguments != nil && !p.IsMessage():
			in.Tool = p.Tool
		case in.Tool == "" && in.Message == "" && (in.AgentID != "" || in.SessionKey != "") && p.IsMessage():
			in.Message = p.Text
		}
		if in.hasPayload() {
			if err := payload(&s, tc, in); err != nil {
				return tool.Result{}, err
			}
			// What it does is now the caller's: it runs as the caller.
			s.Owner, s.Legacy = tc.Identity, false
		}
		if in.Name != "" {
			s.Name = in.Name
		}
		if in.Enabled != nil {
			s.Enabled = *in.Enabled
		}
		if s, err = c.Update(ctx, s); err != nil {
			return tool.Result{}, inputError(err, id)
		}
		return tool.JSON(map[string]any{"updated": s})
	case "remove":
		if _, err := manageable(ctx, c, tc, id); err != nil {
			return tool.Result{}, err
		}
		if err := c.Remove(ctx, id); err != nil {
			return tool.Result{}, inputError(err, id)
		}
		return tool.JSON(map[string]any{"removed": id})
	case "list":
		list, err := c.List(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		mine := []tool.Schedule{}
		for _, s := range list {
			if beyond(s, tc) == "" {
				mine = append(mine, s)
			}
		}
		return tool.JSON(map[string]any{"schedules": mine, "now": time.Now().UTC()})
	case "status":
		list, err := c.List(ctx)
		if err != nil {
			return tool.Result{}, err
		}
		return tool.JSON(statusOf(list, tc))
	case "run":
		if _, err := manageable(ctx, c, tc, id); err != nil {
			return tool.Result{}, err
		}
		run, err := c.RunNow(ctx, id)
		if err != nil {
			return tool.Result{}, inputError(err, id)
		}
		return tool.JSON(map[string]any{"run": run})
	case "runs":
		if _, err := manageable(ctx, c, tc, id); err != nil {
			return tool.Result{}, err
		}
		runs, err := c.Runs(ctx, id, in.Limit)
		if err != nil {
			return tool.Result{}, inputError(err, id)
		}
		return tool.JSON(map[string]any{"scheduleId": id, "runs": runs})
	}
	return tool.Result{}, tool.InputErrorf("unknown action %q: use add, update, remove, list, status, run or runs", in.Action)
}

// status is the status action's result: the seeds' cron status.
type status struct {
	Schedules int `json:"schedules"`
	Enabled   int `json:"enabled"`
	// Next is the enabled schedule that runs first; nil when none will.
	Next *nextRun  `json:"next"`
	Now  time.Time `json:"now"`
}

// nextRun names the schedule that runs next and when.
type nextRun struct {
	ID   string    `json:"id"`
	Name string    `json:"name,omitempty"`
	At   time.Time `json:"at"`
}

// statusOf counts the schedules of list that tc's caller may see.
func statusOf(list []tool.Schedule, tc *tool.Context) status {
	st := status{Now: time.Now().UTC()}
	for _, s := range list {
		if beyond(s, tc) != "" {
			continue
		}
		st.Schedules++
		if !s.Enabled {
			continue
		}
		st.Enabled++
		if s.NextRun != nil && (st.Next == nil || s.NextRun.Before(st.Next.At)) {
			st.Next = &nextRun{ID: s.ID, Name: s.Name, At: s.NextRun.UTC()}
		}
	}
	return st
}

// manageable returns schedule id, or why tc's caller may not see, change or
// run it.
func manageable(ctx context.Context, c Scheduler, tc *tool.Context, id string) (tool.Schedule, error) {
	s, err := c.Get(ctx, id)
	if err != nil {
		return s, inputError(err, id)
	}
	if why := beyond(s, tc); why != "" {
		return s, tool.InputErrorf("Schedule %q was set with rights you lack (%s): you can see, change and run only schedules set with rights you have.", id, why)
	}
	return s, nil
}

// beyond says which rights schedule s runs with that tc's caller lacks; ""
// when none. A legacy schedule may have been set with any: only a caller
// with every right (the owner, unsandboxed, not a sub-agent) manages it.
func beyond(s tool.Schedule, tc *tool.Context) string {
	set := s.Owner
	if s.Legacy {
		set = tool.Identity{Owner: true}
	}
	return set.Exceeds(tc.Identity)
}

// inputError turns what the model can fix into an input error.
func inputError(err error, id string) error {
	if errors.Is(err, tool.ErrNoSchedule) {
		return tool.InputErrorf("No schedule %q here. Use list to see the schedules and their ids.", id)
	}
	return err
}

func (in args) hasPayload() bool { return in.Message != "" || in.Tool != "" }

// timing sets s's kind and timing from the arguments, inferring the kind,
// and checks them.
func timing(s *tool.Schedule, in args) error {
	kind := in.Kind
	if kind == "" {
		var kinds []string
		for k, set := range map[string]bool{tool.ScheduleCron: in.Expr != "", tool.ScheduleEvery: in.Every != "", tool.ScheduleAt: in.At != ""} {
			if set {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) != 1 {
			return tool.InputErrorf("Give the timing as exactly one of expr (with tz), every or at.")
		}
		kind = kinds[0]
	}
	*s = tool.Schedule{ID: s.ID, Name: s.Name, Enabled: s.Enabled, Owner: s.Owner, Payload: s.Payload, Kind: kind, Expr: in.Expr, TZ: in.TZ, Every: in.Every}
	if in.At != "" {
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(in.At))
		if err != nil {
			return tool.InputErrorf("at %q is not an RFC 3339 time: write it like \"2026-12-24T18:00:00+01:00\" or \"2026-12-24T17:00:00Z\".", in.At)
		}
		s.At = &at
	}
	if err := Check(s); err != nil {
		return tool.InputErrorf("%s.", err.Error())
	}
	return nil
}

// payload sets s's payload from the arguments.
func payload(s *tool.Schedule, tc *tool.Context, in args) error {
	switch {
	case in.Message != "" && in.Tool != "":
		return tool.InputErrorf("Give one payload: message (for an agent session) or tool (a call), not both.")
	case in.Tool != "":
		if in.AgentID != "" || in.SessionKey != "" {
			return tool.InputErrorf("agentId and sessionKey go with message, not with tool.")
		}
		a := json.RawMessage(`{}`)
		if in.Arguments != nil {
			b, err := schema.Encode(in.Arguments) // <, > and & as given
			if err != nil {
				return tool.InputErrorf("arguments cannot be encoded: %v", err)
			}
			a = b
		}
		if strings.TrimSpace(in.Tool) == "cron" {
			return tool.InputErrorf("A schedule cannot call cron itself.")
		}
		if tc.Sandboxed || tc.Subagent {
			// The scheduled call would run outside the sandbox and the
			// sub-agent policy that bind this caller.
			return tool.InputErrorf("A sandboxed caller or a sub-agent cannot schedule tool calls; schedule a message instead.")
		}
		s.Payload = tool.SchedulePayload{Tool: strings.TrimSpace(in.Tool), Arguments: a}
	default:
		if in.Arguments != nil {
			return tool.InputErrorf("arguments go with tool, not with message.")
		}
		p := tool.SchedulePayload{Text: in.Message, AgentID: in.AgentID, SessionKey: in.SessionKey}
		if p.SessionKey == "" && p.AgentID == "" || p.SessionKey == tc.SessionKey && p.AgentID == "" {
			// A reminder to oneself: the caller's agent and session.
			p.AgentID, p.SessionKey = tc.AgentID, tc.SessionKey
		}
		if tc.Subagent && (p.SessionKey != tc.SessionKey || p.AgentID != tc.AgentID) {
			// Any other session would run the message beside the limits
			// of this sub-agent's place below its parent.
			return tool.InputErrorf("A sub-agent may schedule messages only to its own session (%s): leave agentId and sessionKey out.", tc.SessionKey)
		}
		if p.AgentID != "" && len(agents.Configured(tc)) > 0 {
			if _, ok := agent(tc, p.AgentID); !ok {
				return tool.InputErrorf("No agent %q is configured. Configured: %s.", p.AgentID, agentIDs(tc))
			}
		}
		// An agent may send scheduled messages to itself and to the agents
		// it may spawn, no others.
		if caller, ok := agents.Caller(tc); ok && p.AgentID != caller.ID && !caller.MayTarget(p.AgentID) {
			return tool.InputErrorf("Agent %s may not send messages to agent %q: its subagents.allow does not name it.", caller.ID, p.AgentID)
		}
		s.Payload = p
	}
	return nil
}

func agent(tc *tool.Context, id string) (tool.AgentInfo, bool) {
	for _, a := range agents.Configured(tc) {
		if a.ID == id {
			return a, true
		}
	}
	return tool.AgentInfo{}, false
}

func agentIDs(tc *tool.Context) string {
	ids := make([]string, len(agents.Configured(tc)))
	for i, a := range agents.Configured(tc) {
		ids[i] = a.ID
	}
	return strings.Join(ids, ", ")
}
