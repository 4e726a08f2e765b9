// Package invoke runs tool calls through one governed pipeline. A call made
// in another agent's shape (Claude Code's Bash, Gemini CLI's read_file, …;
// see Shapes) is rewritten into the tool's own, its name is resolved, a
// start event is emitted, the call passes through a chain of
// steps — small middlewares in the style of net/http, each replaceable — and
// an end event reports the result:
//
//	persist    tool_result_persist hooks rewrite what is stored
//	shape      truncation (full output kept), text from outside wrapped, images, UTF-8, error envelopes
//	access     a tool the policy denies the caller is blocked before its arguments are read
//	arguments  an object, a JSON string holding one, or nothing
//	normalize  case styles, aliases, flattened text, HTML entities, coercion
//	validate   every violation of the tool's full schema at once
//	policy     allow, deny or ask, with the call's arguments
//	audit      a call that changes things refused while its record cannot be made durable
//	hooks      before_tool_call: block, change parameters, require approval
//	confirm    ask a person when approval is required (fail closed), or let the permission mode answer
//	after      after_tool_call hooks observe the outcome
//	loop       repeated identical calls warned, then blocked (off by default)
//	timeout    deadline and cancellation, even for tools that ignore them
//	external   text from outside labelled with its source (shape wraps it)
//	output     a result's structured content checked against the tool's output schema
//	execute    the tool itself; panics and Go errors become results
//
//	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: dir}})
//	msg := r.Run(ctx, tool.Call{ID: "call_1", Name: "read", Arguments: []byte(`{"path":"go.mod"}`)})
//
// Errors a model should see are results, never Go errors or panics.
package invoke

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolbelt/toolbelt/content"
	"github.com/toolbelt/toolbelt/interact"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// Config holds the pipeline's limits. Zero fields take the defaults below.
type Config struct {
	// DefaultTimeout bounds a call whose tool sets no timeout (5 minutes).
	DefaultTimeout time.Duration
	// MaxTimeout bounds a per-call timeout override (1 hour).
	MaxTimeout time.Duration
	// CancelGrace is how long a timed-out or cancelled tool may take to
	// return what it has before the call ends without it (500 ms).
	CancelGrace time.Duration

	// MaxResultChars caps the text of a result (40,000 characters).
	MaxResultChars int
	// MaxResultTokens, when set, also caps it in tokens.
	MaxResultTokens int
	// ContextWindow and ContextShare, when both set, cap a result at that
	// share of the model's context window, in tokens.
	ContextWindow int
	ContextShare  float64
	// CountTokens counts the tokens of a text for those two caps, -1 when
	// it cannot (the text is then not cut for its tokens): tokens.O200k
	// (package content/tokens) counts them as the o200k encoding does.
	// When nil, a token is reckoned at three bytes, more tokens than the
	// usual encodings count for most text, so a cap cuts early rather than
	// late.
	CountTokens func(string) int
	// EventMaxChars caps text in event payloads (8,000 characters).
	EventMaxChars int
	// Images bound images sent to a model (1200 px, 5 MiB).
	Images content.ImageLimits

	// UpdateInterval is the least time between two update events of a call
	// (50 ms, so at most 20 a second); the last update is always delivered.
	UpdateInterval time.Duration

	// DisableNormalization turns off argument repairs (case styles, aliases,
	// flattened text, HTML entities, scalar coercion).
	DisableNormalization bool
	// DisableCoercion keeps "5" from becoming 5 for a number parameter.
	DisableCoercion bool

	// ExternalNotice replaces the security notice before external content;
	// OmitExternalNotice writes none.
	ExternalNotice     string
	OmitExternalNotice bool

	// ConfirmTimeout is how long a person has to answer an approval
	// request before the call is blocked (2 minutes).
	ConfirmTimeout time.Duration
	// ConfirmMedium asks a person before medium-risk calls too; high-risk
	// calls always ask, low-risk calls never do.
	ConfirmMedium bool
	// ConfirmOnTimeout is what no answer in time means: "deny" (the
	// default) or "allow".
	ConfirmOnTimeout string

	// Loop configures loop detection; off unless set.
	Loop LoopConfig

	// AuditFailOpen runs calls that change things even while the auditor
	// says their records cannot be made durable (see DurableAuditor); by
	// default such calls are refused then, before they run.
	AuditFailOpen bool
}

