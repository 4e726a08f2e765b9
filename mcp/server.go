// Package mcp serves a Toolbelt registry over the Model Context Protocol,
// over stdio and streamable HTTP. Every tools/call goes through the invoke
// pipeline — normalization, validation, policy, confirmation, hooks,
// timeouts, truncation, audit — never around it: the MCP server is one more
// front door into the same pipeline.
package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/internal/parallel"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp/compact"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/ask"
)

// Options configure a Server.
type Options struct {
	// Name and Version identify the server to clients.
	Name, Version string
	// Dialect compiles tool schemas for tools/list (default Anthropic's,
	// which keeps full JSON Schema and fixes only the root shape).
	Dialect schema.Dialect
	// ExposeDetails sends a result's details as structured content.
	ExposeDetails bool
	// MaxResponseBytes bounds one tool result (default 8 MiB). A bigger
	// result has images replaced by notes and its text cut, never dropped.
	MaxResponseBytes int
	// ConfirmFallback is the answer for calls that need approval when the
	// client cannot be asked (it does not support elicitation): "deny" (the
	// default, fail closed) or "allow". Fallback, when set, is asked
	// instead (the console, whose people decide in its page).
	ConfirmFallback string
	Fallback        invoke.Confirmer
	// Logger logs to stderr by default; stdout is the stdio channel.
	Logger *slog.Logger
	// Compact offers three tools — tool_search, tool_describe and tool_call
	// — instead of every tool's schema (see compact.Enabled to decide by
	// the number of tools). tool_call runs the named tool through the full
	// pipeline.
	Compact bool
	// Owner says whether clients are the owner — stdio clients, and HTTP
	// clients whose token does not say otherwise (mcp.owner; default false:
	// owner-only tools are refused). It comes from configuration, never
	// from the transport.
	Owner bool
	// Summarizers, in compact mode, let tool_call return a summary and a
	// handle to the full result of the tools they name.
	Summarizers map[string]compact.Summarizer
	// Summaries, in compact mode, are the lines that list tools, by tool
	// name (tools.summaries; see compact.Options.Summaries).
	Summaries map[string]string
	// ToolsAfter, when set, is closed once the registry holds the tools
	// clients are first offered: tools/list and tools/call wait for it
	// (until their request ends), initialize and the rest do not. A root
	// whose imported MCP servers are still starting answers initialize at
	// once, and lists their tools once they have answered (or failed).
	ToolsAfter <-chan struct{}
	// SessionEnded, when set, is called with a client session's id (the
	// tool context's session key of its calls) once the session has ended:
	// closed by the client, its connection gone, ended by the idle timeout
	// or by Close. The root stops what it keeps for the session there (its
	// browser).
	SessionEnded func(id string)
	// Prompts are served as the server's prompts (see LoadPrompts).
	Prompts []Prompt
	// Interact answers tools' requests for input and for completions
	// (package interact) in calls whose client did not declare the
	// elicitation or sampling capability; nil: such requests fail, saying
	// the client cannot answer them. ToolRequests say which requests
	// tools may make at all (toolRequests in toolbelt.yaml).
	Interact     interact.Client
	ToolRequests interact.Rules
	// Resources are served beside the workspace's files (mcp.resources).
	Resources []Resource
	// Imported, when set, are the imported MCP servers whose resources,
	// resource templates and prompts are served as the server's own
	// (prompts named SERVER__PROMPT; resources by their own URIs, their
	// server in _meta), governed as the resources tool's calls;
	// subscriptions and completions are forwarded to them.
	Imported Imported
}

// DefaultMaxResponseBytes bounds a tool result sent to a client.
const DefaultMaxResponseBytes = 8 << 20

// Server is a Toolbelt registry served over MCP.
type Server struct {
	opts    Options
	reg     *registry.Registry
	runner  *invoke.Runner // the full pipeline, over reg
	front   *invoke.Runner // what clients call: runner, or compact mode's three tools
	compact *compact.Compact
	sdk     *sdk.Server
	stop    func()
	jobs    *jobFollower

	// sdkEncoding leaves tools/call results to the SDK to encode (tests
	// compare both ways).
	sdkEncoding bool
	// sdkChecks hands the SDK's AddTool every tool's own schema (tests
	// compare with the stand-ins of checkedAs).
	sdkChecks bool

	mu     sync.Mutex
	listed map[string]listedTool // what clients were last told, by name
	key    [32]byte              // signs the request state of approval rounds
	stale  staleSessions         // client sessions not told of changes
	// followed are the client sessions whose end is awaited for
	// Options.SessionEnded.
	followed map[*sdk.ServerSession]bool

	prompts  []Prompt // Options.Prompts
	imported imports  // what is re-served of Options.Imported
	watches  watches  // the files of subscribed own resources

	firstAnswer     chan struct{} // closed once a client's first tools/list or tools/call is answered
	firstAnswerOnce sync.Once
}

