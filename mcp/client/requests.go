package client

//lint:file-ignore SA1019 sampling is deprecated from protocol version 2026-07-28 (SEP-2577) but stays in the protocol for its deprecation window and clients on earlier versions use it: Toolbelt supports it both ways (issue 32).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/tool"
)

// An imported server's requests — elicitation/create and
// sampling/createMessage, sent while one of its tools runs — go to the
// front door of the call that is running it: the interact.Client of the
// call's tool context (the terminal's person, the MCP client that made the
// call, the configured model), governed by toolRequests and recorded in
// the call's audit record. Each kind is off unless the server's entry
// allows it (mcpServers.<name>.elicitation, .sampling). Elicitation is
// always declared, in both modes (a form; url mode, which sends the
// person to an address, its completion notified by the server), and
// declined when off: a server that would ask before doing something does
// not do it unasked. Sampling is declared only when
// allowed. A request that comes while none of the server's calls runs
// has nobody to go to: it is declined (refused, for sampling). While
// several calls of the server run, the latest started gets it when they
// all run for one caller (workspace, session, principal); when they run
// for different callers, whose request it is cannot be told, and it is
// declined — one caller's person never sees, or answers, another's.

// inflight is a call of one of the server's tools that is running: its
// context and its front door's Client.
type inflight struct {
	ctx    context.Context
	client interact.Client
	caller string // workspace, session and principal
}

// calls are a server's calls in flight, latest last.
type calls struct {
	mu   sync.Mutex
	list []*inflight
}

// enter notes a call running in ctx for tc; leave is called when it ends.
func (c *calls) enter(ctx context.Context, tc *tool.Context) (leave func()) {
	client, _ := interact.Service.Get(tc)
	f := &inflight{ctx: ctx, client: client}
	if tc != nil {
		f.caller = tc.Workspace + "\x00" + tc.SessionKey + "\x00" + tc.Principal
	}
	c.mu.Lock()
	c.list = append(c.list, f)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, g := range c.list {
			if g == f {
				c.list = append(c.list[:i], c.list[i+1:]...)
				break
			}
		}
	}
}

// latest returns the call started last, or why there is none to ask:
// no call runs, or calls of different callers do.
func (c *calls) latest() (*inflight, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == 0 {
		return nil, "none of its calls is running, so nobody is there to ask"
	}
	last := c.list[len(c.list)-1]
	for _, f := range c.list {
		if f.caller != last.caller {
			return nil, "calls of several callers are running, so whose request it is cannot be told"
		}
	}
	return last, ""
}

// within returns the call's context, also done when ctx (the request's)
// is: the request is answered for the call, and given up when either ends.
func within(call *inflight, ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(call.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return cctx, func() { stop(); cancel() }
}

// completions are the url-mode requests for input of a server's calls
// that its notifications/elicitation/complete may end, by elicitationId.
type completions struct {
	mu      sync.Mutex
	pending map[string]chan struct{}
}

// await returns the channel closed when the server says the url-mode
// request id is complete; it is forgotten once the call (ctx) ends. A
// request without an id gets none.
func (c *completions) await(ctx context.Context, id string) <-chan struct{} {
	if id == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[string]chan struct{}{}
	}
	ch, ok := c.pending[id]
	if !ok {
		ch = make(chan struct{})
		c.pending[id] = ch
		context.AfterFunc(ctx, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.pending[id] == ch {
				delete(c.pending, id)
			}
		})
	}
	return ch
}

// complete closes the channel of the url-mode request id, if one waits.
func (c *completions) complete(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.pending[id]; ok {
		close(ch)
		delete(c.pending, id)
	}
}

// handleRequests sets the handlers of opts for s's requests. Elicitation
// is declared in both modes: forms, and url mode (the person is sent to
// an address, and says when done).
func (s *server) handleRequests(opts *mcp.ClientOptions) {
	opts.ElicitationHandler = s.elicit
	opts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	opts.ElicitationCompleteHandler = func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
		if s.current(req.Session) {
			s.completions.complete(req.Params.ElicitationID)
		}
	}
	if s.cfg.Sampling {
		opts.CreateMessageHandler = s.sample
	}
}

