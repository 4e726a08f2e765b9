// Package toolbelt is Toolbelt's composition root: it opens everything a
// configuration describes, in one visible order, and hands the front doors
// what they need — a runner for a caller, an MCP server (stdio and HTTP) —
// then shuts it all down in reverse order with one Close. The CLI
// (cmd/toolbelt) is built on it, and so can a Go program be:
//
//	tb, err := toolbelt.Open(ctx, toolbelt.Options{Config: cfg, Workspace: ws, DataDir: data, Tools: mine})
//	if err != nil { … }
//	defer tb.Close(ctx)
//	return tb.ServeStdio(ctx)
//
// Open opens, each resource registering its own cleanup as it opens: the
// imported MCP servers (started first, so that they start while the rest
// opens), the store, the audit log (its writer or spool, and the recovery
// of what killed processes left), the schedules, the policy, the directory
// tools, the registry (its tools checked against the policy, and the
// workspace's context), the job queue and the scheduler; then it waits for
// the imported servers to answer with their tools (or fail, which is
// logged), so a runner made after Open finds them. The job queue comes
// after the tools because it registers the async tools among them.
// Options.ToolsOnly and StateOnly open less, for programs that list tools
// or read state.
//
// # The public API
//
// Toolbelt is at v0: its API may change between minor versions. The API is
// this package and the packages it is built from — tool, registry, schema,
// invoke, provider, content, fsbridge, catalog, policy, audit, store,
// config, jobs, automation, undo, lifecycle, mcp, console, llm, agent and the
// built-in tools under tools/, with their sub-packages (llm/llmtest is a
// replay server for the tests of programs that talk to models). What is
// under internal/ is not API: the file change sets and diffs, the command
// hooks toolbelt.yaml configures, this module's own test helpers. The list,
// and the rule that no exported name exists only for a test, are in
// docs/development.md ("The public API").
package toolbelt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/canvas"
	"github.com/toolbelt/toolbelt/channels"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/feed"
	"github.com/toolbelt/toolbelt/fsbridge"
	"github.com/toolbelt/toolbelt/internal/intents"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/nodes"
	"github.com/toolbelt/toolbelt/policy"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
	"github.com/toolbelt/toolbelt/tools/browser"
	"github.com/toolbelt/toolbelt/tools/dir"
	"github.com/toolbelt/toolbelt/tools/gateway"
)