// listedTool remembers what a tool looked like when it was listed, to add
// or replace it only when it changed.
type listedTool struct {
	params      any             // the schema it was compiled from (tool.Tool.ParamsKey)
	schema      json.RawMessage // the compiled schema clients were given
	description string
	meta        tool.Meta
	output      *jsonschema.Schema // the tool's output schema (tool.Tool.Output), or nil
	async       *tool.AsyncSpec    // the tool's job (tool.Tool.Async), or nil
}

// New returns a server for the tools of reg, run for tc through a pipeline
// set up with runOpts (policy, limits, hooks, audit, …). The server installs
// its own confirmer: it asks the person through the MCP client (elicitation)
// when the client supports it.
func New(reg *registry.Registry, tc *tool.Context, opts Options, runOpts ...invoke.Option) *Server {
	return newServer(reg, tc, opts, false, runOpts...)
}

// newServer is New; sdkChecks (tests) hands the SDK's AddTool every
// tool's own schema.
func newServer(reg *registry.Registry, tc *tool.Context, opts Options, sdkChecks bool, runOpts ...invoke.Option) *Server {
	if opts.Name == "" {
		opts.Name = "toolbelt"
	}
	if opts.Dialect.Name() == "" {
		opts.Dialect = schema.Anthropic
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, reg: reg, listed: map[string]listedTool{}, firstAnswer: make(chan struct{}), sdkChecks: sdkChecks, prompts: opts.Prompts}
	_, _ = rand.Read(s.key[:])
	// The model's questions (ask_user) go to the client's user too.
	asking := *tc
	ask.AskerService.Set(&asking, s)
	// So do tools' requests of the client (package interact).
	interact.Service.Set(&asking, interact.Govern(clientRequests{s}, opts.ToolRequests))
	tc = &asking
	s.runner = invoke.New(reg, tc, append(runOpts, invoke.WithConfirmer(s), invoke.WithLogger(opts.Logger))...)
	s.front = s.runner
	if opts.Compact {
		s.compact = compact.New(s.runner, compact.Options{Logger: opts.Logger, Summaries: opts.Summaries})
		for name, fn := range opts.Summarizers {
			s.compact.Summarize(name, fn)
		}
		front := registry.New()
		for _, t := range s.compact.Tools() {
			if err := front.Register(t); err != nil {
				panic("toolbelt: compact mode's tools: " + err.Error())
			}
		}
		// The named tool's own call is governed, audited and shaped by the
		// full pipeline; the front one shares its output store, so
		// result_read handles stay valid.
		s.front = invoke.New(front, s.runner.Context(), invoke.WithOutputs(s.runner.Context().Outputs), invoke.WithLogger(opts.Logger))
	}
	sopts := &sdk.ServerOptions{
		Logger:            opts.Logger,
		Capabilities:      &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
		CompletionHandler: s.complete,
		Instructions: "Toolbelt's tools. Calls are checked against each tool's full schema and the operator's policy; " +
			"a call may need a person's approval. Errors come back as results that say what to change.",
	}
	sopts.SubscribeHandler, sopts.UnsubscribeHandler = s.subscribe, s.unsubscribe
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Title: "Toolbelt", Version: opts.Version}, sopts)
	s.sdk.AddReceivingMiddleware(s.followSessions, s.noteLive, s.awaitTools, s.offerTasks, s.taskCalls, s.repairNames, s.noteFirstAnswer, listTheSchemas)
	s.sdk.AddSendingMiddleware(s.notifyLive)
	s.serveResources()
	s.serveConfigured()
	s.servePrompts(opts.Prompts)
	s.serveTasks()
	s.sync()
	unwatch := reg.Watch(s.changed)
	stopJobs := s.followJobs()
	stopImports := s.followImports()
	s.stop = func() { unwatch(); stopJobs(); stopImports(); s.closeWatches() }
	return s
}

