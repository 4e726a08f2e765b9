package toolbelt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/mcp/compact"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/content/tokens"
	"github.com/toolbelt/toolbelt/internal/cmdhook"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/fs"
	"github.com/toolbelt/toolbelt/undo"
)

// ErrClosed is the error of a call made once Close has begun.
var ErrClosed = errors.New("toolbelt is closing: the call was not run")

// ErrToolsOnly is the error of asking a root opened with
// Options.ToolsOnly or StateOnly for what it did not open.
var ErrToolsOnly = errors.New("toolbelt: opened without the pipeline (Options.ToolsOnly or StateOnly)")

// Runner returns the governed pipeline for calls made by caller, in
// caller's workspace (Context): the configuration's limits, policy and
// hooks, the workspace's approvals kept in the store (asked of
// Options.Confirm), full outputs, the undo journal, durable audit, the job
// queue. opts are added after the root's own, and win.
func (tb *Toolbelt) Runner(caller tool.Identity, opts ...invoke.Option) (*invoke.Runner, error) {
	tc, err := tb.Context(caller)
	if err != nil {
		return nil, err
	}
	return tb.RunnerFor(tc, opts...)
}

// RunnerFor is Runner for a context Context made and the caller changed:
// a service set, the identity a session runs as.
func (tb *Toolbelt) RunnerFor(tc *tool.Context, opts ...invoke.Option) (*invoke.Runner, error) {
	if tb.auditor == nil || tb.reg == nil {
		return nil, ErrToolsOnly
	}
	return invoke.New(tb.reg, tc, append(tb.pipeline(tc.Workspace), opts...)...), nil
}

