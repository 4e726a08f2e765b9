package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
)

type sessionsCmd struct {
	List   sessionsListCmd   `cmd:"" default:"withargs" help:"List the sessions in the store, the most recently updated first."`
	Show   sessionsShowCmd   `cmd:"" help:"Show a session: its record and its transcript."`
	Delete sessionsDeleteCmd `cmd:"" help:"Delete a session and its transcript (not while it runs); the audit log keeps that it was."`
	Rewind sessionsRewindCmd `cmd:"" help:"Take a session back to before one of its turns: the files its calls changed and its conversation (or one of them); without --to, list the turns."`
}

type sessionsListCmd struct {
	Agent string `help:"Only this agent's sessions." placeholder:"ID"`
	Limit int    `help:"Show at most N sessions (default 100)." placeholder:"N"`
	JSON  bool   `name:"json" help:"Print a JSON array of the sessions."`
	workspaceFlags
}

// listedSession is a session as toolbelt sessions --json prints it.
type listedSession struct {
	Key       string             `json:"key"`
	AgentID   string             `json:"agentId"`
	ParentKey string             `json:"parentKey"`
	Status    string             `json:"status"`
	Model     string             `json:"model"`
	Label     string             `json:"label"`
	Workspace string             `json:"workspace"`
	Messages  int                `json:"messages"`
	Usage     store.SessionUsage `json:"usage"`
	CreatedAt time.Time          `json:"createdAt"`
	UpdatedAt time.Time          `json:"updatedAt"`
	// RunsAs is who every run of the session runs as; absent for a
	// session kept before that was recorded.
	RunsAs *tool.Identity `json:"runsAs,omitempty"`
}

func listedSessionOf(s store.SessionInfo) listedSession {
	return listedSession{Key: s.ID, AgentID: s.AgentID, ParentKey: s.ParentKey, Status: s.Status, Model: s.Model, Label: s.Label,
		Workspace: s.Workspace, Messages: s.Messages, Usage: s.Usage, CreatedAt: s.Created.UTC(), UpdatedAt: s.Updated.UTC(), RunsAs: s.Identity}
}

func (c *sessionsListCmd) Run(e *env) error {
	if c.Limit < 0 {
		return fmt.Errorf("--limit must not be negative")
	}
	_, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	list, err := st.Sessions().List(context.Background(), store.SessionFilter{AgentID: c.Agent, Limit: c.Limit})
	if err != nil {
		return err
	}
	if c.JSON {
		out := make([]listedSession, 0, len(list))
		for _, s := range list {
			out = append(out, listedSessionOf(s))
		}
		return writeJSON(e.stdout, out)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No sessions. toolbelt run --agent ID or --session KEY keeps one.")
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tAGENT\tSTATUS\tMODEL\tMESSAGES\tTOKENS\tUPDATED\tPARENT")
	for _, s := range list {
		tableRow(tw, s.ID, orDash(s.AgentID), s.Status, orDash(s.Model), strconv.Itoa(s.Messages),
			fmt.Sprintf("%d/%d", s.Usage.Input, s.Usage.Output), s.Updated.Local().Format(time.DateTime), orDash(s.ParentKey))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type sessionsShowCmd struct {
	Key  string `arg:"" help:"The session's key."`
	JSON bool   `name:"json" help:"Print the session and its transcript as JSON."`
	workspaceFlags
}

func (c *sessionsShowCmd) Run(e *env) error {
	_, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	ctx := context.Background()
	info, err := st.Sessions().Info(ctx, c.Key)
	if err != nil {
		return fmt.Errorf("%w; toolbelt sessions lists them", err)
	}
	rows, err := st.Sessions().Messages(ctx, c.Key)
	if err != nil {
		return err
	}
	if c.JSON {
		msgs := make([]json.RawMessage, 0, len(rows))
		for _, r := range rows {
			msgs = append(msgs, r.Body)
		}
		return writeJSON(e.stdout, struct {
			listedSession
			Transcript []json.RawMessage `json:"transcript"`
		}{listedSessionOf(info), msgs})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session  %s\nagent    %s\nstatus   %s\nmodel    %s\nparent   %s\ntokens   %d in, %d out\ncreated  %s\nupdated  %s\n",
		termsafe.Line(info.ID), termsafe.Line(orDash(info.AgentID)), termsafe.Line(info.Status), termsafe.Line(orDash(info.Model)), termsafe.Line(orDash(info.ParentKey)), info.Usage.Input, info.Usage.Output,
		info.Created.Local().Format(time.DateTime), info.Updated.Local().Format(time.DateTime))
	for _, r := range rows {
		var m llm.Message
		if err := json.Unmarshal(r.Body, &m); err != nil {
			fmt.Fprintf(&b, "\n[%d] %s: (unreadable: %v)\n", r.Seq, r.Role, err)
			continue
		}
		fmt.Fprintf(&b, "\n[%d] %s", r.Seq, m.Role)
		if m.Role == llm.RoleToolResult {
			fmt.Fprintf(&b, " (%s)", termsafe.Line(m.ToolName))
		}
		b.WriteString(":\n")
		if t := strings.TrimSpace(m.Text()); t != "" {
			b.WriteString(termsafe.Text(t) + "\n")
		}
		for _, bl := range m.Content {
			if bl.Type == llm.BlockToolCall {
				fmt.Fprintf(&b, "→ %s %s\n", termsafe.Line(bl.Name), clipLine(string(bl.Arguments), 200))
			}
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

type sessionsDeleteCmd struct {
	Key string `arg:"" help:"The session's key."`
	workspaceFlags
}

// Run deletes the session, unless a run is using it, and records in the
// audit log that it was deleted, or refused.
func (c *sessionsDeleteCmd) Run(e *env) error {
	ws, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	ctx := context.Background()
	started := time.Now()
	info, err := st.Sessions().Delete(ctx, c.Key)
	refused := errors.Is(err, store.ErrSessionRunning)
	if err != nil && !refused {
		return fmt.Errorf("%w; toolbelt sessions lists them", err)
	}
	args, _ := json.Marshal(map[string]string{"session": c.Key})
	rec := audit.Record{
		Time: started, CallID: tool.NewCallID("sessions_delete"), Tool: "sessions_delete", SessionKey: c.Key, Channel: "cli", Owner: true,
		Workspace: cmp.Or(info.Workspace, ws), Arguments: args, Duration: time.Since(started),
	}
	if refused {
		rec.IsError, rec.ErrorClass = true, "running"
	}
	if err := e.tb.Record(ctx, rec); err != nil {
		return fmt.Errorf("recording the deletion of session %s in the audit log: %w", c.Key, err)
	}
	if refused {
		fmt.Fprintf(e.stderr, "toolbelt: session %s is running: it was not deleted. Delete it once its run has ended.\n", termsafe.Line(c.Key))
		return exitCode(exitToolError)
	}
	_, err = fmt.Fprintf(e.stdout, "Deleted session %s and its %d message(s).\n", termsafe.Line(c.Key), info.Messages)
	return err
}