// repairNames gives tools/call the name repair the pipeline makes
// everywhere else: a name the client spelled differently from the listed one
// ("READ", "functions.read", "default_api:read") is called by its listed
// name. A name that fits no listed tool does not end in the SDK's protocol
// error: the call goes through the pipeline, which answers with a tool error
// result naming the closest tools (or the policy's denial) and records it in
// the audit log.
func (s *Server) repairNames(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		call, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		if s.isListed(call.Params.Name) {
			return s.wrap(next(ctx, method, req))
		}
		if name, ok := s.front.Canonical(call.Params.Name); ok && s.isListed(name) {
			call.Params.Name = name
			return s.wrap(next(ctx, method, req))
		}
		return s.wrap(s.handle(ctx, call))
	}
}

// awaitTools makes tools/list and tools/call wait for Options.ToolsAfter.
func (s *Server) awaitTools(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if s.opts.ToolsAfter != nil && (method == "tools/list" || method == "tools/call") {
			select {
			case <-s.opts.ToolsAfter:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return next(ctx, method, req)
	}
}

// noteFirstAnswer closes FirstAnswer's channel when the first tools/list or
// tools/call request has been answered.
func (s *Server) noteFirstAnswer(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/list" || method == "tools/call" {
			defer s.firstAnswerOnce.Do(func() { close(s.firstAnswer) })
		}
		return next(ctx, method, req)
	}
}

// wrap hands a tools/call result to the SDK as a wireResult (fewer
// encoding passes), unless sdkEncoding is set.
func (s *Server) wrap(res sdk.Result, err error) (sdk.Result, error) {
	if s.sdkEncoding {
		return res, err
	}
	return wrapResult(res, err)
}

// isListed reports whether clients are offered a tool of exactly this name.
func (s *Server) isListed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.listed[name]
	return ok
}

// changed follows a change of the registry.
func (s *Server) changed() {
	if s.compact != nil {
		s.compact.Refresh()
	}
	s.sync()
}

// Runner returns the full pipeline the server runs calls through.
func (s *Server) Runner() *invoke.Runner { return s.runner }

// Listed returns the names of the tools clients are offered.
func (s *Server) Listed() []string {
	var names []string
	for _, t := range s.front.Tools(nil) {
		names = append(names, t.Name)
	}
	return names
}

// FirstAnswer is closed once the server has answered a client's first
// tools/list or tools/call request: the start's first answers are out, and
// work that can wait (collecting the start's garbage, looking for what
// killed processes left behind) may begin.
func (s *Server) FirstAnswer() <-chan struct{} { return s.firstAnswer }

// ToolsReady is closed once tools/list and tools/call no longer wait for
// Options.ToolsAfter (at once without it): before, a client's first
// answer cannot come.
func (s *Server) ToolsReady() <-chan struct{} {
	if s.opts.ToolsAfter == nil {
		return closedChan
	}
	return s.opts.ToolsAfter
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// SDK returns the underlying MCP server, to connect transports to.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Close stops following the registry, ends every client session and
// releases the server's runners (see invoke.Runner.Close).
func (s *Server) Close() {
	s.stop()
	defer s.runner.Close()
	defer s.front.Close()
	var sessions []*sdk.ServerSession
	for ss := range s.sdk.Sessions() {
		sessions = append(sessions, ss)
	}
	for _, ss := range sessions {
		_ = ss.Close()
	}
}

// sync makes the listed tools match the tools the runner offers now: new
// and changed tools are added, gone ones removed; the SDK then sends
// notifications/tools/list_changed.
func (s *Server) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	current := map[string]bool{}
	var todo []tool.Tool
	for _, t := range s.front.Tools(func(id string, err error) {
		s.opts.Logger.Debug("tool unavailable", "tool", id, "reason", err)
	}) {
		current[t.Name] = true
		prev, listed := s.listed[t.Name]
		if key := t.ParamsKey(); listed && key != nil && prev.params == key && prev.description == t.Description && prev.output == t.Output && sameMeta(prev.meta, t.Meta) {
			// The same schema value: a registered schema does not change,
			// so neither does its compiled form. This keeps a sync after
			// one tool changed from compiling every other tool again.
			continue
		}
		todo = append(todo, t)
	}
	schemas, objects := s.compileAll(todo)
	var adds []*sdk.Tool
	for i, t := range todo {
		prev, listed := s.listed[t.Name]
		inputSchema := schemas[i]
		if listed && prev.description == t.Description && bytes.Equal(prev.schema, inputSchema) && prev.output == t.Output && sameMeta(prev.meta, t.Meta) {
			prev.params = t.ParamsKey()
			s.listed[t.Name] = prev
			continue
		}
		add := &sdk.Tool{
			Name:        t.Name,
			Title:       t.DisplayLabel(),
			Description: t.Description,
			InputSchema: inputSchema,
			Annotations: annotations(t),
		}
		if t.Output != nil {
			add.OutputSchema = t.Output
		}
		if objects[i] && !s.sdkChecks {
			add = checkedAs(add)
		}
		adds = append(adds, add)
		s.listed[t.Name] = listedTool{params: t.ParamsKey(), schema: inputSchema, description: t.Description, meta: t.Meta, output: t.Output, async: t.Async}
	}
	// The SDK's AddTool checks each schema before it takes its lock to add
	// the tool (checkedAs makes most checks cheap; the others decode the
	// schema twice). The tools are independent and the SDK's list is kept
	// sorted by name, not by the order of the adds, so they are added on
	// every CPU.
	parallel.For(len(adds), func(i int) { s.sdk.AddTool(adds[i], s.handle) })
	var gone []string
	for name := range s.listed {
		if !current[name] {
			gone = append(gone, name)
			delete(s.listed, name)
		}
	}
	if len(gone) > 0 {
		s.sdk.RemoveTools(gone...)
	}
}

