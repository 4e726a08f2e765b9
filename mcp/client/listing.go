package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/toolbelt/toolbelt/internal/jsonscan"
	"github.com/toolbelt/toolbelt/internal/parallel"
)

// A stdio server's tool list is decoded by Toolbelt rather than by the SDK.
// The SDK's client decodes a tools/list result on one goroutine, then
// encodes each tool's input schema again and decodes it once more to check
// its x-mcp-header annotations: for a server of 1,000 tools that was a
// quarter of Toolbelt's start, all of it on one CPU. Here the SDK still
// sends every tools/list request (with its protocol's metadata and
// cursors) and reads every answer, but a listingConn takes the "tools"
// array out of the answers to a sync's requests and hands the SDK the rest
// of the result (with no tools, and no time to live, so the SDK never
// serves a list from its cache instead of asking); the sync then decodes
// the tools on every CPU, the same way the SDK does (segmentio's decoder,
// case-sensitive field names, the same depth limit), and leaves out the
// tools the SDK leaves out: null ones, and ones whose x-mcp-header
// annotations are invalid. TestListToolsAsTheSDK compares the two on the
// corpus and on odd lists.
//
// Only stdio connections are wrapped: the SDK's streamable HTTP connection
// learns of the session's state through a method a wrapper cannot forward,
// and its calls use the cached lists to send x-mcp-header values as
// headers.

// listingConn is an SDK connection whose tools/list answers, while a sync
// is listing, give their tools to the sync.
type listingConn struct {
	mcp.Connection

	mu      sync.Mutex
	listing bool                // a sync is listing
	ids     map[any]bool        // its tools/list requests not answered yet
	pages   [][]json.RawMessage // the tools of the answers, in order
	err     error               // an answer whose tools could not be read
}

// listingTransport wraps the connections of a transport in listingConns.
type listingTransport struct {
	mcp.Transport
	conn *listingConn // the last one made
}

func (t *listingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &listingConn{Connection: c, ids: map[any]bool{}}
	return t.conn, nil
}

