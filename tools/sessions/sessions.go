// Package sessions holds the tools of the sessions section that work on the
// current session's own record: result_read, which reads the rest of a result
// the pipeline cut short.
package sessions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Register adds result_read to reg.
func Register(reg *registry.Registry) error {
	return reg.RegisterFactory(resultRead, tool.Meta{
		ID:          "result_read",
		Label:       "Read Full Result",
		Description: resultReadDescription,
		ReadOnly:    true,
		Source:      tool.SourceCore,
	})
}

const resultReadDescription = "Read part of a tool result that was cut short. When a result ends with " +
	"\"[... N more characters truncated. ... call result_read with {...}]\", call this tool with those " +
	"arguments to read on; repeat with the next offset until you have what you need."

type resultReadArgs struct {
	CallID string `json:"callId" jsonschema:"The call id named in the truncation notice." minLength:"1"`
	Offset int    `json:"offset,omitempty" jsonschema:"Where to start, in characters from the start of the full result (0-based). The notice gives it." minimum:"0"`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many characters to return." minimum:"1" maximum:"100000" default:"20000"`
}

// resultRead makes the tool for a context whose pipeline keeps full outputs.
func resultRead(tc *tool.Context) (*tool.Tool, error) {
	if tc == nil || tc.Outputs == nil {
		return nil, errors.New("no output store: full results are not kept in this context")
	}
	t, err := tool.New("result_read", resultReadDescription, func(ctx context.Context, in resultReadArgs, inv tool.Invocation) (tool.Result, error) {
		return read(ctx, inv.Context.Outputs, in)
	})
	return &t, err
}

func read(ctx context.Context, outputs tool.Outputs, in resultReadArgs) (tool.Result, error) {
	out, ok, err := outputs.Get(ctx, in.CallID)
	if err != nil {
		return tool.Result{}, fmt.Errorf("reading the kept result: %w", err)
	}
	if !ok {
		return tool.Result{}, tool.InputErrorf("No full result is kept for call %q. Use the call id from the truncation notice exactly; results are kept only for a while.", in.CallID)
	}
	full := out.Text
	if out.Origin.IsExternal() {
		// The whole text, not each page: a page boundary must not split
		// marker-like text so that neither half is recognized.
		full = content.Neutralize(full)
	}
	total := utf8.RuneCountInString(full)
	if in.Offset >= total {
		return tool.Result{}, tool.InputErrorf("Offset %d is past the end: the result of call %q has %d characters.", in.Offset, in.CallID, total)
	}
	page := content.Chars(full, in.Offset, in.Limit)
	last := in.Offset + utf8.RuneCountInString(page)
	footer := fmt.Sprintf("[Characters %d-%d of %d.", in.Offset, last, total)
	if last < total {
		footer += fmt.Sprintf(" Use offset=%d to continue.]", last)
	} else {
		footer += " This is the end.]"
	}
	res := tool.Text(page + "\n" + footer)
	if out.Origin.IsExternal() {
		// The page goes back as it came: from outside, with its source,
		// so the pipeline wraps it; the footer is this tool's own.
		res.Content = []tool.Content{
			{Type: tool.TextContent, Text: page, Origin: tool.FromOutside(cmp.Or(out.Origin.Source, "the kept output of call "+in.CallID))},
			{Type: tool.TextContent, Text: footer},
		}
	}
	res.Details = map[string]any{"callId": in.CallID, "offset": in.Offset, "end": last, "total": total}
	return res, nil
}
