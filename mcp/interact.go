package mcp

//lint:file-ignore SA1019 sampling is deprecated from protocol version 2026-07-28 (SEP-2577) but stays in the protocol for its deprecation window and clients on earlier versions use it: Toolbelt supports it both ways (issue 32).

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/interact"
)

// Tools' requests of the client (package interact): a tool's call asks
// the MCP client that made it for input (elicitation/create) or for a
// completion (sampling/createMessage) when the client declared the
// capability. A client on a protocol version before 2026-07-28 is asked
// directly while the call runs; a later one forbids requests from the
// server, and is asked as approvals are, in rounds: the call ends with
// the request as an input request, and the tool, run again with the
// answers so far (the request state carries them), finds them — so a tool
// asked in rounds runs again from the start for each request it makes. A
// client without the capability leaves the request to Options.Interact,
// when set.

// multiRoundTrip is the protocol version from which a client is asked in
// rounds rather than by requests from the server.
const multiRoundTrip = "2026-07-28"

// clientRequests is the interact.Client of the server's calls.
type clientRequests struct{ s *Server }

func (c clientRequests) Elicit(ctx context.Context, f interact.Form) (interact.Reply, error) {
	r, _ := ctx.Value(roundKey{}).(*round)
	url := f.Mode == interact.ModeURL
	if r == nil || !canElicit(r.req) || url && !canElicitURL(r.req) {
		if c.s.opts.Interact != nil {
			return c.s.opts.Interact.Elicit(ctx, f)
		}
		if url {
			return interact.Reply{}, fmt.Errorf("%w: the MCP client does not support url-mode elicitation", interact.ErrUnsupported)
		}
		return interact.Reply{}, fmt.Errorf("%w: the MCP client does not support elicitation", interact.ErrUnsupported)
	}
	params := &sdk.ElicitParams{Mode: "form", Message: f.Message, RequestedSchema: formSchema(f)}
	if url {
		params = &sdk.ElicitParams{Mode: interact.ModeURL, Message: f.Message, URL: f.URL, ElicitationID: cmp.Or(f.ID, rand.Text())}
	}
	by := clientName(r.req)
	if inRounds(r.req) {
		resp, err := c.s.round(r, "elicitation", params)
		if err != nil {
			return interact.Reply{}, err
		}
		res, ok := resp.(*sdk.ElicitResult)
		if !ok {
			return interact.Reply{}, fmt.Errorf("the MCP client answered a request for input with %T", resp)
		}
		return interact.Reply{Action: res.Action, Content: res.Content, By: by}, nil
	}
	if url && f.Completed != nil {
		// The asker's word that the person completed it at the address
		// goes on to the client (notifications/elicitation/complete).
		// It may come after the client's answer (which says the person
		// agreed to go there): it is passed on until the call ends.
		go func() {
			select {
			case <-f.Completed:
				if err := r.req.Session.NotifyElicitationComplete(context.WithoutCancel(ctx), &sdk.ElicitationCompleteParams{ElicitationID: params.ElicitationID}); err != nil {
					c.s.opts.Logger.Debug("telling the client a url-mode request completed", "err", err)
				}
			case <-ctx.Done():
			}
		}()
	}
	res, err := r.req.Session.Elicit(ctx, params)
	if err != nil {
		return interact.Reply{}, fmt.Errorf("asking %s for input: %w", by, err)
	}
	if url {
		return interact.Reply{Action: res.Action, By: by}, nil
	}
	return interact.Reply{Action: res.Action, Content: res.Content, By: by}, nil
}

// canElicitURL reports whether the client of req declared url-mode
// elicitation.
func canElicitURL(req *sdk.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

func (c clientRequests) Sample(ctx context.Context, p interact.Prompt) (interact.Completion, error) {
	r, _ := ctx.Value(roundKey{}).(*round)
	if r == nil || !canSample(r.req) {
		if c.s.opts.Interact != nil {
			return c.s.opts.Interact.Sample(ctx, p)
		}
		return interact.Completion{}, fmt.Errorf("%w: the MCP client does not support sampling", interact.ErrUnsupported)
	}
	params := &sdk.CreateMessageParams{SystemPrompt: p.SystemPrompt, MaxTokens: int64(p.MaxTokens), StopSequences: p.StopSequences}
	if params.MaxTokens == 0 {
		params.MaxTokens = interact.DefaultMaxTokens
	}
	if p.Temperature != nil {
		params.Temperature = *p.Temperature
	}
	for _, m := range p.Messages {
		params.Messages = append(params.Messages, &sdk.SamplingMessage{Role: sdk.Role(m.Role), Content: &sdk.TextContent{Text: m.Text}})
	}
	by := clientName(r.req)
	if inRounds(r.req) {
		resp, err := c.s.round(r, "sampling", params)
		if err != nil {
			return interact.Completion{}, err
		}
		res, ok := resp.(*sdk.CreateMessageWithToolsResult)
		if !ok {
			return interact.Completion{}, fmt.Errorf("the MCP client answered a request for a completion with %T", resp)
		}
		return completion(res.Content, string(res.Role), res.Model, res.StopReason, by)
	}
	res, err := r.req.Session.CreateMessage(ctx, params)
	if err != nil {
		return interact.Completion{}, fmt.Errorf("asking %s for a completion: %w", by, err)
	}
	var content []sdk.Content
	if res.Content != nil {
		content = []sdk.Content{res.Content}
	}
	return completion(content, string(res.Role), res.Model, res.StopReason, by)
}

// completion reads the text of a client's completion.
func completion(content []sdk.Content, role, model, stop, by string) (interact.Completion, error) {
	var text []string
	for _, c := range content {
		t, ok := c.(*sdk.TextContent)
		if !ok {
			return interact.Completion{}, fmt.Errorf("%s answered the request for a completion with %T content; only text is taken", by, c)
		}
		text = append(text, t.Text)
	}
	return interact.Completion{Role: role, Text: strings.Join(text, "\n"), Model: model, StopReason: stop, By: by}, nil
}

// formSchema is the form's schema, or an empty object's.
func formSchema(f interact.Form) any {
	if f.Schema == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return f.Schema
}

// round returns the client's answer to the request ir when the call
// carries it (a later round), else hands ir to the client: the call's
// result becomes ir as its input request (see Server.run), and the tool's
// request fails with interact.ErrHandedOver.
func (s *Server) round(r *round, kind string, ir sdk.InputRequest) (sdk.InputResponse, error) {
	b, _ := json.Marshal(ir)
	sum := sha256.Sum256(append([]byte(kind+"\n"), b...))
	id := kind + "-" + hex.EncodeToString(sum[:12])
	if resp, ok := r.answers[id]; ok {
		return resp, nil
	}
	if err := s.handOver(r, id, id, ir); err != nil {
		return nil, err
	}
	return nil, interact.ErrHandedOver
}

// inRounds reports whether the client of req is asked in rounds.
func inRounds(req *sdk.CallToolRequest) bool {
	info := req.Session.InitializeParams()
	return info != nil && info.ProtocolVersion >= multiRoundTrip
}

func canSample(req *sdk.CallToolRequest) bool {
	if req.Session == nil {
		return false
	}
	caps := req.ClientCapabilities()
	return caps != nil && caps.Sampling != nil
}
