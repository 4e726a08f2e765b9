package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/tool"
)

type describeCmd struct {
	Tool string `arg:"" help:"Tool name (id or alias)."`
	workspaceFlags
	JSON bool `name:"json" help:"Print JSON."`
}

// described is `describe --json`.
type described struct {
	Meta              tool.Meta          `json:"meta"`
	Parameters        *jsonschema.Schema `json:"parameters"`
	Available         bool               `json:"available"`
	UnavailableReason string             `json:"unavailableReason"`
	// Dir is the folder of a directory tool; Untrusted says why the agent
	// could have written it, for an untrusted one.
	Dir       string `json:"dir,omitempty"`
	Untrusted string `json:"untrusted,omitempty"`
}

func (c *describeCmd) Run(e *env) error {
	reg, err := e.registry()
	if err != nil {
		return err
	}
	id, ok := reg.Lookup(c.Tool)
	if !ok {
		msg := fmt.Sprintf("no tool is named %q", c.Tool)
		if close := reg.Suggest(c.Tool, 3); len(close) > 0 {
			msg += "; did you mean " + strings.Join(close, ", ") + "?"
		}
		return fmt.Errorf("%s", msg)
	}
	tc, err := c.toolContext(e)
	if err != nil {
		return err
	}
	meta, _ := reg.Meta(id)
	var reason string
	t, ok := reg.Resolve(id, tc, func(_ string, err error) { reason = err.Error() })
	d := described{Meta: meta, Available: ok, UnavailableReason: reason}
	d.Dir, d.Untrusted = e.dirOf(id)
	if ok {
		d.Parameters = t.Params()
		if d.Parameters == nil {
			d.Parameters = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		}
	}
	if c.JSON {
		return writeJSON(e.stdout, d)
	}
	return printDescription(e, d)
}

func printDescription(e *env, d described) error {
	col := colorsFor(e.stdout)
	m := d.Meta
	// An imported tool's name, title and description are its server's.
	fmt.Fprintf(e.stdout, "%s — %s\n", col.bold(termsafe.Line(m.ID)), termsafe.Line(m.Label))
	if m.Description != "" {
		fmt.Fprintf(e.stdout, "\n%s\n", termsafe.Text(m.Description))
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			tableRow(tw, "  "+k, v)
		}
	}
	if m.Section != "" {
		row("section", fmt.Sprintf("%s (%s)", m.Section, catalog.SectionTitle(m.Section)))
	}
	row("profiles", strings.Join(m.Profiles, ", "))
	row("groups", strings.Join(m.Groups, ", "))
	row("risk", m.Risk.String())
	row("flags", strings.Join(flags(m), ", "))
	if m.Timeout > 0 {
		row("timeout", m.Timeout.String())
	}
	if m.EstimatedTime > 0 {
		row("estimated", m.EstimatedTime.String())
	}
	row("confirm", m.ConfirmationMessage)
	if d.Dir != "" {
		row("source", string(m.Source)+" ("+d.Dir+")")
	} else {
		row("source", string(m.Source))
	}
	if d.Untrusted != "" {
		row("untrusted", d.Untrusted+": runs contained unless a person approves the call")
	}
	row("version", m.Version)
	status := col.green("available")
	if !d.Available {
		status = col.yellow("unavailable: " + termsafe.Line(d.UnavailableReason))
	}
	fmt.Fprintf(tw, "  status\t%s\n", status)
	if err := tw.Flush(); err != nil {
		return err
	}
	if d.Parameters != nil {
		fmt.Fprintln(e.stdout, "\nParameters:")
		return writeJSON(e.stdout, d.Parameters)
	}
	return nil
}

// flags lists a tool's boolean properties in words.
func flags(m tool.Meta) []string {
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(m.ReadOnly, "read-only")
	add(m.Destructive, "destructive")
	add(m.Idempotent, "idempotent")
	add(m.OpenWorld, "open-world")
	add(m.RequiresConfirmation, "requires confirmation")
	add(m.Async, "async")
	add(m.OwnerOnly, "owner-only")
	add(m.Optional, "optional")
	add(m.Capabilities.Background, "background")
	add(m.Capabilities.PTY, "pty")
	add(m.Capabilities.Elevated, "elevated")
	add(m.Capabilities.WorkspaceOnly, "workspace-only")
	return out
}
