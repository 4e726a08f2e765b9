package client

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
)

// Section is the catalog section of imported tools.
const Section = "mcp"

// GroupPrefix starts the group of one server's tools ("mcp:github", used in
// policy as "group:mcp:github").
const GroupPrefix = "mcp:"

// meta describes an imported tool to the registry. Annotations are hints a
// server gives about its tool; without them the tool is taken to be
// destructive and to reach the outside world, as the MCP specification says
// a client must assume.
func meta(server, local string, t *mcp.Tool) tool.Meta {
	m := tool.Meta{
		ID:          local,
		Label:       t.Title,
		Description: t.Description,
		Section:     Section,
		Groups:      []string{GroupPrefix + server},
		Source:      tool.SourceMCP,
		Risk:        tool.RiskMedium,
		Destructive: true,
		OpenWorld:   true,
	}
	if a := t.Annotations; a != nil {
		m.Label = cmp.Or(m.Label, a.Title)
		m.ReadOnly = a.ReadOnlyHint
		m.Idempotent = a.IdempotentHint
		m.Destructive = !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
		m.OpenWorld = a.OpenWorldHint == nil || *a.OpenWorldHint
		if a.ReadOnlyHint {
			m.Risk = tool.RiskLow
		}
	}
	m.Label = cmp.Or(m.Label, tool.LabelFromName(t.Name))
	m.ExternalContent = m.OpenWorld
	return m
}

// parameters converts a tool's input schema, as the SDK decoded it, into
// the schema tools use. The JSON is kept whole: keywords the type has no
// field for land in its Extra map. A schema whose form after a round trip
// through jsonschema-go's type is known (schema.RoundTripForm: it comes
// back as it is, or with {} written as true; most do, decoded with
// json.Number numbers as a sync decodes them) is given as lazy parameters
// instead: the tool list compiles that form, and the conversion waits for
// the tool's first call or the schema check; the others are converted
// now. Whether the schema compiles is checked after
// the import (see server.checkSchemas), not here: compiling a validator
// for each of a thousand tools was most of an import's time.
func parameters(input any) (*jsonschema.Schema, *tool.LazyParameters, error) {
	if input == nil {
		return nil, nil, nil
	}
	if form, ok := schema.RoundTripForm(input); ok {
		return nil, tool.NewLazyParameters(form, schema.ToSchema), nil
	}
	s, err := schema.ToSchema(input)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema is not a JSON Schema: %w", err)
	}
	return s, nil, nil
}

// outputSchema converts a tool's output schema, as the SDK decoded it: the
// pipeline holds the server's results to it (invoke.CheckOutput), and
// Toolbelt's MCP server lists it again.
func outputSchema(output any) (*jsonschema.Schema, error) {
	if output == nil {
		return nil, nil
	}
	s, err := schema.ToSchema(output)
	if err != nil {
		return nil, fmt.Errorf("output schema is not a JSON Schema: %w", err)
	}
	return s, nil
}

// result converts what a server returned into a tool result. Text,
// images, audio and embedded resources pass through, an embedded image as
// an image; resource links are described in text; structured content
// becomes Details.
func result(r *mcp.CallToolResult) tool.Result {
	res := tool.Result{IsError: r.IsError, Details: r.StructuredContent}
	for _, c := range r.Content {
		res.Content = append(res.Content, block(c))
	}
	if len(res.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.MarshalIndent(r.StructuredContent, "", "  "); err == nil {
			res.Content = []tool.Content{{Type: tool.TextContent, Text: string(b)}}
		}
	}
	return res
}

// block converts one content block.
func block(c mcp.Content) tool.Content {
	text := func(s string) tool.Content { return tool.Content{Type: tool.TextContent, Text: s} }
	media := func(typ tool.ContentType, data []byte, mime string) tool.Content {
		return tool.Content{Type: typ, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mime}
	}
	switch c := c.(type) {
	case *mcp.TextContent:
		return text(c.Text)
	case *mcp.ImageContent:
		return media(tool.ImageContent, c.Data, c.MIMEType)
	case *mcp.AudioContent:
		return media(tool.AudioContent, c.Data, c.MIMEType)
	case *mcp.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link: %s", c.URI)
		if n := cmp.Or(c.Title, c.Name); n != "" {
			fmt.Fprintf(&b, " %q", n)
		}
		b.WriteString(details(c.MIMEType, c.Size))
		b.WriteString("]")
		if c.Description != "" {
			b.WriteString(" " + c.Description)
		}
		return text(b.String())
	case *mcp.EmbeddedResource:
		// An embedded image becomes an image, which a model sees. Any
		// other is kept as the resource it is: Toolbelt's own MCP
		// clients get it as an embedded resource, a model its
		// description (tool.Content.Describe), as for Toolbelt's own
		// tools.
		rc := c.Resource
		if rc == nil {
			return text("[embedded resource without contents]")
		}
		if strings.HasPrefix(rc.MIMEType, "image/") && len(rc.Blob) > 0 {
			return media(tool.ImageContent, rc.Blob, rc.MIMEType)
		}
		r := tool.Content{Type: tool.ResourceContent, URI: rc.URI, MIMEType: rc.MIMEType, Text: rc.Text}
		if rc.Blob != nil {
			r.Text, r.Data = "", base64.StdEncoding.EncodeToString(rc.Blob)
		}
		return r
	}
	return text(fmt.Sprintf("[content of a kind Toolbelt cannot show: %T]", c))
}

// details renders " (text/plain, 120 bytes)" from what is known.
func details(mime string, size *int64) string {
	var parts []string
	if mime != "" {
		parts = append(parts, mime)
	}
	if size != nil {
		parts = append(parts, strconv.FormatInt(*size, 10)+" bytes")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// progress renders a progress notification as an update: its message and
// "3/10" (or "3" when the total is unknown), with the numbers in Details.
func progress(p *mcp.ProgressNotificationParams) tool.Result {
	n := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	details := map[string]any{"progress": p.Progress}
	if p.Total > 0 {
		n += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
		details["total"] = p.Total
	}
	msg := "progress"
	if p.Message != "" {
		msg = p.Message
		details["message"] = p.Message
	}
	res := tool.Text(msg + " " + n)
	res.Details = details
	return res
}
