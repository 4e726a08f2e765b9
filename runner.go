package toolbelt

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/content/tokens"
	"github.com/toolbelt/toolbelt/internal/cmdhook"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/mcp"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/schema"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/undo"
)

// ErrClosed is the error of a call made once Close has begun.
var ErrClosed = errors.New("toolbelt is closing: the call was not run")

// Runner returns the governed pipeline for calls made by caller in the
// workspace: the configuration's limits, policy and hooks, approvals kept
// in the store (asked of Options.Confirm), full outputs, the undo journal,
// durable audit, the job queue. opts are added after the root's own.
func (tb *Toolbelt) Runner(caller tool.Identity, opts ...invoke.Option) *invoke.Runner {
	return invoke.New(tb.reg, tb.contextFor(caller), append(tb.pipeline(), opts...)...)
}

// awaitImports waits until each imported MCP server has answered with its
// tools or failed its first start (the failure is logged, its tools
// missing), or until ctx ends: the last step of Open.
func (tb *Toolbelt) awaitImports(ctx context.Context) error {
	started := tb.importsStarted()
	if started == nil {
		return nil
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

// contextFor returns the workspace's tool context as caller's.
func (tb *Toolbelt) contextFor(c tool.Identity) *tool.Context {
	tc := *tb.base
	c.Workspace = tb.base.Workspace
	tc.Identity = c
	return &tc
}

// pipeline returns the options of every runner of the root.
func (tb *Toolbelt) pipeline() []invoke.Option {
	r := tb.cfg.Retention
	opts := []invoke.Option{
		invoke.WithLogger(tb.log), invoke.WithConfig(PipelineConfig(tb.cfg)), invoke.WithPolicy(tb.policy),
		invoke.WithOutputs(tb.st.Outputs(store.OutputOptions{MaxAge: r.Outputs.D(), MaxBytes: r.OutputsBytes})),
		invoke.WithAudit(tb.auditor), invoke.WithApprovalStore(tb.approvals),
		invoke.WithGate(gate{tb}), invoke.Use(tb.recovery.First(tb.journal)),
	}
	if h := Hooks(tb.cfg, tb.reg); h != nil {
		opts = append(opts, invoke.WithHooks(h))
	}
	if tb.jobs != nil {
		opts = append(opts, invoke.WithJobs(tb.jobs))
	}
	if tb.opts.Confirm != nil {
		opts = append(opts, invoke.WithConfirmer(tb.opts.Confirm))
	}
	return opts
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

// Hooks returns the command hooks cfg configures, run from the directory
// of its file; nil when there are none. reg gives after hooks the tools'
// metadata, to match group: references.
func Hooks(cfg *config.Config, reg *registry.Registry) *invoke.Hooks {
	if len(cfg.Hooks.Before) == 0 && len(cfg.Hooks.After) == 0 && len(cfg.Hooks.Persist) == 0 {
		return nil
	}
	conv := func(hs []config.Hook) []cmdhook.Hook {
		out := make([]cmdhook.Hook, len(hs))
		for i, h := range hs {
			out[i] = cmdhook.Hook{Name: h.Name, Tools: h.Tools, Command: h.Command, Timeout: h.Timeout.D(), Priority: h.Priority}
		}
		return out
	}
	h := invoke.NewHooks()
	d := ""
	if cfg.Path != "" {
		d = filepath.Dir(cfg.Path)
	}
	cmdhook.Install(h, conv(cfg.Hooks.Before), conv(cfg.Hooks.After), conv(cfg.Hooks.Persist), cmdhook.Options{Dir: d, Registry: reg})
	return h
}

// MCPServer returns an MCP server of the root's tools as the
// configuration's mcp: section describes it. Its clients are on channel
// "mcp", the owner only when mcp.owner says so; calls that need approval
// are asked of the client (elicitation). Serve it with ServeStdio or
// Handler; close it before the root.
func (tb *Toolbelt) MCPServer() (*mcp.Server, error) {
	m := tb.cfg.MCP
	dialect := schema.Anthropic
	if m.Dialect != "" {
		d, err := schema.ParseDialect(m.Dialect)
		if err != nil {
			return nil, err
		}
		dialect = d
	}
	tc := tb.contextFor(tool.Identity{Channel: "mcp", Owner: m.Owner})
	return mcp.New(tb.reg, tc, mcp.Options{
		Version: tb.opts.Version, Dialect: dialect, ExposeDetails: m.ExposeDetails, MaxResponseBytes: m.MaxResponseBytes,
		ConfirmFallback: m.ConfirmFallback, Logger: tb.log, Owner: m.Owner, Compact: m.Compact,
		ToolsAfter: tb.importsStarted(),
	}, tb.pipeline()...), nil
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

// Undo takes back the file changes of a call in the workspace, if the
// files are still as it left them (see package undo). A change a killed
// process left unfinished is settled first.
func (tb *Toolbelt) Undo(ctx context.Context, callID string) (undo.Report, error) {
	ws := tool.ResolveDir(tb.ws)
	tb.recovery.Settle(tb.journal, ws, tb.base.FS)
	return undo.Undo(ctx, tb.journal.In(ws), tb.base.FS, callID)
}
