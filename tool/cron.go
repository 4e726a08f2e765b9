package tool

import (
	"encoding/json"
	"errors"
	"time"
)

// The kinds of schedule: a 5-field cron expression in a time zone, a fixed
// interval, or one time.
const (
	ScheduleCron  = "cron"
	ScheduleEvery = "every"
	ScheduleAt    = "at"
)

// Schedule is a job the cron tool keeps: when it runs and what it does.
type Schedule struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	// Kind is ScheduleCron, ScheduleEvery or ScheduleAt.
	Kind string `json:"kind"`
	// Expr is a cron schedule's expression ("30 9 * * 1-5") and TZ the IANA
	// time zone it is read in ("" is UTC).
	Expr string `json:"expr,omitempty"`
	TZ   string `json:"tz,omitempty"`
	// Every is an interval schedule's period, as a Go duration ("15m0s");
	// its runs fall at Anchor + n·Every.
	Every string `json:"every,omitempty"`
	// At is when a one-time schedule runs.
	At *time.Time `json:"at,omitempty"`
	// Anchor is when the schedule was set (interval schedules count from it).
	Anchor time.Time `json:"anchor"`
	// Payload is what a run does.
	Payload SchedulePayload `json:"payload"`
	// Enabled schedules run when due; disabled ones keep their place.
	Enabled bool `json:"enabled"`
	// Owner is who set the schedule, with their rights and limits; its
	// runs run as them, never as more.
	Owner Identity `json:"owner"`
	// Legacy schedules were kept before a schedule recorded its setter's
	// rights and limits (Owner says only who set it): they do not run until
	// they are made again.
	Legacy bool `json:"legacy,omitempty"`
	// NextRun is when the schedule runs next; nil when it never will (a
	// one-time schedule that ran).
	NextRun *time.Time `json:"nextRun,omitempty"`
	// LastRun is when it last ran, nil before its first run.
	LastRun *time.Time `json:"lastRun,omitempty"`
	Created time.Time  `json:"created"`
	Updated time.Time  `json:"updated"`
	// Approval, on a schedule as adding or updating it returned, says that
	// each run of its tool call waits for a person's approval, why, where
	// and how long; "" when the call runs unasked. It is worked out then,
	// not kept.
	Approval string `json:"approval,omitempty"`
}

// SchedulePayload is what a run does: deliver Text as a user message to an
// agent's session, or call Tool with Arguments. Exactly one of Text and
// Tool is set.
type SchedulePayload struct {
	// AgentID is the configured agent the message is for ("" runs the
	// default model with no agent).
	AgentID string `json:"agentId,omitempty"`
	// SessionKey is the session the message goes to; "" is the agent's
	// main session.
	SessionKey string `json:"sessionKey,omitempty"`
	Text       string `json:"text,omitempty"`
	// Tool is the tool to call and Arguments its arguments (a JSON object).
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// IsMessage says the payload is a message to an agent session.
func (p SchedulePayload) IsMessage() bool { return p.Tool == "" }

// The statuses of a schedule's run.
const (
	RunRunning = "running"
	RunOK      = "ok"
	RunError   = "error"
	RunSkipped = "skipped"
)

// The triggers of a run: the schedule came due, it was due while nothing
// ran schedules (and is caught up), or someone asked for it.
const (
	TriggerSchedule = "schedule"
	TriggerCatchUp  = "catch-up"
	TriggerManual   = "manual"
)

// ScheduleRun is one run of a schedule.
type ScheduleRun struct {
	ID         int64  `json:"id"`
	ScheduleID string `json:"scheduleId"`
	Trigger    string `json:"trigger"`
	// Scheduled is the occurrence the run is for (when it was due); zero
	// for a manual run.
	Scheduled *time.Time `json:"scheduled,omitempty"`
	// Until, on a skipped run that stands for several occurrences, is the
	// end of them: it stands for every occurrence from Scheduled up to,
	// not including, Until. Nil when it stands for Scheduled alone.
	Until    *time.Time `json:"until,omitempty"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	// Status is one of the Run… statuses.
	Status string `json:"status"`
	// Summary is the start of the run's result; Error why it failed or was
	// skipped.
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`
	// Node names the process that ran it (host, process id and a random
	// part).
	Node string `json:"node,omitempty"`
}

// ErrNoSchedule is returned for a schedule id that is not kept.
var ErrNoSchedule = errors.New("no such schedule")