// The defaults of Config.
const (
	DefaultTimeout        = 5 * time.Minute
	DefaultMaxTimeout     = time.Hour
	DefaultCancelGrace    = 500 * time.Millisecond
	DefaultMaxResultChars = 40_000
	DefaultEventMaxChars  = 8_000
	DefaultUpdateInterval = 50 * time.Millisecond
)

func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.DefaultTimeout, DefaultTimeout)
	def(&c.MaxTimeout, DefaultMaxTimeout)
	def(&c.CancelGrace, DefaultCancelGrace)
	def(&c.UpdateInterval, DefaultUpdateInterval)
	def(&c.ConfirmTimeout, DefaultConfirmTimeout)
	if c.MaxResultChars <= 0 {
		c.MaxResultChars = DefaultMaxResultChars
	}
	if c.EventMaxChars <= 0 {
		c.EventMaxChars = DefaultEventMaxChars
	}
	if c.CountTokens == nil {
		c.CountTokens = estimateTokens
	}
	return c
}

// Runner runs calls against a registry for one tool context.
type Runner struct {
	reg       *registry.Registry
	tc        *tool.Context
	cfg       Config
	selects   []registry.Option
	log       *slog.Logger
	events    Bus
	hooks     *Hooks
	policy    *policy.Policy
	modes     *policy.ModeSwitch
	confirmer Confirmer
	approvals approvals
	persist   []func(context.Context, tool.ResultMessage)
	outputs   tool.Outputs
	auditor   Auditor
	gate      Gate
	loops     *loopMemory
	steps     []Step
	chain     Handler
	cache     atomic.Pointer[toolCache]
	late      atomic.Int64 // results of abandoned calls, dropped

	// jobs is the job queue of async tools; nil when there is none.
	jobs JobQueue
	// release ends the subscription to jobs' events (see Close); nil
	// without jobs.
	release func()

	// approvalStore keeps "allow always" answers for good; nil keeps them
	// for the runner's life.
	approvalStore ApprovalStore
	// ruleStore keeps the allow rules people saved for the workspace; nil
	// offers none to save.
	ruleStore RuleStore
	// skills gives the rules of the skills active in each session (WithSkills).
	skills SkillRules

	// workspaces maps a tool context's workspace directory to its resolved
	// form (see scopeOf).
	workspaces sync.Map
}

// Option configures a Runner.
type Option func(*Runner)

// WithConfig sets the pipeline's limits.
func WithConfig(c Config) Option { return func(r *Runner) { r.cfg = c } }

// WithSelection limits the tools the runner will run to those the registry
// options select (profile, section, include, exclude). Other tools are
// unknown to its callers.
func WithSelection(opts ...registry.Option) Option {
	return func(r *Runner) { r.selects = append(r.selects, opts...) }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.log = l } }

// WithHooks makes the runner run the hooks registered in h.
func WithHooks(h *Hooks) Option { return func(r *Runner) { r.hooks = h } }

// WithConfirmer sets who is asked when a call needs approval. Without one,
// such calls are blocked.
func WithConfirmer(c Confirmer) Option { return func(r *Runner) { r.confirmer = c } }

// WithApprovalStore keeps "allow always" answers in s, beyond the
// runner's life: a person is not asked again about the exact action they
// allowed always.
func WithApprovalStore(s ApprovalStore) Option { return func(r *Runner) { r.approvalStore = s } }

// WithRuleStore applies the allow rules people saved for the workspace in
// s (see [RuleStore]), and lets a person asked about a call save the rule
// it proposes there ([GrantRule]).
func WithRuleStore(s RuleStore) Option { return func(r *Runner) { r.ruleStore = s } }

