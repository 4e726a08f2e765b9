package invoke

import (
	"context"
	"strings"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/tool"
)

// externalStep is the "external" step: it labels what a tool marked
// ExternalContent returns as from outside, with its source (the tool and
// the address or query it was called with). The text blocks the tool did
// not label itself get that origin, error text included (an imported
// server's error is its words too); envelopes and other own words the tool
// or Execute labelled stay as they are. What the tool keeps while it runs
// (a page for result_read) is labelled the same way, through ctx. The shape
// step wraps labelled text as untrusted content, on every path back to a
// model.
func (r *Runner) externalStep(next Handler) Handler {
	return func(ctx context.Context, req *Request) tool.Result {
		if !req.Tool.Meta.ExternalContent {
			return next(ctx, req)
		}
		origin := tool.Origin{External: true, Source: r.source(req)}
		res := next(tool.WithOrigin(ctx, origin), req)
		blocks := make([]tool.Content, len(res.Content))
		for i, c := range res.Content {
			if (c.Type == tool.TextContent || c.Type == tool.ResourceContent) && c.Origin == nil {
				c.Origin = &origin
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

// wrapping is how text of origin o is wrapped: with its source and the
// configured notice.
func (r *Runner) wrapping(o *tool.Origin) content.Wrap {
	return content.Wrap{Source: o.Source, Notice: r.cfg.ExternalNotice, OmitNotice: r.cfg.OmitExternalNotice}
}

// wrapExternal wraps the text blocks from outside that are not wrapped
// yet, each with its own source, copying blocks before the first change.
func (r *Runner) wrapExternal(blocks []tool.Content) []tool.Content {
	copied := false
	for i, c := range blocks {
		if (c.Type != tool.TextContent && (c.Type != tool.ResourceContent || c.Text == "")) || !c.Origin.IsExternal() || c.Origin.Wrapped {
			continue
		}
		if !copied {
			blocks = append([]tool.Content(nil), blocks...)
			copied = true
		}
		blocks[i].Text = content.WrapExternal(c.Text, r.wrapping(c.Origin))
		blocks[i].Origin = &tool.Origin{External: true, Source: c.Origin.Source, Wrapped: true}
	}
	return blocks
}