// Options say what Open opens.
type Options struct {
	// Config is the configuration (as toolbelt.yaml holds it); nil for the
	// defaults.
	Config *config.Config
	// Workspace is the directory the tools work in; required.
	Workspace string
	// DataDir is the directory of the SQLite store and the audit spool.
	// Without it, DatabaseURL (a postgres:// URL) or the configuration's
	// database or data directory says where state is kept.
	DataDir     string
	DatabaseURL string
	// Tools are registered beside the built-in tools.
	Tools []tool.Tool
	// Builtins makes the registry Tools join, and what stops the tools'
	// background work (default tools.Core).
	Builtins func() (*registry.Registry, io.Closer)
	// Mode, when set, is the permission mode of every call, whatever the
	// configuration says (toolbelt's --mode); see SetMode.
	Mode policy.Mode
	// Confirm answers the calls of runners that need a person's approval;
	// nil: the console does — such a call waits for its decision (up to
	// console.approvalTimeout) when a console is open, and is blocked at
	// once when none is. An MCP server asks its clients instead, and the
	// console for those that cannot ask their users.
	Confirm invoke.Confirmer
	// Logger receives what the services log (default: warnings to stderr).
	Logger *slog.Logger
	// AuditKey keys the audit chain's HMAC; nil for an unkeyed chain.
	AuditKey []byte
	// TokenKey seals the OAuth grants of imported MCP servers in the store
	// (client.Vault); nil: the key in TokenKeyFile in the data directory,
	// made on first use.
	TokenKey []byte
	// StoreAfter, when set, opens the store in the background once it is
	// closed, or as soon as something uses the store: a server's first
	// answers need no state. The check of the imported tools' schemas
	// waits for it too (client.Options.SchemaCheckAfter).
	StoreAfter <-chan struct{}
	// WorkJobs makes the job queue work jobs, as a server does; otherwise a
	// call of an async tool records its job for a server on the same store
	// to work.
	WorkJobs bool
	// Deliver runs an agent for a schedule's message; nil: such schedules
	// fail, saying so.
	Deliver automation.Deliver
	// Version names this program to imported servers and MCP clients.
	Version string

	// ToolsOnly opens the tools alone — the built-in ones, Tools, the
	// directory tools and the imported servers' — with a context to list
	// and describe them in: nothing is written, and the store opens only
	// when a tool's service uses it. A workspace that cannot be opened
	// leaves the tools that need it unavailable. Runners are not available
	// (ErrToolsOnly).
	ToolsOnly bool
	// StateOnly opens the store, the audit log and the undo journal alone,
	// for programs that read state, record in the audit log or undo calls:
	// no tool is loaded, no imported server started. Workspace may be
	// empty then.
	StateOnly bool
	// RunSchedules runs due schedules until Close, unless cron.disabled.
	RunSchedules bool
	// WatchTools keeps the directory tools in step with their folders
	// until Close: added, changed and removed tools join, change or leave
	// the registry.
	WatchTools bool
	// Protect names more files and folders (absolute) the tools may
	// neither change nor remove, beside those the configuration implies:
	// the folders of directory tools and the agents' system prompt files.
	Protect []string
	// WrapBridge, when set, wraps the file bridge of every workspace: to
	// trace, meter or fail the tools' file operations.
	WrapBridge func(fsbridge.Bridge) fsbridge.Bridge
	// ServeEarly returns from Open before the imported MCP servers have
	// answered with their tools: a server, whose MCPServer lists its tools
	// once they have, answers its first requests sooner. AwaitImports
	// waits for them.
	ServeEarly bool
	// Waiting, when set, is told when Open waits for something slow (the
	// imported MCP servers' first start), with what, and returns what Open
	// calls when the wait is over: a program can show that it waits.
	Waiting func(what string) (done func())
}

// Toolbelt is an open composition root. Its methods are safe for
// concurrent use.
type Toolbelt struct {
	opts Options
	cfg  *config.Config
	log  *slog.Logger
	ws   string // the workspace, absolute

	reg *registry.Registry
	st  *store.Store
	// lazyStore opens the store of a ToolsOnly root on first use, and the
	// scheduler of the workspace's schedules with it (see lazy.go).
	lazyStore   func() (*store.Store, error)
	data        string // the SQLite store's directory; "" for PostgreSQL
	tokens      *importTokens
	spool       string // the audit spool's directory; "" for PostgreSQL
	auditLog    *auditlog.Log
	auditor     invoke.Auditor // the pipeline's: its records close the journal's intents
	writer      invoke.Auditor // the audit log's writer or spool
	journal     *store.Journal
	recovery    *intents.Recovery
	policy      *policy.Policy
	modes       *policy.ModeSwitch // the permission mode of every runner's calls
	imports     *client.Manager
	dirs        *dir.Loader
	browser     *browser.Manager // the browser tool's Chromiums, one per session
	jobs        *jobs.Queue
	jobsMu      sync.Mutex // Jobs opening a queue
	sched       *automation.Scheduler
	dirProblems []dir.Problem   // the directory tools the first load skipped
	base        *tool.Context   // the workspace's context; runners copy it
	feed        *feed.Hub       // every runner's calls, live (Feed)
	canvas      *canvas.Host    // the sessions' canvases (Canvas)
	channels    *channels.Hub   // the configured channels (Channels); nil for none
	nodes       *nodes.Registry // the paired nodes (Nodes), made once
	nodesOnce   sync.Once

	// gateway is the server the gateway tool manages (SetGateway); nil
	// outside one.
	gateway gateway.Gateway
	// previewOnce starts the canvas's loopback listener for the browser's
	// snapshots (canvasPreview): at previewURL, or failed with previewErr.
	previewOnce sync.Once
	previewURL  string
	previewErr  error
	// workspaces are the contexts of the workspaces other than the
	// root's that callers work in, opened on first use.
	workspaces map[string]*tool.Context
	wsMu       sync.Mutex // guards workspaces

	calls   sync.WaitGroup // calls in flight
	mu      sync.Mutex
	closing bool
	cleanup []func(context.Context) error // run last first by Close
	ends    []func(key string) error      // told by EndSession
}