// compileAll returns the tools' schemas compiled for the dialect, as JSON.
// The SDK is given the schema's JSON, encoded once here: it would otherwise
// encode the map again for its own checks when the tool is added, on every
// tools/list, and on every call over HTTP (to look for parameter headers).
// The bytes are the ones it would write. Many tools (a large import) are
// compiled on every CPU (parallel.For): each compilation is independent of
// the others.
// objects[i] says the compiled schema is an object whose "type" is
// "object" (what the SDK's AddTool requires).
func (s *Server) compileAll(tools []tool.Tool) (out []json.RawMessage, objects []bool) {
	out = make([]json.RawMessage, len(tools))
	objects = make([]bool, len(tools))
	one := func(i int) {
		compiled, _ := s.opts.Dialect.Compile(schemaDoc(&tools[i]))
		// As the SDK writes its messages: <, > and & not escaped (an
		// encoder that escapes them escapes them in these bytes too).
		b, err := schema.Encode(compiled)
		if err != nil {
			b = json.RawMessage(`{"type":"object"}`)
			compiled = map[string]any{"type": "object"}
		}
		out[i] = b
		objects[i] = compiled["type"] == "object"
	}
	parallel.For(len(tools), one)
	return out, objects
}

// The SDK's AddTool checks a tool's input schema twice, each time encoding
// it and decoding it again (with a new 32 KB buffer): into a map, to see
// that its "type" is "object", and into a struct, to check its
// x-mcp-header annotations. For a thousand imported tools that was a
// quarter of the start's CPU, and the answer is known without it:
// compileAll saw the type, and a schema whose JSON does not name
// x-mcp-header (nor escapes a character, which could spell the name) has no
// annotations to check. Such a tool is added as a copy whose schema is a
// stand-in: a *jsonschema.Schema of type "object" (the SDK checks the type
// of one without encoding it) that cannot be encoded, which the SDK's
// header check and its search for parameter headers on calls over HTTP
// take for a schema without annotations, as the tool's own is. The
// stand-in leads to the tool: listTheSchemas puts the tool itself, with
// its schema's bytes, back into every tools/list answer, so the list is
// byte for byte the one the SDK writes for the tools themselves
// (TestStandInsListAsTheTools); a stand-in written anywhere else would
// fail to encode rather than say something wrong.

// listedKey holds a stand-in's listedSchema.
const listedKey = "x-toolbelt-listed"

// listedSchema, in a stand-in, is the tool listed in its place.
type listedSchema struct{ tool *sdk.Tool }

func (*listedSchema) MarshalJSON() ([]byte, error) {
	return nil, errors.New("a stand-in for a tool's schema: the tool's own is listed")
}

// checkedAs returns the tool the SDK is given in place of t, or t itself
// when its schema's JSON may hold an x-mcp-header annotation.
func checkedAs(t *sdk.Tool) *sdk.Tool {
	b, _ := t.InputSchema.(json.RawMessage)
	if b == nil || bytes.Contains(b, []byte("x-mcp-header")) || bytes.Contains(b, []byte(`\u`)) {
		return t
	}
	c := *t
	c.InputSchema = &jsonschema.Schema{
		Type: "object",
		// Both set: jsonschema-go refuses to encode the schema before it
		// encodes any field (its basic checks), so the SDK's failed
		// attempts cost next to nothing. The listedSchema fails all the
		// same.
		Defs:        noDefs,
		Definitions: noDefs,
		Extra:       map[string]any{listedKey: &listedSchema{t}},
	}
	return &c
}

