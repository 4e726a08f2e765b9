package invoke

import (
	"context"
	"strings"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/tool"
)

// externalStep is the "external" step: the text of a tool marked
// ExternalContent comes back wrapped as untrusted content, so the model
// reads it as data, never as instructions. An async tool's call answers
// with Toolbelt's own pending envelope, which is not wrapped: its work's
// result is what comes from outside.
func (r *Runner) externalStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		res := next(ctx, req)
		if !req.Tool.Meta.ExternalContent || res.IsError || req.Tool.Async != nil {
			return res
		}
		w := content.Wrap{Source: r.source(req), Notice: r.cfg.ExternalNotice, OmitNotice: r.cfg.OmitExternalNotice}
		blocks := make([]tool.Content, len(res.Content))
		for i, c := range res.Content {
			if c.Type == tool.TextContent {
				c.Text = content.WrapExternal(c.Text, w)
			}
			blocks[i] = c
		}
		res.Content = blocks
		return res
	}
}

// source describes where external content came from: the tool and the
// address or query it was called with.
func (r *Runner) source(req *Request) string {
	args, err := req.Args()
	if err != nil {
		return req.Tool.Name
	}
	for _, k := range []string{"url", "uri", "href", "address", "query", "q", "path"} {
		if s, ok := args[k].(string); ok && strings.TrimSpace(s) != "" {
			return req.Tool.Name + " " + s
		}
	}
	return req.Tool.Name
}