// Open opens what o describes, in order; when one fails, what was opened
// is closed again and the error names what failed.
func Open(ctx context.Context, o Options) (*Toolbelt, error) {
	tb, err := newToolbelt(o)
	if err != nil {
		return nil, err
	}
	tools, state := !o.StateOnly, !o.ToolsOnly // what o opens
	for _, step := range []struct {
		what string
		open func(context.Context) error
		when bool
	}{
		{"the canvas", tb.openCanvas, tools},
		{"the tools", tb.openTools, tools},
		{"the channels", tb.openChannels, tools},
		{"the imported MCP servers", tb.openImports, tools},
		{"the OpenAPI tools", tb.openOpenAPI, tools},
		{"the store", tb.openStore, true},
		{"the audit log", tb.openAudit, state},
		{"the schedules", tb.openSchedules, state},
		{"the policy", tb.openPolicy, true},
		{"the directory tools", tb.openDirTools, tools},
		{"the registry", tb.openRegistry, tools},
		{"the permission mode", tb.openModes, tools && state},
		{"the job queue", tb.openJobs, tools && state},
		{"the scheduler", tb.openScheduler, tools},
		{"the imported MCP servers' tools", tb.AwaitImports, tools && !o.ServeEarly},
	} {
		if !step.when {
			continue
		}
		if err := step.open(ctx); err != nil {
			return nil, errors.Join(&OpenError{Step: step.what, Err: err}, tb.Close(ctx))
		}
	}
	return tb, nil
}

// OpenError is the error of a step of Open: what it opened, and why it
// failed.
type OpenError struct {
	Step string // "the store", "the registry", …
	Err  error
}

func (e *OpenError) Error() string { return "opening " + e.Step + ": " + e.Err.Error() }

func (e *OpenError) Unwrap() error { return e.Err }

// newToolbelt checks o and fills in its defaults.
func newToolbelt(o Options) (*Toolbelt, error) {
	if o.ToolsOnly && o.StateOnly {
		return nil, errors.New("toolbelt: Options.ToolsOnly and StateOnly exclude each other")
	}
	var ws string
	switch {
	case o.Workspace != "":
		abs, err := filepath.Abs(o.Workspace)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		ws = abs
	case !o.StateOnly:
		return nil, errors.New("toolbelt: Options.Workspace is required")
	}
	var err error
	cfg := o.Config
	if cfg == nil {
		if cfg, err = config.Parse("", nil); err != nil {
			return nil, err
		}
		o.Config = cfg
	}
	log := cmp.Or(o.Logger, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if o.Builtins == nil {
		o.Builtins = tools.Core
	}
	tb := &Toolbelt{opts: o, cfg: cfg, log: log, ws: ws, feed: feed.New()}
	tb.tokens = newImportTokens(tb)
	return tb, nil
}

// onClose registers what closes a resource just opened.
func (tb *Toolbelt) onClose(fn func(context.Context) error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanup = append(tb.cleanup, fn)
}

// onSessionEnd registers what lets go of a service's state for a session
// when the session ends (EndSession).
func (tb *Toolbelt) onSessionEnd(fn func(key string) error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.ends = append(tb.ends, fn)
}

// EndSession tells the services that keep state for a session that the
// session ended, for them to let go of it: the browser tool's Chromium of
// the session is stopped, its profile removed unless
// tools.browser.keepProfile keeps it. The front doors call it where their
// sessions end (an MCP client's session closing, a sub-agent's run
// ending); Close ends every session still open. What fails is logged.
func (tb *Toolbelt) EndSession(key string) {
	tb.mu.Lock()
	ends := tb.ends
	tb.mu.Unlock()
	for _, end := range ends {
		if err := end(key); err != nil {
			tb.log.Warn("ending a session's state", "session", key, "err", err)
		}
	}
}

// Close waits for the calls in flight to finish (until ctx ends), then
// closes what Open opened, the last opened first, and returns every error
// it met. Calls made after Close began are refused. Close may be called
// more than once; later calls close nothing.
func (tb *Toolbelt) Close(ctx context.Context) error {
	tb.mu.Lock()
	tb.closing = true
	cleanup := tb.cleanup
	tb.cleanup = nil
	tb.mu.Unlock()
	done := make(chan struct{})
	go func() { tb.calls.Wait(); close(done) }()
	var errs []error
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("calls still in flight: %w", ctx.Err()))
	}
	for i := len(cleanup) - 1; i >= 0; i-- {
		errs = append(errs, cleanup[i](ctx))
	}
	return errors.Join(errs...)
}