// WithOutputs sets where full outputs of cut results are kept (default: in
// memory, 64 MiB). The tool context's Outputs is set to it, so the
// result_read tool reads from the same place.
func WithOutputs(o tool.Outputs) Option { return func(r *Runner) { r.outputs = o } }

// WithPersist adds a function that receives every result message to be
// stored, after the tool_result_persist hooks have run.
func WithPersist(fn func(context.Context, tool.ResultMessage)) Option {
	return func(r *Runner) { r.persist = append(r.persist, fn) }
}

// WithSteps edits the list of steps: edit receives the default steps in order
// and returns the steps to use.
func WithSteps(edit func([]Step) []Step) Option {
	return func(r *Runner) { r.steps = edit(r.steps) }
}

// Gate admits calls into a runner and learns when each has ended — run,
// shaped, audited and published — so that what owns the runner can refuse
// new calls and wait for those in flight before it closes what they use
// (the composition root's Close does).
type Gate interface {
	// Enter admits a call, or refuses it with an error the call's result
	// then says (the call is neither run nor audited).
	Enter() error
	// Leave says a call Enter admitted has ended.
	Leave()
}

// WithGate makes every call of the runner pass g: Enter before anything
// else, Leave once its message is made.
func WithGate(g Gate) Option { return func(r *Runner) { r.gate = g } }

// Use adds middlewares after the default steps, just before the tool
// executes.
func Use(mws ...Middleware) Option {
	return func(r *Runner) {
		for i, mw := range mws {
			r.steps = append(r.steps, Step{Name: fmt.Sprintf("use%d", i), Wrap: mw})
		}
	}
}

// DefaultSteps returns the steps a runner starts with, in order (see the
// package documentation). They are bound to r.
func (r *Runner) DefaultSteps() []Step {
	return []Step{
		{"persist", r.persistStep},
		{"shape", r.shapeStep},
		{"access", r.accessStep},
		{"arguments", Arguments},
		{"normalize", r.normalizeStep},
		{"validate", Validate},
		{"policy", r.policyStep},
		{"audit", r.auditStep},
		{"hooks", r.hooksStep},
		{"confirm", r.confirmStep},
		{"after", r.afterStep},
		{"loop", r.loopStep},
		{"timeout", r.timeoutStep},
		{"external", r.externalStep},
		{"output", CheckOutput},
	}
}

// New returns a runner for the tools of reg, run for tc (which may be nil).
func New(reg *registry.Registry, tc *tool.Context, opts ...Option) *Runner {
	r := &Runner{reg: reg, log: slog.Default(), hooks: NewHooks()}
	r.steps = r.DefaultSteps()
	for _, o := range opts {
		o(r)
	}
	r.cfg = r.cfg.withDefaults()
	if r.skills != nil && r.policy == nil {
		r.policy = &policy.Policy{}
	}
	if r.outputs == nil {
		r.outputs = NewMemoryOutputs(64 << 20)
	}
	ctx := tool.Context{}
	if tc != nil {
		ctx = *tc
	}
	if ctx.Outputs == nil {
		ctx.Outputs = r.outputs
	}
	if r.jobs != nil {
		ctx.Jobs = r.jobs
		r.forwardJobs()
	}
	r.tc = &ctx
	r.loops = newLoopMemory()
	var h Handler = Execute
	for i := len(r.steps) - 1; i >= 0; i-- {
		h = r.steps[i].Wrap(h)
	}
	r.chain = h
	return r
}

// Steps returns the runner's steps in order.
func (r *Runner) Steps() []Step { return append([]Step(nil), r.steps...) }

// Subscribe returns a subscription to the runner's events; see Bus.Subscribe.
func (r *Runner) Subscribe(buffer int) *Subscription { return r.events.Subscribe(buffer) }

// Publish puts an event on the runner's bus, for code that drives the
// runner (an agent loop) to report what happens around the calls to the
// same subscribers.
func (r *Runner) Publish(e Event) { r.events.Publish(e) }

