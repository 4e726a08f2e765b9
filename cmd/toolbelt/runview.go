package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/todo"
)

// needsApprovalHint says how to run a call that was blocked because it
// needed an approval nobody was there to give.
const needsApprovalHint = "  needs approval: rerun with --yes, approve at a terminal, or in the console of toolbelt serve (confirm and tools.ask in toolbelt.yaml say what needs it)"

// runView shows on stderr what an agent run does: each call as it starts
// and how it ended — ✓ ran, ✗ failed, ✗ blocked (with the reason, and how
// to approve a call nobody could approve), … waiting — and sub-agents and
// background jobs as they start and finish. While any of them is under
// way, a spinner says what (a call's own progress where it reports one),
// if spinners are on and stderr is a terminal.
type runView struct {
	e *env
	// spins turns the spinner on (not for --json or --events output).
	spins bool
	// unapproved holds the ids of calls the pipeline blocked because
	// nobody could approve them (see outcomeStep), until their line shows.
	unapproved sync.Map

	mu     sync.Mutex
	active []activity // what is under way, oldest first
	spin   *spinner
	paused bool
}

// activity is something under way: a call, a sub-agent or a job.
type activity struct{ id, label string }

// outcomeStep is a pipeline step, first of all, that notes the calls the
// pipeline blocked because they needed an approval nobody could give —
// as its own outcome and confirmation record say, not its words.
func (v *runView) outcomeStep() invoke.Option {
	step := invoke.Step{Name: "outcome", Wrap: func(next invoke.Handler) invoke.Handler {
		return func(ctx context.Context, req *invoke.Request) tool.Result {
			res := next(ctx, req)
			if c := req.Confirmation; c != nil && req.Outcome == invoke.OutcomeDenied && c.Answer == "none" && !c.Asked {
				v.unapproved.Store(req.Call.ID, true)
			}
			return res
		}
	}}
	return invoke.WithSteps(func(s []invoke.Step) []invoke.Step { return append([]invoke.Step{step}, s...) })
}

// onCallEvent shows a call's events for session label prefix ("" for the
// run's own session, "[KEY] " for others): its start, its progress and how
// it ended.
func (v *runView) onCallEvent(prefix string, ev agent.Event) {
	name := prefix + termsafe.Line(ev.ToolName)
	switch ev.Type {
	case agent.EventToolStart:
		v.begin(ev.CallID, "Running "+name, fmt.Sprintf("→ %s %s", name, clipLine(string(ev.Args), 200)))
	case agent.EventToolUpdate:
		if text := strings.TrimSpace(ev.Result.Text()); text != "" {
			v.progress(ev.CallID, name+": "+text)
		}
	case agent.EventToolEnd:
		v.end(ev.CallID, v.callLine(name, ev))
	}
}

// callLine says how a call ended, from its result's envelope (the status
// the model sees) and what the pipeline noted about it.
func (v *runView) callLine(name string, ev agent.Event) string {
	text := ev.Result.Text()
	env, isEnvelope := tool.ParseEnvelope(text)
	_, unapproved := v.unapproved.LoadAndDelete(ev.CallID)
	switch {
	case isEnvelope && env.Status == "blocked":
		line := fmt.Sprintf("✗ %s blocked: %s", name, clipLine(env.Reason, 300))
		if unapproved {
			line += "\n" + needsApprovalHint
		}
		return line
	case isEnvelope && env.Status == "pending":
		return fmt.Sprintf("… %s waiting: %s", name, clipLine(waitingFor(text, env), 200))
	case ev.IsError && isEnvelope:
		return fmt.Sprintf("✗ %s failed: %s", name, clipLine(env.Error, 200))
	case ev.IsError:
		return fmt.Sprintf("✗ %s failed: %s", name, clipLine(text, 200))
	case ev.ToolName == todo.Name:
		// The plan, whole: the person follows the agent's steps.
		return "✓ " + name + ": " + strings.ReplaceAll(termsafe.Text(text), "\n", "\n  ")
	}
	return fmt.Sprintf("✓ %s ran: %s", name, clipLine(text, 120))
}