func (c *listingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.IsCall() {
		c.mu.Lock()
		if c.listing {
			c.ids[req.ID.Raw()] = true
		}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *listingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok || resp.Error != nil {
		return msg, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ids[resp.ID.Raw()] {
		return msg, nil
	}
	delete(c.ids, resp.ID.Raw())
	rest, tools, took, terr := takeTools(resp.Result)
	switch {
	case terr != nil:
		// The sync fails with this error; the SDK gets the answer as it
		// came (and most likely fails too).
		c.err = terr
	case took:
		c.pages = append(c.pages, tools)
		resp.Result = rest
	}
	return msg, nil
}

// begin starts a sync's listing.
func (c *listingConn) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listing, c.pages, c.err = true, nil, nil
	clear(c.ids)
}

// end ends a sync's listing and returns the tools the answers held.
func (c *listingConn) end() ([][]json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pages, err := c.pages, c.err
	c.listing, c.pages, c.err = false, nil, nil
	clear(c.ids)
	return pages, err
}

// takeTools splits a tools/list result into its tools and the rest, with
// "tools" empty and no "ttlMs". A result that is not an object with a tools
// array is left to the SDK (took is false). It runs on the SDK's reading
// goroutine, so it only splits: decodeTools checks and decodes each tool.
func takeTools(result json.RawMessage) (rest json.RawMessage, tools []json.RawMessage, took bool, err error) {
	fields, tools, ok := splitResult(result)
	if !ok {
		if fields, tools, ok, err = decodeResult(result); !ok || err != nil {
			return nil, nil, false, err
		}
	}
	delete(fields, "ttlMs")
	if rest, err = json.Marshal(fields); err != nil {
		return nil, nil, false, err
	}
	return rest, tools, true, nil
}

// decodeResult is splitResult by decoding the result: its members, with
// "tools" set to [], and the tools' JSON; ok is false when it is not an
// object with a tools array.
func decodeResult(result json.RawMessage) (fields map[string]json.RawMessage, tools []json.RawMessage, ok bool, err error) {
	if segjson.Unmarshal(result, &fields) != nil {
		return nil, nil, false, nil
	}
	raw, ok := fields["tools"]
	if !ok || !bytes.HasPrefix(raw, []byte("[")) {
		return nil, nil, false, nil
	}
	if _, err := segjson.Parse(raw, &tools, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, nil, false, err
	}
	fields["tools"] = json.RawMessage("[]")
	return fields, tools, true, nil
}

// listTools lists every page of a server's tools. With a listingConn the
// SDK sends the requests and Toolbelt decodes the tools, as the SDK would;
// without one the SDK does both.
func listTools(ctx context.Context, sess *mcp.ClientSession, lc *listingConn, log *slog.Logger) ([]*mcp.Tool, error) {
	return listToolsAs(ctx, sess, lc, log, false)
}

// listToolsAs is listTools; exact (for a sync) decodes the numbers in the
// tools Toolbelt decodes as json.Number, as written, where the SDK decodes
// float64s. A schema is then in the generic form the schema compiler
// works on, and a sync can tell the form it comes back in from
// jsonschema-go's type (schema.RoundTripForm), to list it from that form
// without converting it (see parameters). TestExactListingIsTheSDKs holds
// the two equal but for the numbers' type.
func listToolsAs(ctx context.Context, sess *mcp.ClientSession, lc *listingConn, log *slog.Logger, exact bool) ([]*mcp.Tool, error) {
	if lc != nil {
		lc.begin()
	}
	var tools []*mcp.Tool
	var err error
	for t, terr := range sess.Tools(ctx, nil) {
		if terr != nil {
			err = terr
			break
		}
		tools = append(tools, t) // from an answer left to the SDK
	}
	if lc == nil {
		return tools, err
	}
	pages, perr := lc.end()
	if err != nil {
		return nil, err
	}
	if perr != nil {
		return nil, perr
	}
	decoded, err := decodeTools(pages, log, exact)
	if err != nil {
		return nil, err
	}
	return append(decoded, tools...), nil
}

// decodeTools decodes the tools of tools/list answers on every CPU and
// leaves out the ones the SDK's client leaves out; exact decodes numbers
// as json.Number.
func decodeTools(pages [][]json.RawMessage, log *slog.Logger, exact bool) ([]*mcp.Tool, error) {
	flags := segjson.DontMatchCaseInsensitiveStructFields
	if exact {
		flags |= segjson.UseNumber
	}
	var raws []json.RawMessage
	for _, p := range pages {
		raws = append(raws, p...)
	}
	tools := make([]*mcp.Tool, len(raws))
	errs := make([]error, len(raws))
	parallel.For(len(raws), func(i int) {
		// The SDK's decoder counts the depth from the result: a tool is
		// two levels down.
		if err := checkMaxDepth(raws[i], maxDepth-2); err != nil {
			errs[i] = err
			return
		}
		if _, err := segjson.Parse(raws[i], &tools[i], flags); err != nil {
			errs[i] = err
			return
		}
		if tools[i] != nil && mayHaveHeaders(raws[i]) {
			errs[i] = headerAnnotationsValid(tools[i])
		}
	})
	out := make([]*mcp.Tool, 0, len(tools))
	for i, t := range tools {
		var invalid *invalidHeaders
		switch {
		case errors.As(errs[i], &invalid):
			log.Error("excluding tool from tools/list", "tool", t.Name, "error", invalid.err)
		case errs[i] != nil:
			return nil, fmt.Errorf("decoding the tools/list result: %w", errs[i])
		case t == nil:
			log.Error("excluding nil tool from tools/list")
		default:
			out = append(out, t)
		}
	}
	return out, nil
}

// mayHaveHeaders reports whether a tool's JSON may hold an x-mcp-header
// annotation: it names one, or escapes a character (which could spell
// the name). Only such tools need the SDK's check, which encodes and
// decodes the schema again.
func mayHaveHeaders(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("x-mcp-header")) || bytes.Contains(raw, []byte(`\u`))
}