// Active reports whether anyone subscribes to the runner's events.
func (r *Runner) Active() bool { return r.events.Active() }

// Hooks returns the hooks the runner runs; register more at any time.
func (r *Runner) Hooks() *Hooks { return r.hooks }

// Config returns the runner's limits, defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// Context returns the tool context the runner runs calls for.
func (r *Runner) Context() *tool.Context { return r.tc }

// LateResults counts results that arrived after their call had already ended
// (timed out or cancelled) and were dropped.
func (r *Runner) LateResults() int64 { return r.late.Load() }

// Version changes when the runner's tools may have: a tool registered,
// re-registered or removed (the registry's [registry.Registry.Version]).
func (r *Runner) Version() uint64 { return r.reg.Version() }

// Tools returns the tools the runner offers, resolved for its context, in
// resolution order: those its selection and its policy let through. Tools
// whose factories fail are left out and reported to onError.
func (r *Runner) Tools(onError registry.ErrorFunc) []tool.Tool {
	all := r.reg.ResolveAll(r.tc, onError, r.selects...)
	if r.policy == nil {
		return all
	}
	return slices.DeleteFunc(all, func(t tool.Tool) bool { return !r.offered(t.Meta) })
}

// CallOption adjusts one call.
type CallOption func(*Request)

// Timeout sets the call's timeout, bounded by the runner's MaxTimeout.
func Timeout(d time.Duration) CallOption { return func(req *Request) { req.Timeout = d } }

// FromProvider says which model provider issued the call ("xai", …), or
// which model ("openai/gpt-5").
func FromProvider(name string) CallOption {
	return func(req *Request) {
		req.Provider, req.Model, _ = strings.Cut(name, "/")
	}
}

// DryRun makes the call describe what it would do instead of doing it: a
// tool that changes things returns its preview, a read-only tool runs.
func DryRun() CallOption { return func(req *Request) { req.DryRun = true } }

// OnUpdate receives the call's updates, coalesced like update events. It
// runs on the tool's goroutine and must not block for long.
func OnUpdate(fn func(tool.Result)) CallOption {
	return func(req *Request) { req.onUpdate = fn }
}

// contextFor returns the tool context of a call for caller: the runner's,
// its identity made to run as caller (tool.Identity.RunAs). Only the
// identity is merged; the context is copied only when the merged identity
// differs from the runner's (a session host's calls run as its runner's).
func (r *Runner) contextFor(caller tool.Identity) *tool.Context {
	id := r.tc.Identity
	id.RunAs(caller)
	if id == r.tc.Identity {
		return r.tc
	}
	tc := *r.tc
	tc.Identity = id
	return &tc
}

// scopeOf returns the scope of calls run as id, its workspace resolved
// once per directory.
func (r *Runner) scopeOf(id tool.Identity) tool.Scope {
	s := tool.Scope{Session: id.SessionKey}
	if id.Workspace != "" {
		if ws, ok := r.workspaces.Load(id.Workspace); ok {
			s.Workspace = ws.(string)
		} else {
			s.Workspace = tool.ResolveDir(id.Workspace)
			r.workspaces.Store(id.Workspace, s.Workspace)
		}
	}
	return s
}

// Output returns the full output the pipeline kept of a call made by
// caller, as result_read would read it: only what the caller's scope (its
// workspace and session) may see, and false when none is kept.
func (r *Runner) Output(ctx context.Context, caller tool.Identity, callID string) (tool.Output, bool, error) {
	id := r.tc.Identity
	id.RunAs(caller)
	return r.tc.Outputs.Get(tool.WithScope(ctx, r.scopeOf(id)), callID)
}

