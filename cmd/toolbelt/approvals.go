package main

import (
	"context"
	"fmt"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

type approvalsCmd struct {
	List   approvalsListCmd   `cmd:"" help:"List the actions a person allowed in the workspace until revoked: tool, who, when."`
	Revoke approvalsRevokeCmd `cmd:"" help:"Revoke the workspace's approvals (all, or one tool's); recorded in the audit log."`
}

type approvalsListCmd struct {
	workspaceFlags
	JSON bool `name:"json" help:"Print JSON: {workspace, approvals: [{fingerprint, tool, by, at}]}."`
}

// listedApprovals is what toolbelt approvals list --json prints.
type listedApprovals struct {
	Workspace string           `json:"workspace"`
	Approvals []store.Approval `json:"approvals"`
}

func (c *approvalsListCmd) Run(e *env) error {
	ws, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	list, err := st.Approvals(ws).List(context.Background())
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, listedApprovals{ws, append([]store.Approval{}, list...)})
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(e.stdout, "No actions are allowed in %s.\n", ws)
		return err
	}
	// Only approvals for the workspace are kept: one for a session lives
	// in that session's process.
	fmt.Fprintf(e.stdout, "Allowed in %s until revoked (toolbelt approvals revoke [TOOL]):\n", ws)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tBY\tAT\tFINGERPRINT")
	for _, a := range list {
		tableRow(tw, a.Tool, a.By, a.At.Local().Format(time.DateTime), a.Fingerprint[:min(12, len(a.Fingerprint))])
	}
	return tw.Flush()
}

// personHere names the person at this command line, for the records of
// what they do: "cli (USER)".
func personHere() string {
	if u, err := user.Current(); err == nil {
		return "cli (" + u.Username + ")"
	}
	return "cli"
}

type approvalsRevokeCmd struct {
	Tool string `arg:"" optional:"" help:"Forget only this tool's approvals."`
	workspaceFlags
}

func (c *approvalsRevokeCmd) Run(e *env) error {
	ws, tb, err := c.root(e, stateRoot)
	if err != nil {
		return err
	}
	n, err := tb.RevokeApprovals(context.Background(), ws, strings.TrimSpace(c.Tool), personHere())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "Forgot %d approval(s) in %s; those actions ask again.\n", n, ws)
	return err
}
