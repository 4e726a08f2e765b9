package main

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/tools/browser"
)

// axeSource is axe-core, vendored (axe/README.md says which version).
//
//go:embed axe/axe.min.js
var axeSource string

// checkSource is the function that measures the page at one viewport.
//
//go:embed check.js
var checkSource string

// defaultBudgetKB is the page-weight budget when the call gives none.
const defaultBudgetKB = 500

// issue is one finding of validate_page.
type issue struct {
	Check    string   `json:"check"`
	Rule     string   `json:"rule"`
	Impact   string   `json:"impact,omitempty"`
	Viewport string   `json:"viewport,omitempty"`
	Message  string   `json:"message"`
	Targets  []string `json:"targets,omitempty"`
	Fix      string   `json:"fix,omitempty"`
}

// measured is what check.js returns.
type measured struct {
	Width, ScrollWidth int
	Overflowing        []string
	ViewportMeta       bool
	UnsizedImages      []string
	Bytes, Requests    int
	Violations         []struct {
		ID, Impact, Help, HelpURL string
		Targets                   []string
	}
}

type validateArgs struct {
	Checks   []string
	Page     string
	BudgetKB int
}

// validatePage runs axe-core and the responsive and page-weight checks in
// the page and returns every finding.
func validatePage(ctx context.Context, s *site, raw json.RawMessage) (response, error) {
	var args validateArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return response{}, err
	}
	if len(args.Checks) == 0 {
		args.Checks = []string{"accessibility", "responsive", "performance"}
	}
	args.Page, args.BudgetKB = cmp.Or(args.Page, "index.html"), cmp.Or(args.BudgetKB, defaultBudgetKB)
	url, err := s.url(args.Page)
	if err != nil {
		return response{}, err
	}
	issues := []issue{}
	weight := -1
	for _, name := range viewportOrder {
		desktop := name == "desktop"
		opts := map[string]bool{
			"responsive":  slices.Contains(args.Checks, "responsive"),
			"performance": desktop && slices.Contains(args.Checks, "performance"),
			"axe":         desktop && slices.Contains(args.Checks, "accessibility"),
		}
		if !opts["responsive"] && !desktop {
			continue
		}
		m, err := measure(ctx, s, url, viewports[name], opts)
		if err != nil {
			return response{}, err
		}
		issues = append(issues, judge(name, m, opts, args.BudgetKB)...)
		if opts["performance"] {
			weight = m.Bytes
		}
	}
	result := map[string]any{"page": args.Page, "checks": args.Checks, "passed": len(issues) == 0, "issues": issues}
	if weight >= 0 {
		result["weightKB"], result["budgetKB"] = kb(weight), args.BudgetKB
	}
	summary := fmt.Sprintf("%s passes %s", args.Page, strings.Join(args.Checks, ", "))
	if len(issues) > 0 {
		summary = fmt.Sprintf("%s: %d issues to fix", args.Page, len(issues))
	}
	return response{Result: result, Summary: summary}, nil
}

// measure runs check.js (after axe-core when opts asks for it) in the page
// at the viewport vp.
func measure(ctx context.Context, s *site, url string, vp viewport, opts map[string]bool) (measured, error) {
	o, _ := json.Marshal(opts)
	script := "(" + checkSource + ")(" + string(o) + ")"
	if opts["axe"] {
		script = axeSource + ";\n" + script
	}
	raw, err := s.browser.Inspect(ctx, "preview", url, browser.CaptureOptions{Width: vp.Width, Height: vp.Height}, script)
	if err != nil {
		return measured{}, err
	}
	var m measured
	if err := json.Unmarshal(raw, &m); err != nil {
		return measured{}, fmt.Errorf("the checks answered %.200s: %w", raw, err)
	}
	return m, nil
}

// judge turns what was measured at the viewport vp into findings; the
// findings about the document itself (meta viewport, image sizes) are made
// at the desktop viewport only, once.
func judge(vp string, m measured, opts map[string]bool, budgetKB int) []issue {
	var out []issue
	for _, v := range m.Violations {
		out = append(out, issue{Check: "accessibility", Rule: v.ID, Impact: v.Impact, Message: v.Help, Targets: v.Targets, Fix: v.HelpURL})
	}
	if opts["responsive"] && m.ScrollWidth > m.Width {
		out = append(out, issue{Check: "responsive", Rule: "horizontal-overflow", Impact: "serious", Viewport: vp,
			Message: fmt.Sprintf("the page is %d px wide in a %d px viewport: it scrolls sideways", m.ScrollWidth, m.Width),
			Targets: m.Overflowing, Fix: "let these elements shrink (max-width: 100%, flex-wrap, no fixed widths)"})
	}
	if opts["responsive"] && vp == "desktop" {
		if !m.ViewportMeta {
			out = append(out, issue{Check: "responsive", Rule: "meta-viewport", Impact: "serious",
				Message: "the page has no <meta name=\"viewport\">: phones show it zoomed out",
				Fix:     `add <meta name="viewport" content="width=device-width, initial-scale=1"> to <head>`})
		}
		if len(m.UnsizedImages) > 0 {
			out = append(out, issue{Check: "responsive", Rule: "image-dimensions", Impact: "moderate",
				Message: "images without width and height attributes shift the layout as they load",
				Targets: m.UnsizedImages, Fix: "give every <img> width and height attributes (its intrinsic size)"})
		}
	}
	if opts["performance"] && kb(m.Bytes) > budgetKB {
		out = append(out, issue{Check: "performance", Rule: "page-weight", Impact: "moderate",
			Message: fmt.Sprintf("the page weighs %d KB in %d requests, over the budget of %d KB", kb(m.Bytes), m.Requests, budgetKB),
			Fix:     "compress or resize images, drop unused scripts and fonts"})
	}
	return out
}

// kb rounds bytes up to kilobytes.
func kb(bytes int) int { return (bytes + 1023) / 1024 }