// AwaitImports waits until each imported MCP server has answered with its
// tools or failed its first start (the failure is logged, its tools
// missing), or until ctx ends: the last step of Open, unless
// Options.ServeEarly.
func (tb *Toolbelt) AwaitImports(ctx context.Context) error {
	started := tb.importsStarted()
	if started == nil {
		return nil
	}
	select {
	case <-started:
		return nil
	default:
	}
	if tb.opts.Waiting != nil {
		done := tb.opts.Waiting("Starting the imported MCP servers (" + strings.Join(slices.Sorted(maps.Keys(tb.cfg.MCPServers)), ", ") + ")")
		defer done()
	}
	select {
	case <-started:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// importsStarted is closed once the imported MCP servers have all
// answered or failed; nil when none is imported.
func (tb *Toolbelt) importsStarted() <-chan struct{} {
	if tb.imports == nil {
		return nil
	}
	return tb.imports.Started()
}

// pipeline returns the options of every runner of the root for calls in
// the workspace ws.
func (tb *Toolbelt) pipeline(ws string) []invoke.Option {
	r := tb.cfg.Retention
	opts := []invoke.Option{
		invoke.WithLogger(tb.log), invoke.WithConfig(PipelineConfig(tb.cfg)), invoke.WithPolicy(tb.policy), invoke.WithModes(tb.modes),
		invoke.WithOutputs(tb.st.Outputs(store.OutputOptions{MaxAge: r.Outputs.D(), MaxBytes: r.OutputsBytes})),
		invoke.WithAudit(tb.auditor), invoke.WithApprovalStore(tb.st.Approvals(ws)), invoke.WithRuleStore(tb.st.Approvals(ws)),
		invoke.WithGate(gate{tb}), invoke.Use(tb.recovery.First(tb.journal)), tb.feed.Option(),
	}
	if h := Hooks(tb.cfg, tb.reg); h != nil {
		opts = append(opts, invoke.WithHooks(h))
	}
	if tb.jobs != nil {
		opts = append(opts, invoke.WithJobs(tb.jobs))
	}
	var confirm invoke.Confirmer = consoleConfirmer{tb}
	if tb.opts.Confirm != nil {
		confirm = tb.opts.Confirm
	}
	return append(opts, invoke.WithConfirmer(confirm))
}

// gate counts the calls in flight, until their records are made, for
// Close to wait for, and refuses calls once Close has begun.
type gate struct{ tb *Toolbelt }

func (g gate) Enter() error {
	g.tb.mu.Lock()
	defer g.tb.mu.Unlock()
	if g.tb.closing {
		return ErrClosed
	}
	g.tb.calls.Add(1)
	return nil
}

func (g gate) Leave() { g.tb.calls.Done() }

// isClosing says whether Close has begun.
func (tb *Toolbelt) isClosing() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.closing
}

// PipelineConfig returns the pipeline settings cfg describes: its limits
// and confirmation settings, and whether audit fails closed.
func PipelineConfig(cfg *config.Config) invoke.Config {
	l := cfg.Limits
	ic := invoke.Config{
		DefaultTimeout: l.Timeout.D(), MaxTimeout: l.MaxTimeout.D(),
		MaxResultChars: l.MaxResultChars, MaxResultTokens: l.MaxResultTokens, CountTokens: tokens.O200k, EventMaxChars: l.EventMaxChars,
		UpdateInterval: l.UpdateInterval.D(),
		ConfirmTimeout: cfg.Confirm.Timeout.D(), ConfirmMedium: cfg.Confirm.Medium, ConfirmOnTimeout: cfg.Confirm.OnTimeout,
		AuditFailOpen: !cfg.Audit.FailsClosed(),
	}
	ic.Images.MaxSide, ic.Images.MaxBytes = l.ImageMaxSide, l.ImageMaxBytes
	return ic
}

// Hooks returns the tool hooks and permission_request hooks cfg
// configures, run from the directory of its file; nil when there are
// none. reg gives after hooks the tools' metadata, to match group:
// references.
func Hooks(cfg *config.Config, reg *registry.Registry) *invoke.Hooks {
	hc := cfg.Hooks
	if len(hc.Before) == 0 && len(hc.After) == 0 && len(hc.Persist) == 0 && len(hc.PermissionRequest) == 0 {
		return nil
	}
	conv := func(hs []config.Hook) []cmdhook.Hook {
		out := make([]cmdhook.Hook, len(hs))
		for i, h := range hs {
			out[i] = hookOf(h)
		}
		return out
	}
	h := invoke.NewHooks()
	opts := hookOptions(cfg)
	opts.Registry = reg
	cmdhook.Install(h, conv(hc.Before), conv(hc.After), conv(hc.Persist), opts)
	cmdhook.InstallPermission(h, eventHooks(hc.PermissionRequest), opts)
	return h
}

// AgentHooks returns the lifecycle hooks cfg configures for agent loops
// (run, chat, configured agents and their sub-agents), run from the
// directory of its file. Its permission_request hooks are the pipeline's
// (Hooks), so they answer for every call, whichever door it came by.
func AgentHooks(cfg *config.Config) agent.Hooks {
	hc := cfg.Hooks
	return cmdhook.AgentHooks(cmdhook.Events{
		SessionStart: eventHooks(hc.SessionStart), SessionEnd: eventHooks(hc.SessionEnd),
		UserPromptSubmit: eventHooks(hc.UserPromptSubmit), Stop: eventHooks(hc.Stop), PreCompact: eventHooks(hc.PreCompact),
		SubagentStart: eventHooks(hc.SubagentStart), SubagentStop: eventHooks(hc.SubagentStop),
	}, hookOptions(cfg))
}

// hookOptions say where cfg's hooks run: in the directory of its file.
func hookOptions(cfg *config.Config) cmdhook.Options {
	if cfg.Path == "" {
		return cmdhook.Options{}
	}
	return cmdhook.Options{Dir: filepath.Dir(cfg.Path)}
}

// eventHooks returns configured lifecycle hooks as hooks to run.
func eventHooks(hs []config.EventHook) []cmdhook.Hook {
	out := make([]cmdhook.Hook, len(hs))
	for i, h := range hs {
		out[i] = hookOf(h.Hook())
	}
	return out
}

// hookOf returns a configured hook as one to run, its secret read from
// the environment where it says ${NAME}.
func hookOf(h config.Hook) cmdhook.Hook {
	secret, _ := config.ExpandEnv(h.Secret, os.LookupEnv)
	return cmdhook.Hook{Name: h.Name, Tools: h.Tools, Command: h.Command, URL: h.URL, Secret: secret, Timeout: h.Timeout.D(), Priority: h.Priority}
}

// MCPServer returns an MCP server of the root's tools as the
// configuration's mcp: section describes it. Its clients are on channel
// "mcp", the owner only when mcp.owner says so; calls that need approval
// are asked of the client (elicitation), or, when it cannot ask its user,
// wait for the console (mcp.confirmFallback console, the default; deny
// blocks them at once, allow runs them). opts are added to its pipeline
// after the root's (a selection of tools, say). With mcp.readBeforeEdit
// each client session is held to read before edit (package tools/fs's
// Reads). Serve it with ServeStdio
// or Handler; close it before the root.
func (tb *Toolbelt) MCPServer(opts ...invoke.Option) (*mcp.Server, error) {
	m := tb.cfg.MCP
	dialect := schema.Anthropic
	if m.Dialect != "" {
		d, err := schema.ParseDialect(m.Dialect)
		if err != nil {
			return nil, fmt.Errorf("mcp.dialect: %w", err)
		}
		dialect = d
	}
	if tb.auditor == nil || tb.reg == nil {
		return nil, ErrToolsOnly
	}
	tc := tb.contextFor(tool.Identity{Channel: "mcp", Owner: m.Owner})
	if m.ReadBeforeEdit {
		// Each client session is held to read before edit, by its key.
		fs.ReadsService.Set(tc, fs.NewReads())
	}
	on := m.Compact
	if !on && m.CompactAbove > 0 {
		// Resolving the tools only to count them was a tenth of a start's
		// CPU: only when the count decides.
		on = compact.Enabled(len(tb.reg.ResolveAll(tc, nil)), false, m.CompactAbove)
	}
	prompts, err := tb.prompts()
	if err != nil {
		return nil, err
	}
	o := mcp.Options{
		Version: tb.opts.Version, Dialect: dialect, ExposeDetails: m.ExposeDetails, MaxResponseBytes: m.MaxResponseBytes,
		ConfirmFallback: m.ConfirmFallback, Logger: tb.log, Owner: m.Owner, Compact: on, Summaries: tb.cfg.Tools.Summaries,
		ToolsAfter: tb.importsStarted(), SessionEnded: tb.EndSession, Prompts: prompts,
		Interact: localRequests{cfg: tb.cfg}, ToolRequests: toolRules(tb.cfg),
	}
	for _, r := range m.Resources {
		// A file is the operator's, relative to toolbelt.yaml.
		o.Resources = append(o.Resources, mcp.Resource{URI: r.URI, URITemplate: r.URITemplate, Name: r.Name, Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Text: r.Text, File: tb.cfg.Resolve(r.File)})
	}
	if cmp.Or(m.ConfirmFallback, "console") == "console" {
		o.Fallback = consoleConfirmer{tb}
	}
	if tb.imports != nil {
		// The imported servers' resources and prompts are offered too.
		o.Imported = tb.imports
	}
	return mcp.New(tb.reg, tc, o, append(tb.pipeline(tc.Workspace), opts...)...), nil
}

// prompts returns the prompts of the folder mcp.prompts names, relative to
// toolbelt.yaml: none without a configuration file, whose folder it would
// be (the working directory may be a workspace the model writes).
func (tb *Toolbelt) prompts() ([]mcp.Prompt, error) {
	dir := cmp.Or(tb.cfg.MCP.Prompts, "prompts")
	if tb.cfg.Path == "" && !filepath.IsAbs(dir) {
		return nil, nil
	}
	prompts, err := mcp.LoadPrompts(tb.cfg.Resolve(dir))
	if err != nil {
		return nil, fmt.Errorf("mcp.prompts: %w", err)
	}
	return prompts, nil
}

// ImportStatus returns the state of each imported MCP server, nil when
// none is imported.
func (tb *Toolbelt) ImportStatus() []client.ServerStatus {
	if tb.imports == nil {
		return nil
	}
	return tb.imports.Status()
}

// ServeStdio serves MCPServer on stdin and stdout until ctx ends or the
// client hangs up; calls in flight then have mcp.StdioOptions' grace to
// finish.
func (tb *Toolbelt) ServeStdio(ctx context.Context) error {
	srv, err := tb.MCPServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.ServeStdio(ctx, mcp.StdioOptions{MaxLineBytes: tb.cfg.MCP.MaxMessageBytes})
}

// Undo takes back the file changes of a call in the workspace ws ("" for
// the root's), or of several calls made in that order, together, if the
// files are still as they left them (see package undo). The calls'
// changes that killed processes left unfinished, in any workspace, are
// settled first: a change kept is then undone.
func (tb *Toolbelt) Undo(ctx context.Context, ws string, callIDs ...string) (undo.Report, error) {
	ws = tool.ResolveDir(cmp.Or(ws, tb.ws))
	var interrupted []string
	for _, id := range callIDs {
		in, err := tb.journal.InterruptedIn(ctx, id)
		if err != nil {
			return undo.Report{}, err
		}
		interrupted = append(interrupted, in...)
	}
	slices.Sort(interrupted)
	interrupted = slices.Compact(interrupted)
	for _, w := range interrupted {
		if w == ws {
			continue
		}
		b, closeBridge, err := tb.bridge(w)
		if err != nil {
			tb.log.Error("recovering interrupted changes: the workspace cannot be opened; they are left for the next start", "workspace", w, "err", err)
			continue
		}
		tb.recovery.Settle(tb.journal, w, b)
		_ = closeBridge()
	}
	if _, _, err := tb.dsnFor(ws); err != nil {
		return undo.Report{}, err
	}
	b, closeBridge, err := tb.bridge(ws)
	if err != nil {
		return undo.Report{}, fmt.Errorf("call %s worked in %s, which cannot be opened now: %w", strings.Join(callIDs, ", "), ws, err)
	}
	defer closeBridge()
	tb.recovery.Settle(tb.journal, ws, b)
	return undo.Undo(ctx, tb.journal.In(ws), b, callIDs...)
}

// UndoStep runs the undo step kept with the call callID in the workspace
// ws (see tool.Tool.Undo) through r — a runner of the root for the
// person undoing it in ws, so its policy, approvals and audit apply, and
// the audit record names the call undone — and forgets the step once it
// has run without error. It returns undo.ErrNothingToUndo when no step is
// kept for the call there.
func (tb *Toolbelt) UndoStep(ctx context.Context, r *invoke.Runner, ws, callID string) (tool.ResultMessage, error) {
	j := tb.journal.In(tool.ResolveDir(cmp.Or(ws, tb.ws)))
	step, ok, err := j.Step(ctx, callID)
	switch {
	case err != nil:
		return tool.ResultMessage{}, err
	case !ok:
		return tool.ResultMessage{}, fmt.Errorf("%w for call %s: no undo step is kept for it", undo.ErrNothingToUndo, callID)
	}
	msg := r.Undo(ctx, callID, step)
	if msg.IsError {
		return msg, nil // kept, to try again
	}
	return msg, j.DeleteStep(ctx, callID)
}

// SettleInterrupted settles the changes killed processes left unfinished
// in the root's workspace (see package intents): a server does it once it
// has given its first answers; otherwise the first call waits for it.
func (tb *Toolbelt) SettleInterrupted() {
	if tb.base != nil && tb.base.FS != nil && tb.recovery != nil {
		tb.recovery.Settle(tb.journal, tool.ResolveDir(tb.ws), tb.base.FS)
	}
}

// Journal returns the undo journal: the file changes of calls, by
// workspace.
func (tb *Toolbelt) Journal() *store.Journal { return tb.journal }

// AuditLog returns the audit log, to read or verify.
func (tb *Toolbelt) AuditLog() *auditlog.Log { return tb.auditLog }

// Record appends r to the audit log and returns once it is durable: for
// what a program does outside the pipeline that the log must show, such
// as an undo.
func (tb *Toolbelt) Record(ctx context.Context, r audit.Record) error {
	if tb.writer == nil {
		return ErrToolsOnly
	}
	return tb.writer.Append(ctx, r)
}