// Keep keeps text as the full output of call callID, made by the caller
// ctx carries (or the runner's identity), so that result_read reads it —
// for results an agent cuts from its context. Its origin is recorded as
// external: whoever keeps it no longer knows where the text came from, so
// result_read marks it untrusted. An output already kept (a cut result's)
// stays as it is.
func (r *Runner) Keep(ctx context.Context, callID, text string) error {
	caller, _ := CallerFrom(ctx)
	if _, found, err := r.Output(ctx, caller, callID); err != nil || found {
		return err
	}
	scope := r.scopeOf(r.contextFor(caller).Identity)
	return r.tc.Outputs.Put(tool.WithOrigin(tool.WithScope(ctx, scope), tool.Origin{External: true, Source: "an earlier tool result"}), callID, text)
}

// Run runs one call and returns its result message. It never panics and
// never returns without a message.
func (r *Runner) Run(ctx context.Context, call tool.Call, opts ...CallOption) (msg tool.ResultMessage) {
	name := strings.TrimSpace(call.Name)
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("tool pipeline panicked", "tool", name, "call", call.ID, "panic", p, "stack", string(debug.Stack()))
			res := tool.Envelope{Status: "error", Tool: name, Error: fmt.Sprintf("internal error in the tool pipeline: %v", p)}.Result()
			msg = message(call, name, res)
		}
	}()
	if call.ID == "" {
		call.ID = tool.NewCallID("call")
	}
	if r.gate != nil {
		if err := r.gate.Enter(); err != nil {
			return message(call, name, tool.Envelope{Status: "error", Tool: name, Error: err.Error()}.Result())
		}
		defer r.gate.Leave()
	}
	ctx, req, rt, res := r.request(ctx, call, opts)
	name = req.Tool.Name
	if r.events.Active() {
		r.events.Publish(Event{Type: EventStart, ToolCallID: call.ID, ToolName: name, Args: rawArgs(call.Arguments)})
	}
	var prog *progress
	req.Update = noUpdate
	if req.onUpdate != nil || r.events.Active() {
		prog = &progress{r: r, req: req}
		req.Update = prog.update
	}
	if rt != nil {
		res = r.chain(ctx, req)
	} else {
		req.Outcome = OutcomeUnknownTool
		res = Envelop(name, complete(res))
	}
	if prog != nil {
		prog.end()
	}
	r.audit(ctx, req, res)
	if r.events.Active() {
		ev := r.eventResult(res)
		r.events.Publish(Event{Type: EventEnd, ToolCallID: call.ID, ToolName: name, Result: ev, IsError: res.IsError})
	}
	return message(call, name, res)
}

// request makes the request for call, as the steps receive it, and
// resolves its tool: rt is nil, and res the error result, when no tool
// has the call's name.
func (r *Runner) request(ctx context.Context, call tool.Call, opts []CallOption) (context.Context, *Request, *resolvedTool, tool.Result) {
	name := strings.TrimSpace(call.Name)
	req := &Request{Call: call, Context: r.tc, Log: r.log, Started: time.Now(), runner: r, during: &during{}}
	if c, ok := CallerFrom(ctx); ok {
		req.Context = r.contextFor(c)
	}
	for _, o := range opts {
		o(req)
	}
	r.enterMode(req)
	if !r.cfg.DisableNormalization && req.UndoOf == "" {
		var shape string
		req.Call.Name, req.Call.Arguments, shape = r.reshape(name, call.Arguments)
		name = req.Call.Name
		if shape != "" {
			req.Note("argumentsShape", shape)
		}
	}
	req.Scope = r.scopeOf(req.Context.Identity)
	ctx = tool.WithHostRecorder(tool.WithScope(ctx, req.Scope), req.during.host)
	ctx = interact.WithRecorder(ctx, req.during.request)
	rt, res := r.resolve(name)
	if rt != nil {
		req.Tool, req.resolved = &rt.tool, rt
	} else {
		req.Tool = &tool.Tool{Name: name}
	}
	return ctx, req, rt, res
}