// invalidHeaders is a tool the SDK's client leaves out of a list.
type invalidHeaders struct{ err error }

func (e *invalidHeaders) Error() string { return e.err.Error() }

// The check below is the SDK's (go-sdk v1.8.0, mcp/streamable_headers.go:
// validateParamHeaderAnnotations and what it calls; Copyright 2025 The Go
// MCP SDK Authors), which the SDK does not export. TestListToolsAsTheSDK
// holds the two equal.

// headerSchemaProperty captures the fields needed for x-mcp-header
// processing.
type headerSchemaProperty struct {
	Type       string                          `json:"type"`
	XMCPHeader json.RawMessage                 `json:"x-mcp-header,omitempty"`
	Properties map[string]headerSchemaProperty `json:"properties,omitempty"`
}

// maxDepth is the nesting the SDK's decoder accepts.
const maxDepth = 1000

// headerAnnotationsValid checks, as the SDK's client does, that a tool's
// x-mcp-header annotations are valid.
func headerAnnotationsValid(t *mcp.Tool) error {
	var s headerSchemaProperty
	data, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil
	}
	if checkMaxDepth(data, maxDepth) != nil {
		return nil
	}
	if _, err := segjson.Parse(data, &s, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil
	}
	if len(s.Properties) == 0 {
		return nil
	}
	if err := validateParamHeadersIn(s.Properties, "", map[string]bool{}); err != nil {
		return &invalidHeaders{err}
	}
	return nil
}

func validateParamHeadersIn(props map[string]headerSchemaProperty, prefix string, seen map[string]bool) error {
	for propName, prop := range props {
		path := propName
		if prefix != "" {
			path = prefix + "." + propName
		}
		if prop.XMCPHeader != nil {
			if prop.Type != "string" && prop.Type != "integer" && prop.Type != "boolean" {
				return fmt.Errorf("property %q: x-mcp-header can only be applied to primitive types (integer, string, boolean), got %q", path, prop.Type)
			}
			var headerName string
			if err := json.Unmarshal(prop.XMCPHeader, &headerName); err != nil || headerName == "" {
				return fmt.Errorf("property %q: x-mcp-header must be a non-empty string", path)
			}
			if err := validateHeaderName(headerName); err != nil {
				return fmt.Errorf("property %q: %w", path, err)
			}
			lower := strings.ToLower(headerName)
			if seen[lower] {
				return fmt.Errorf("property %q: duplicate x-mcp-header value %q (case-insensitive)", path, headerName)
			}
			seen[lower] = true
		}
		if len(prop.Properties) > 0 {
			if err := validateParamHeadersIn(prop.Properties, path, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateHeaderName checks that a header name matches the HTTP field-name
// token syntax (1*tchar).
func validateHeaderName(name string) error {
	if name == "" {
		return fmt.Errorf("x-mcp-header value must be a non-empty string")
	}
	for _, c := range name {
		if !isTChar(c) {
			return fmt.Errorf("x-mcp-header value %q contains invalid character %q", name, c)
		}
	}
	return nil
}

// isTChar reports whether c is a valid HTTP token character (tchar).
func isTChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9':
		return true
	case c >= 'A' && c <= 'Z':
		return true
	case c >= 'a' && c <= 'z':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.',
		'^', '_', '`', '|', '~':
		return true
	}
	return false
}

// errMaxDepth is the SDK decoder's error for JSON nested too deep.
var errMaxDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// checkMaxDepth reports JSON nested deeper than limit, as the SDK's
// decoder does.
func checkMaxDepth(data []byte, limit int) error {
	if jsonscan.Deeper(data, limit) {
		return errMaxDepth
	}
	return nil
}
