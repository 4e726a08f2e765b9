package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

type approvalsCmd struct {
	List   approvalsListCmd   `cmd:"" help:"List the actions a person allowed always in the workspace."`
	Revoke approvalsRevokeCmd `cmd:"" help:"Forget the workspace's \"allow always\" answers (all, or one tool's)."`
}

type approvalsListCmd struct {
	workspaceFlags
	JSON bool `name:"json" help:"Print JSON."`
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
		if list == nil {
			return writeJSON(e.stdout, []any{})
		}
		return writeJSON(e.stdout, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(e.stdout, "No actions are allowed always in %s.\n", ws)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tBY\tAT\tFINGERPRINT")
	for _, a := range list {
		tableRow(tw, a.Tool, a.By, a.At.Local().Format(time.DateTime), a.Fingerprint[:min(12, len(a.Fingerprint))])
	}
	return tw.Flush()
}

type approvalsRevokeCmd struct {
	Tool string `arg:"" optional:"" help:"Forget only this tool's approvals."`
	workspaceFlags
}

func (c *approvalsRevokeCmd) Run(e *env) error {
	ws, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	n, err := st.Approvals(ws).Revoke(context.Background(), strings.TrimSpace(c.Tool))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "Forgot %d approval(s) in %s; those actions ask again.\n", n, ws)
	return err
}