// decline is the answer to a request for input that is not passed on.
func (s *server) decline(why string) (*mcp.ElicitResult, error) {
	s.clientLog.Info("declined the server's request for input", "reason", why)
	return &mcp.ElicitResult{Action: interact.Decline}, nil
}

// elicit passes the server's request for input to the front door of the
// call running now.
func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if !s.cfg.Elicitation {
		return s.decline(fmt.Sprintf("mcpServers.%s.elicitation is off", s.name))
	}
	mode := req.Params.Mode
	if mode == "" && (req.Params.URL != "" || req.Params.ElicitationID != "") {
		mode = interact.ModeURL // as the specification infers it
	}
	if mode != "" && mode != interact.ModeForm && mode != interact.ModeURL {
		return nil, refused(fmt.Errorf("elicitation mode %q: Toolbelt takes form and url", mode))
	}
	call, why := s.calls.latest()
	if call == nil {
		return s.decline(why)
	}
	if call.client == nil {
		return s.decline("its call runs where nobody can be asked")
	}
	var schema map[string]any
	if req.Params.RequestedSchema != nil {
		b, err := json.Marshal(req.Params.RequestedSchema)
		if err == nil {
			err = json.Unmarshal(b, &schema)
		}
		if err != nil {
			return nil, refused(fmt.Errorf("the requested schema: %w", err))
		}
	}
	cctx, done := within(call, ctx)
	defer done()
	form := interact.Form{Message: "mcp server " + s.name + " asks: " + req.Params.Message, Schema: schema}
	if mode == interact.ModeURL {
		form = interact.Form{Message: form.Message, Mode: interact.ModeURL, URL: req.Params.URL, ID: req.Params.ElicitationID,
			Completed: s.completions.await(call.ctx, req.Params.ElicitationID)}
	}
	reply, err := call.client.Elicit(cctx, form)
	switch {
	case errors.Is(err, interact.ErrForbidden), errors.Is(err, interact.ErrUnsupported):
		return s.decline(err.Error())
	case err != nil:
		return nil, refused(err)
	}
	if mode == interact.ModeURL {
		return &mcp.ElicitResult{Action: reply.Action}, nil // nothing is filled in: the person went to the address
	}
	return &mcp.ElicitResult{Action: reply.Action, Content: reply.Content}, nil
}

// sample passes the server's request for a completion to the front door
// of the call running now.
func (s *server) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	call, why := s.calls.latest()
	if call == nil {
		return nil, refused(errors.New(why + ": no model is asked"))
	}
	if call.client == nil {
		return nil, refused(errors.New("its call runs where no model can be asked"))
	}
	p := interact.Prompt{SystemPrompt: req.Params.SystemPrompt, MaxTokens: int(req.Params.MaxTokens), StopSequences: req.Params.StopSequences}
	if req.Params.Temperature != 0 {
		t := req.Params.Temperature
		p.Temperature = &t
	}
	for _, m := range req.Params.Messages {
		text, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, refused(fmt.Errorf("a message of %T content: Toolbelt passes text messages only", m.Content))
		}
		p.Messages = append(p.Messages, interact.Message{Role: string(m.Role), Text: text.Text})
	}
	cctx, done := within(call, ctx)
	defer done()
	c, err := call.client.Sample(cctx, p)
	if err != nil {
		return nil, refused(err)
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: c.Text}, Model: c.Model, StopReason: c.StopReason}, nil
}

// refused is the JSON-RPC error a request that cannot be answered gets:
// the server is told why, and a call whose request it was (asked in
// rounds, its answers given with the call made again) ends in the server's
// refusal rather than in a broken connection.
func refused(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Toolbelt cannot answer the request: " + err.Error()}
}