// Explain returns the policy's decision about a call as the pipeline's
// policy step makes it — the arguments normalized and validated, the files
// the call touches worked out by its tool's preview — without running the
// call, asking anyone, running hooks or recording anything; the rules
// saved for the workspace (see [WithRuleStore]) are its "workspace" layer.
// The request says what the policy was shown. A call that would not reach the policy
// step (an unknown tool, invalid arguments) gives an error with the
// result the model would get.
func (r *Runner) Explain(ctx context.Context, call tool.Call, opts ...CallOption) (policy.Request, policy.Result, error) {
	ctx, req, rt, res := r.request(ctx, call, opts)
	if rt == nil {
		return policy.Request{}, policy.Result{}, stopped(res)
	}
	p := r.policy.Snapshot()
	if p == nil {
		p = &policy.Policy{}
	}
	var pr policy.Request
	decide := func(ctx context.Context, req *Request) tool.Result {
		pr = r.callRequest(ctx, p, req)
		if _, saved, ok := r.savedRequest(ctx, req); ok {
			pr = saved
		}
		return tool.Result{}
	}
	if res := Arguments(r.normalizeStep(Validate(decide)))(ctx, req); res.IsError {
		return policy.Request{}, policy.Result{}, stopped(res)
	}
	return pr, p.Decide(pr), nil
}

// stopped is the error of a call stopped before the policy step: what the
// model would be told.
func stopped(res tool.Result) error {
	var parts []string
	for _, c := range res.Content {
		if env, ok := tool.ParseEnvelope(c.Text); ok && env.Error != "" {
			parts = append(parts, env.Error)
		} else if c.Type == tool.TextContent {
			parts = append(parts, c.Text)
		}
	}
	return errors.New(strings.Join(parts, "\n"))
}

// RunBatch runs the calls of one model turn concurrently and returns their
// result messages in the order of calls. A failing or panicking call does not
// affect the others; cancelling ctx cancels them all.
func (r *Runner) RunBatch(ctx context.Context, calls []tool.Call, opts ...CallOption) []tool.ResultMessage {
	out := make([]tool.ResultMessage, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { out[i] = r.Run(ctx, calls[i], opts...) })
	}
	wg.Wait()
	return out
}

func noUpdate(tool.Result) {}

// message is the result message of call: it answers with the provider's id
// of the call when there is one.
func message(call tool.Call, name string, res tool.Result) tool.ResultMessage {
	return tool.ResultMessage{
		Role:       tool.RoleToolResult,
		ToolCallID: cmp.Or(call.ProviderID, call.ID),
		ToolName:   name,
		Content:    res.Content,
		Details:    res.Details,
		IsError:    res.IsError,
		Timestamp:  time.Now().UnixMilli(),
	}
}

// complete makes sure a result has at least one content block.
func complete(res tool.Result) tool.Result {
	if len(res.Content) == 0 {
		text := "(no output)"
		if res.IsError {
			text = "(the tool failed without a message)"
		}
		res.Content = []tool.Content{{Type: tool.TextContent, Text: text}}
	}
	return res
}

// Execute is the innermost handler: it runs the tool. A panic becomes an
// error result (the stack goes to the log, not to the model); a Go error
// becomes an error envelope, through the tool's MapError when it has one.
//
// In a dry run, a tool that changes things returns what its Preview says it
// would do instead of running; a read-only tool runs as usual.
func Execute(ctx context.Context, req *Request) (res tool.Result) {
	defer func() {
		if p := recover(); p != nil {
			req.logger().Error("tool panicked", "tool", req.Tool.Name, "call", req.Call.ID, "panic", p, "stack", string(debug.Stack()))
			req.Outcome = OutcomePanic
			res = tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: fmt.Sprintf("the tool crashed (panic: %v); this is a bug in the tool, not in your call", p)}.Result()
		}
	}()
	if req.DryRun && !req.Tool.Meta.ReadOnly {
		return dryRun(ctx, req)
	}
	if req.Tool.Async != nil {
		return submit(ctx, req)
	}
	if req.UndoOf != "" {
		return undoStep(ctx, req)
	}
	res, err := req.Tool.Execute(ctx, req.Call, req.Context, req.Update)
	if err != nil {
		req.Outcome = OutcomeToolError
		return ErrorResult(req.Tool, err)
	}
	if res.Undo != nil && !res.IsError {
		keepUndo(ctx, req, res.Undo)
	}
	return res
}

