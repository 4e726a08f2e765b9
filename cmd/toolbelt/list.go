package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/toolbelt/toolbelt/catalog"
	"github.com/toolbelt/toolbelt/internal/termsafe"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// selectFlags choose tools by profile, section and id or group.
type selectFlags struct {
	Profile string   `help:"Only tools of this profile (minimal, coding, messaging, full)."`
	Section string   `help:"Only tools of this section (fs, runtime, web, …)."`
	Include []string `help:"Only these tools or groups (ids, aliases, group:NAME), comma-separated." sep:","`
	Exclude []string `help:"Leave out these tools or groups, comma-separated." sep:","`
}

// options checks the flags against reg and returns the registry options they
// stand for.
func (s selectFlags) options(reg *registry.Registry) ([]registry.Option, error) {
	var opts []registry.Option
	if s.Profile != "" {
		if !catalog.IsProfile(s.Profile) {
			return nil, fmt.Errorf("unknown profile %q: use one of %s", s.Profile, strings.Join(catalog.Profiles(), ", "))
		}
		opts = append(opts, registry.Profile(s.Profile))
	}
	if s.Section != "" {
		if _, known := catalog.SectionOrder(s.Section); !known && len(reg.List(registry.Section(s.Section))) == 0 {
			return nil, fmt.Errorf("unknown section %q", s.Section)
		}
		opts = append(opts, registry.Section(s.Section))
	}
	if unknown := reg.Unknown(append(append([]string(nil), s.Include...), s.Exclude...)); len(unknown) > 0 {
		return nil, fmt.Errorf("no tool or group matches %s", strings.Join(unknown, ", "))
	}
	if len(s.Include) > 0 {
		opts = append(opts, registry.Include(s.Include...))
	}
	if len(s.Exclude) > 0 {
		opts = append(opts, registry.Exclude(s.Exclude...))
	}
	return opts, nil
}

type listCmd struct {
	selectFlags
	workspaceFlags
	JSON bool `name:"json" help:"Print a JSON array instead of a table."`
}

// listedTool is one tool in `list --json`.
type listedTool struct {
	ID                string   `json:"id"`
	Label             string   `json:"label"`
	Description       string   `json:"description"`
	Section           string   `json:"section"`
	Profiles          []string `json:"profiles"`
	Risk              string   `json:"risk"`
	Available         bool     `json:"available"`
	UnavailableReason string   `json:"unavailableReason"`
	Source            string   `json:"source"`
	// Dir is the folder of a directory tool; Untrusted says why the agent
	// could have written it, for an untrusted one.
	Dir       string `json:"dir,omitempty"`
	Untrusted string `json:"untrusted,omitempty"`
}

func (c *listCmd) Run(e *env) error {
	reg, err := e.registry()
	if err != nil {
		return err
	}
	opts, err := c.options(reg)
	if err != nil {
		return err
	}
	tc, err := c.toolContext(e)
	if err != nil {
		return err
	}
	reasons := map[string]string{}
	reg.ResolveAll(tc, func(id string, err error) { reasons[id] = err.Error() }, opts...)
	if c.JSON {
		out := []listedTool{}
		for _, m := range reg.List(opts...) {
			l := listed(m, reasons[m.ID])
			l.Dir, l.Untrusted = e.dirOf(m.ID)
			out = append(out, l)
		}
		return writeJSON(e.stdout, out)
	}
	return printList(e, reg.ListBySection(opts...), reasons)
}

func listed(m tool.Meta, reason string) listedTool {
	profiles := m.Profiles
	if profiles == nil {
		profiles = []string{}
	}
	return listedTool{
		ID: m.ID, Label: m.Label, Description: m.Description, Section: m.Section,
		Profiles: profiles, Risk: m.Risk.String(), Available: reason == "", UnavailableReason: reason,
		Source: string(m.Source),
	}
}

func printList(e *env, sections []registry.SectionList, reasons map[string]string) error {
	col := colorsFor(e.stdout)
	if len(sections) == 0 {
		_, err := fmt.Fprintln(e.stdout, "No tools match.")
		return err
	}
	// One set of column widths for every section, so the table reads as one.
	// An imported tool's name and title are its server's: each is shown on
	// one line, escapes visible.
	var wID, wLabel, wRisk int
	for _, s := range sections {
		for _, m := range s.Tools {
			wID, wLabel, wRisk = max(wID, len(termsafe.Line(m.ID))), max(wLabel, len(termsafe.Line(m.Label))), max(wRisk, len(m.Risk.String()))
		}
	}
	var b strings.Builder
	total, available := 0, 0
	for i, s := range sections {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch title, id := termsafe.Line(s.Section.Title), termsafe.Line(s.Section.ID); {
		case id == "":
			fmt.Fprintf(&b, "%s %s\n", col.bold("Other"), col.dim("()"))
		case title == id: // a section the catalog does not know: "mcp"
			fmt.Fprintf(&b, "%s\n", col.bold(title))
		default:
			fmt.Fprintf(&b, "%s %s\n", col.bold(title), col.dim("("+id+")"))
		}
		for _, m := range s.Tools {
			total++
			status := col.green("available")
			if r, ok := reasons[m.ID]; ok {
				status = col.yellow("unavailable: " + termsafe.Line(r))
			} else {
				available++
			}
			switch d, untrusted := e.dirOf(m.ID); {
			case untrusted != "":
				status += col.dim("  (untrusted directory tool: " + termsafe.Line(d) + ")")
			case d != "":
				status += col.dim("  (directory tool: " + termsafe.Line(d) + ")")
			}
			fmt.Fprintf(&b, "  %-*s  %-*s  %-*s  %s\n", wID, termsafe.Line(m.ID), wLabel, termsafe.Line(m.Label), wRisk, m.Risk, status)
		}
	}
	noun := "tools"
	if total == 1 {
		noun = "tool"
	}
	fmt.Fprintf(&b, "\n%d %s, %d available\n", total, noun, available)
	_, err := io.WriteString(e.stdout, b.String())
	return err
}