// waitingFor says what a pending call waits for: its background job, or
// the envelope's message (an approval to come).
func waitingFor(text string, env tool.Envelope) string {
	var job tool.PendingEnvelope
	if json.Unmarshal([]byte(text), &job) == nil && job.TaskID != "" {
		return "it runs in the background as job " + job.TaskID
	}
	return env.Message
}

// onSubagentEvent shows a sub-agent's session key starting and finishing
// a run, and its calls.
func (v *runView) onSubagentEvent(key string, ev agent.Event) {
	id, who := "agent:"+key, "sub-agent "+termsafe.Line(key)
	switch ev.Type {
	case agent.EventAgentStart:
		v.begin(id, "Waiting for "+who, "→ "+who+" started")
	case agent.EventAgentEnd:
		line := "✓ " + who + " finished"
		if ev.Error != "" {
			line = "✗ " + who + " stopped: " + clipLine(ev.Error, 200)
		}
		v.end(id, line)
	default:
		v.onCallEvent("["+termsafe.Line(key)+"] ", ev)
	}
}

// jobPending shows that the run waits for background job j.
func (v *runView) jobPending(j tool.JobInfo) {
	v.begin("job:"+j.TaskID, fmt.Sprintf("Waiting for background job %s (%s)", j.TaskID, j.Tool), "")
}

// jobProgress shows what background job j reports.
func (v *runView) jobProgress(j tool.JobInfo) {
	v.progress("job:"+j.TaskID, strings.TrimSpace(fmt.Sprintf("job %s (%s) %d%% %s", j.TaskID, j.Tool, j.Progress, j.Message)))
}

// jobFinished shows how background job j ended.
func (v *runView) jobFinished(j tool.JobInfo) {
	line := fmt.Sprintf("✓ job %s (%s) %s", j.TaskID, j.Tool, j.Status)
	if j.Status != "completed" {
		line = fmt.Sprintf("✗ job %s (%s) %s", j.TaskID, j.Tool, j.Status)
		if j.Error != "" {
			line += ": " + j.Error
		}
	}
	v.end("job:"+j.TaskID, termsafe.Line(line))
}

// begin notes that id is under way, printing line first (unless empty);
// an id already under way is left as it is.
func (v *runView) begin(id, label, line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.print(line)
	if slices.ContainsFunc(v.active, func(a activity) bool { return a.id == id }) {
		return
	}
	v.active = append(v.active, activity{id, label})
	v.show()
}

// progress changes what the spinner says about id.
func (v *runView) progress(id, text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if i := slices.IndexFunc(v.active, func(a activity) bool { return a.id == id }); i >= 0 {
		v.active[i].label = text
		v.show()
	}
}

// end notes that id is over and prints line.
func (v *runView) end(id, line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.active = slices.DeleteFunc(v.active, func(a activity) bool { return a.id == id })
	v.print(line)
	v.show()
}

// print writes line on stderr, the spinner's line cleared first; v.mu is
// held.
func (v *runView) print(line string) {
	if line == "" {
		return
	}
	v.spin.Pause()
	fmt.Fprintln(v.e.stderr, line)
	if !v.paused {
		v.spin.Resume()
	}
}

// show makes the spinner say what is under way, starting it when work
// begins and stopping it when nothing is left; v.mu is held.
func (v *runView) show() {
	if !v.spins {
		return
	}
	if len(v.active) == 0 {
		v.spin.Stop()
		v.spin = nil
		return
	}
	msg := v.active[0].label
	if n := len(v.active) - 1; n > 0 {
		msg = fmt.Sprintf("%s (and %d more)", msg, n)
	}
	if v.spin != nil {
		v.spin.Set(msg + "…")
		return
	}
	if v.spin = v.e.startSpinner(msg + "…"); v.paused {
		v.spin.Pause()
	}
}

// Pause clears the spinner's line and keeps it off until Resume, so that
// a question can use the terminal.
func (v *runView) Pause() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paused = true
	v.spin.Pause()
}

// Resume lets the spinner draw again after Pause.
func (v *runView) Resume() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paused = false
	v.spin.Resume()
}

// Stop removes the spinner, whatever is still under way.
func (v *runView) Stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.active = nil
	v.show()
}