// Scheduler returns the scheduler of the workspace's schedules. Its tool
// calls run through a runner of the root on the "cron" channel; a
// program that runs one on a person's behalf may set another.
func (tb *Toolbelt) Scheduler() *automation.Scheduler { return tb.sched }

// Feed returns the live feed of the calls of every runner the root makes
// (Runner, RunnerFor, MCPServer's, the scheduler's): each call's start,
// progress, wait for the console's approval and end, with its audit
// record.
func (tb *Toolbelt) Feed() *feed.Hub { return tb.feed }

// Registry returns the registry of every tool the root serves.
func (tb *Toolbelt) Registry() *registry.Registry { return tb.reg }

// Browser returns the Manager of the browser tool's Chromiums (one per
// session), for pictures of pages the program serves (Manager.Capture);
// nil for a root opened with StateOnly.
func (tb *Toolbelt) Browser() *browser.Manager { return tb.browser }

// Store returns the store that keeps state.
func (tb *Toolbelt) Store() *store.Store { return tb.st }

// Tokens returns the OAuth grants of the imported MCP servers, sealed in
// the store (toolbelt mcp login, logout and servers use it).
func (tb *Toolbelt) Tokens() client.TokenStore { return tb.tokens }

// Config returns the configuration the root was opened with.
func (tb *Toolbelt) Config() *config.Config { return tb.cfg }

// Workspace returns the workspace directory, absolute.
func (tb *Toolbelt) Workspace() string { return tb.ws }

// DirProblems returns the directory tools Open skipped, with why.
func (tb *Toolbelt) DirProblems() []dir.Problem { return tb.dirProblems }

// DirTool returns the directory tool named name, when the registry holds
// one.
func (tb *Toolbelt) DirTool(name string) (*dir.Tool, bool) {
	if tb.dirs == nil {
		return nil, false
	}
	return tb.dirs.Tool(name)
}

// Adopt registers t, a directory tool the program loaded itself (one a
// person names to try), in place of a loaded copy of it; the name of
// another kind of tool is refused.
func (tb *Toolbelt) Adopt(t *dir.Tool) error {
	if m, ok := tb.reg.Meta(t.Meta.ID); ok {
		if m.Source != "directory" {
			return fmt.Errorf("%s: the name %q is taken by a %s tool: rename the directory tool", t.Dir, t.Meta.ID, m.Source)
		}
		tb.reg.Unregister(t.Meta.ID)
	}
	if err := tb.reg.Register(t.Tool()); err != nil {
		return err
	}
	if tb.dirs != nil {
		tb.dirs.Adopt(t)
	}
	return nil
}