// noDefs is every stand-in's $defs and definitions: empty, and never
// written (the SDK only tries to encode a stand-in).
var noDefs = map[string]*jsonschema.Schema{}

// listed returns the tool a stand-in's schema leads to, if it is one.
func listed(t *sdk.Tool) (*sdk.Tool, bool) {
	if t == nil {
		return nil, false
	}
	s, ok := t.InputSchema.(*jsonschema.Schema)
	if !ok || s == nil {
		return nil, false
	}
	l, ok := s.Extra[listedKey].(*listedSchema)
	if !ok {
		return nil, false
	}
	return l.tool, true
}

// listTheSchemas answers tools/list with the listed tools in place of
// their stand-ins (checkedAs). Answering from each tool's JSON, encoded
// once when it is listed, was tried and made the 1,000-tool start slower
// (bench/HISTORY.md, third pass, part 5): encoding/json compacts and
// copies the answer whatever builds it, and the tools' encoding moved
// into the sync the first answer waits for.
func listTheSchemas(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*sdk.ListToolsResult)
		if method != "tools/list" || !ok || list == nil {
			return res, err
		}
		tools := make([]*sdk.Tool, len(list.Tools))
		for i, t := range list.Tools {
			tools[i] = t
			if l, ok := listed(t); ok {
				tools[i] = l
			}
		}
		list.Tools = tools
		return res, err
	}
}

// schemaDoc returns a tool's parameter schema as decoded JSON: the form
// lazy parameters were given in (which is what FromSchema would build from
// their schema), or its Parameters converted.
func schemaDoc(t *tool.Tool) any {
	if doc, ok := t.ParamsDoc(); ok {
		return doc
	}
	doc, err := schema.FromSchema(t.Parameters)
	if err != nil {
		return map[string]any{"type": "object"}
	}
	return doc
}

// sameMeta reports whether a and b are the same metadata for a client:
// their JSON is equal. Equal values are told without encoding them (what
// DeepEqual finds equal encodes equally): each sync compares every listed
// tool's metadata, the same value unless the tool changed, and after an
// import of 1,000 tools the two encodings of each were 5% of Toolbelt's
// CPU in the start (bench/HISTORY.md, third pass, part 3).
func sameMeta(a, b tool.Meta) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// annotations tell clients what the tool does, from its metadata rather than
// the SDK's defaults (which assume a destructive, open-world tool).
func annotations(t tool.Tool) *sdk.ToolAnnotations {
	m := t.Meta
	destructive, openWorld := m.Destructive, m.OpenWorld
	return &sdk.ToolAnnotations{
		Title:           t.DisplayLabel(),
		ReadOnlyHint:    m.ReadOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  m.Idempotent,
		OpenWorldHint:   &openWorld,
	}
}

// handle runs one tools/call through the pipeline. Progress goes to the
// client when it sent a progress token; the client's notifications/cancelled
// cancels ctx, and so the call.
func (s *Server) handle(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = s.panicked(p), nil
		}
	}()
	msg, asked := s.run(ctx, req, s.caller(req))
	if asked != nil {
		return asked, nil
	}
	return s.result(msg), nil
}

// panicked logs a panic p of serving a tool call and returns the call's
// result.
func (s *Server) panicked(p any) *sdk.CallToolResult {
	s.opts.Logger.Error("serving a tool call panicked", "panic", p, "stack", string(debug.Stack()))
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "internal error in Toolbelt's MCP server"}}}
}

