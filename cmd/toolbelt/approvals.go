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
	List   approvalsListCmd   `cmd:"" help:"List the actions a person allowed in the workspace until revoked, and the rules they saved: tool, who, when."`
	Revoke approvalsRevokeCmd `cmd:"" help:"Revoke the workspace's approvals and saved rules (all, one tool's, or one rule); recorded in the audit log."`
}

type approvalsListCmd struct {
	workspaceFlags
	JSON bool `name:"json" help:"Print JSON: {workspace, approvals: [{fingerprint, tool, by, at}], rules: [{rule, tool, by, at}]}."`
}

// listedApprovals is what toolbelt approvals list --json prints.
type listedApprovals struct {
	Workspace string            `json:"workspace"`
	Approvals []store.Approval  `json:"approvals"`
	Rules     []store.SavedRule `json:"rules"`
}

func (c *approvalsListCmd) Run(e *env) error {
	ws, st, err := c.stateOf(e)
	if err != nil {
		return err
	}
	a := st.Approvals(ws)
	list, err := a.List(context.Background())
	if err != nil {
		return err
	}
	rules, err := a.SavedRules(context.Background())
	if err != nil {
		return err
	}
	if c.JSON {
		return writeJSON(e.stdout, listedApprovals{ws, append([]store.Approval{}, list...), append([]store.SavedRule{}, rules...)})
	}
	if len(list) == 0 && len(rules) == 0 {
		_, err := fmt.Fprintf(e.stdout, "No actions are allowed in %s.\n", ws)
		return err
	}
	// Only approvals for the workspace are kept: one for a session lives
	// in that session's process.
	if len(list) > 0 {
		fmt.Fprintf(e.stdout, "Allowed in %s until revoked (toolbelt approvals revoke [TOOL]):\n", ws)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tBY\tAT\tFINGERPRINT")
		for _, a := range list {
			tableRow(tw, a.Tool, a.By, a.At.Local().Format(time.DateTime), a.Fingerprint[:min(12, len(a.Fingerprint))])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(rules) > 0 {
		fmt.Fprintf(e.stdout, "Rules saved for %s, allowing the calls they match until revoked (toolbelt approvals revoke RULE):\n", ws)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tBY\tAT")
		for _, r := range rules {
			tableRow(tw, r.Rule, r.By, r.At.Local().Format(time.DateTime))
		}
		return tw.Flush()
	}
	return nil
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
	What string `arg:"" optional:"" placeholder:"TOOL|RULE" help:"Forget only this tool's approvals and saved rules, or this one saved rule (exec(npm run test:*))."`
	workspaceFlags
}

func (c *approvalsRevokeCmd) Run(e *env) error {
	ws, tb, err := c.root(e, stateRoot)
	if err != nil {
		return err
	}
	grants, rules, err := tb.RevokeApprovals(context.Background(), ws, strings.TrimSpace(c.What), personHere())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "Forgot %d approval(s) and %d saved rule(s) in %s; those actions ask again.\n", grants, rules, ws)
	return err
}
