package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolbelt/toolbelt/tool"
)

// resultReadName is the tool that reads full results kept under a call id
// (tools/sessions).
const resultReadName = "result_read"

// summarize returns the summary fn makes of res, with a handle to the full
// result kept under id, or res itself when fn declines, fails, or no full
// result can be kept or read.
func (c *Compact) summarize(ctx context.Context, fn Summarizer, id string, res tool.Result) tool.Result {
	outputs := c.runner.Context().Outputs
	if outputs == nil {
		return res
	}
	if _, ok := c.Index().Tool(resultReadName); !ok {
		return res // the model could not read the full result
	}
	summary, ok := c.safeSummary(fn, res)
	if !ok {
		return res
	}
	origin := externalOrigin(res)
	if !keptByPipeline(res.Details, id) {
		// Kept for the scope the inner pipeline runs result_read in, and
		// with the result's origin, so each page of it is wrapped too.
		keep := tool.WithScope(ctx, c.runner.Context().Scope())
		if origin != nil {
			keep = tool.WithOrigin(keep, *origin)
		}
		if err := outputs.Put(keep, id, fullText(res)); err != nil {
			c.opts.Logger.Warn("keeping a summarized result failed; returning it whole", "call", id, "err", err)
			return res
		}
	}
	args, _ := json.Marshal(struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}{resultReadName, map[string]string{"callId": id}})
	notice := fmt.Sprintf("[This is a summary. The full result is kept: call tool_call with %s to read it.]", args)
	summary = strings.TrimRight(summary, "\n")
	if origin != nil {
		// A summary of text from outside may quote it: it goes back
		// wrapped, with the source, and the notice stays outside.
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: summary, Origin: origin}, {Type: tool.TextContent, Text: notice}}, Details: res.Details}
	}
	return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: summary + "\n" + notice}}, Details: res.Details}
}

// externalOrigin is where the first text of res from outside came from, or
// nil when none is: text made from it (a summary) is from there too.
func externalOrigin(res tool.Result) *tool.Origin {
	for _, c := range res.Content {
		if c.Type == tool.TextContent && c.Origin.IsExternal() {
			return tool.FromOutside(c.Origin.Source)
		}
	}
	return nil
}

// safeSummary runs a summarizer; a panic counts as declining.
func (c *Compact) safeSummary(fn Summarizer, res tool.Result) (summary string, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("result summarizer panicked; returning the result whole", "panic", p)
			summary, ok = "", false
		}
	}()
	summary, ok = fn(res)
	return summary, ok && strings.TrimSpace(summary) != ""
}

// keptByPipeline reports whether the pipeline cut the result and kept its
// full text under id itself (its "truncated" note says so).
func keptByPipeline(details any, id string) bool {
	d, ok := details.(map[string]any)
	if !ok {
		return false
	}
	note, ok := d["truncated"].(map[string]any)
	return ok && note["callId"] == id
}

// fullText is the text kept for a result: its text blocks, and a line for
// each image or audio block.
func fullText(res tool.Result) string {
	parts := make([]string, 0, len(res.Content))
	for _, c := range res.Content {
		switch c.Type {
		case tool.TextContent:
			parts = append(parts, c.Text)
		case tool.ImageContent, tool.AudioContent:
			parts = append(parts, fmt.Sprintf("[%s: %s, %d bytes]", c.Type, c.MIMEType, decodedLen(c.Data)))
		case tool.ResourceContent:
			parts = append(parts, c.Describe())
		}
	}
	return strings.Join(parts, "\n")
}

// decodedLen is the number of bytes base64 text decodes to.
func decodedLen(b64 string) int {
	return len(b64)/4*3 - (len(b64) - len(strings.TrimRight(b64, "=")))
}