// run runs one tools/call through the pipeline for who. When the call
// needs the user's approval or answer, asked is the result that asks
// through the client.
func (s *Server) run(ctx context.Context, req *sdk.CallToolRequest, who tool.Identity) (msg tool.ResultMessage, asked *sdk.CallToolResult) {
	r := s.newRound(req)
	ctx = context.WithValue(ctx, roundKey{}, r)
	ctx = invoke.WithCaller(ctx, who)
	// Unique across processes and time: two servers numbering their calls
	// would give two calls one id, and undo the wrong one.
	id := tool.NewCallID("mcp")
	var opts []invoke.CallOption
	if req.Session != nil {
		// The tool's log lines go to the client, at the level it set
		// (logging/setLevel; none before it sets one).
		ctx = tool.WithLog(ctx, func(level, message string) {
			//lint:ignore SA1019 MCP logging is deprecated from the protocol of 2026-07-28 on, but clients of 2025-11-25 ask for it
			err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: sdk.LoggingLevel(level), Logger: req.Params.Name, Data: message})
			if err != nil {
				s.opts.Logger.Debug("log notification failed", "call", id, "err", err)
			}
		})
	}
	if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
		var n float64
		opts = append(opts, invoke.OnUpdate(func(partial tool.Result) {
			n++
			msg := ""
			for _, c := range partial.Content {
				if c.Type == tool.TextContent {
					msg = content.FirstLine(c.Text, 200)
					break
				}
			}
			if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: msg}); err != nil {
				s.opts.Logger.Debug("progress notification failed", "call", id, "err", err)
			}
		}))
	}
	msg = s.front.Run(ctx, tool.Call{ID: id, Name: req.Params.Name, Arguments: req.Params.Arguments}, opts...)
	if token := req.Params.GetProgressToken(); token != nil {
		s.jobs.watch(msg, req.Session, token)
	}
	if r.asked != nil {
		// The call needs the user's approval or answer: ask through the client.
		return msg, &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{r.input: r.asked}, RequestState: r.state}
	}
	return msg, nil
}

// caller says who makes a call: channel mcp, the client's session, and over
// HTTP the principal of its bearer token, with the owner flag the
// configuration gives that principal (or, without one, Options.Owner).
func (s *Server) caller(req *sdk.CallToolRequest) tool.Identity {
	return callerOf(s.opts.Owner, req.Session, req.Extra)
}

// callerOf says who makes a request of the client session ss with extra:
// see Server.caller; owner is Options.Owner.
func callerOf(owner bool, ss *sdk.ServerSession, extra *sdk.RequestExtra) tool.Identity {
	c := tool.Identity{Channel: "mcp", Owner: owner}
	if ss != nil {
		c.SessionKey = ss.ID()
	}
	if extra != nil && extra.TokenInfo != nil {
		c.Principal = extra.TokenInfo.UserID
		owner, _ := extra.TokenInfo.Extra[ownerKey].(bool)
		c.Owner = owner
	}
	return c
}

// result converts a result message for the client, within the response
// limit.
func (s *Server) result(msg tool.ResultMessage) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: msg.IsError}
	budget := s.opts.MaxResponseBytes
	for _, c := range msg.Content {
		switch c.Type {
		case tool.ImageContent, tool.AudioContent:
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil || len(c.Data) > budget {
				out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("[%s omitted: %d bytes do not fit in the response limit of %d bytes]", c.Type, len(c.Data), s.opts.MaxResponseBytes)})
				continue
			}
			budget -= len(c.Data)
			if c.Type == tool.AudioContent {
				out.Content = append(out.Content, &sdk.AudioContent{Data: data, MIMEType: c.MIMEType})
			} else {
				out.Content = append(out.Content, &sdk.ImageContent{Data: data, MIMEType: c.MIMEType})
			}
		case tool.ResourceContent:
			if rc, ok := resourceOf(c, budget); ok {
				budget -= len(c.Data) + len(c.Text)
				out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: rc})
				continue
			}
			out.Content = append(out.Content, &sdk.TextContent{Text: fmt.Sprintf("[resource %s omitted: %d bytes do not fit in the response limit of %d bytes]", c.URI, len(c.Data)+len(c.Text), s.opts.MaxResponseBytes)})
		default:
			text := c.Text
			if len(text) > budget {
				text = content.Head(text, max(budget, 0), "\n[... cut to fit the response limit]")
			}
			budget -= len(text)
			out.Content = append(out.Content, &sdk.TextContent{Text: text})
		}
	}
	if output := s.outputOf(msg.ToolName); output != nil && !msg.IsError {
		out.StructuredContent = structured(output, msg.Details)
	} else if s.opts.ExposeDetails && msg.Details != nil {
		if b, err := json.Marshal(msg.Details); err == nil && len(b) <= budget && strings.HasPrefix(string(b), "{") {
			out.StructuredContent = json.RawMessage(b)
		}
	}
	return out
}

// resourceOf is a resource block's contents for the client, when it fits
// in budget bytes.
func resourceOf(c tool.Content, budget int) (*sdk.ResourceContents, bool) {
	if len(c.Data)+len(c.Text) > budget {
		return nil, false
	}
	rc := &sdk.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
	if c.Data != "" {
		blob, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			return nil, false
		}
		rc.Text, rc.Blob = "", blob
	}
	return rc, true
}