// submit hands an async tool's call to the job queue and returns the
// pending result: the call itself has passed through every step (policy,
// confirmation, hooks, audit) like any other.
func submit(ctx context.Context, req *Request) tool.Result {
	if req.Context == nil || req.Context.Jobs == nil {
		req.Outcome = OutcomeToolError
		return tool.Envelope{Status: "error", Tool: req.Tool.Name, Error: "this tool runs as a background job, and no job queue is configured here: run it through `toolbelt serve` or `toolbelt run`, which keep jobs in the store"}.Result()
	}
	j, err := req.Context.Jobs.Submit(ctx, req.Tool, req.Call, req.Scope)
	if err != nil {
		req.Outcome = OutcomeToolError
		return ErrorResult(req.Tool, err)
	}
	return tool.Pending(j)
}

// dryRun returns the tool's preview of the call.
func dryRun(ctx context.Context, req *Request) tool.Result {
	if req.Tool.Preview == nil {
		return tool.Errorf("Tool %s cannot describe what it would do without doing it, so it was not run (dry run).", req.Tool.Name)
	}
	e, err := req.preview(ctx)
	if err != nil {
		req.Outcome = OutcomeToolError
		return ErrorResult(req.Tool, err)
	}
	res := tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: DescribeEffects(req.Tool.Name, *e), Origin: tool.OwnWords()}}}
	res.Details = map[string]any{"dryRun": true, "effects": *e}
	return res
}

// DescribeEffects renders a preview for people and models.
func DescribeEffects(name string, e tool.Effects) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Dry run of %s — nothing was changed.", name)
	if e.Summary != "" {
		fmt.Fprintf(&b, "\nIt would %s.", strings.TrimSuffix(e.Summary, "."))
	}
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "\n  %-12s %s", k+":", v)
		}
	}
	row("command", e.Command)
	row("directory", e.Workdir)
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		row("environment", k+"="+e.Env[k])
	}
	row("programs", e.ProgramList())
	row("executable", e.Executable)
	row("script", e.ScriptHash)
	row("workspace", e.WorkspaceHash)
	row("always", e.AlwaysCovers)
	if e.NoAlways != "" {
		row("always", "not offered: "+e.NoAlways)
	}
	if e.Risk != tool.RiskUnset {
		row("risk", strings.TrimSuffix(e.Risk.String()+" ("+e.RiskReason+")", " ()"))
	}
	row("files", strings.Join(e.Files, ", "))
	if e.Diff != "" {
		b.WriteString("\n\n")
		b.WriteString(strings.TrimRight(e.Diff, "\n"))
	}
	return b.String()
}

// ErrorResult turns a Go error from a tool into the error envelope a model
// sees: {"status":"error","tool":NAME,"error":MESSAGE}, with canRetry and a
// suggestion when the tool's MapError provides them.
func ErrorResult(t *tool.Tool, err error) tool.Result {
	return errorEnvelope(t.Name, t.MapError, err)
}

// errorEnvelope is ErrorResult for the tool named name, told about err by
// mapError or, without one, by err itself when it is a [tool.InfoError].
func errorEnvelope(name string, mapError func(error) tool.ErrorInfo, err error) tool.Result {
	env := tool.Envelope{Status: "error", Tool: name, Error: err.Error()}
	var ie tool.InfoError
	if mapError == nil && errors.As(err, &ie) {
		mapError = func(error) tool.ErrorInfo { return ie.ErrorInfo() }
	}
	if mapError != nil {
		info := mapError(err)
		if info.Message != "" {
			env.Error = info.Message
		}
		env.CanRetry = &info.CanRetry
		env.Suggestion = info.Suggestion
	}
	return env.Result()
}
