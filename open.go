package toolbelt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/automation"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/internal/intents"
	"github.com/toolbelt/toolbelt/internal/realpath"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/jobs"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/mcp/client"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/browser"
	"github.com/toolbelt/toolbelt/tools/dir"
	"github.com/toolbelt/toolbelt/tools/openapi"
	"github.com/toolbelt/toolbelt/tools/web"
)

// The steps of Open, in its order. Each registers what closes what it
// opened.

// openTools makes the registry: the built-in tools, the browser (its
// sessions' profiles in the data directory's browser folder) and
// Options.Tools.
func (tb *Toolbelt) openTools(context.Context) error {
	reg, closer := tb.opts.Builtins()
	tb.onClose(func(context.Context) error { return closer.Close() })
	tb.reg = reg
	if err := tb.openBrowser(); err != nil {
		return err
	}
	for _, t := range tb.opts.Tools {
		if err := reg.Register(t); err != nil {
			return err
		}
	}
	return nil
}

// openBrowser makes the Manager of the browser tool's Chromiums, and
// registers the tool unless the built-in tools have one; EndSession stops
// a session's Chromium, Close every one it started.
func (tb *Toolbelt) openBrowser() error {
	var dir string
	if _, data, err := tb.opts.Location(); err == nil && data != "" {
		dir = filepath.Join(data, "browser")
	}
	tb.browser = browser.NewManager(browser.Options{Dir: dir})
	tb.onClose(func(context.Context) error { return tb.browser.Close() })
	tb.onSessionEnd(tb.browser.Stop)
	if tb.reg.Has("browser") {
		return nil
	}
	return browser.Register(tb.reg, tb.browser)
}

// ErrNotPostgres is the error of a database URL that is not a PostgreSQL
// one: SQLite is given as a data directory.
var ErrNotPostgres = errors.New("the database must be a postgres:// URL; for SQLite give a data directory")

// Location returns where o keeps state, first found of: SQLite in DataDir,
// DatabaseURL, the configuration's database, then SQLite in its data
// directory or the user's data directory. dir is the SQLite database's
// directory, absolute; "" for PostgreSQL.
func (o Options) Location() (dsn, dir string, err error) {
	var database, data string
	if o.Config != nil {
		database, data = o.Config.Database, o.Config.Resolve(o.Config.Data)
	}
	if url := cmp.Or(o.DatabaseURL, database); o.DataDir == "" && url != "" {
		if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
			return "", "", ErrNotPostgres
		}
		return url, "", nil
	}
	dir = cmp.Or(o.DataDir, data)
	if dir == "" {
		if dir, err = store.DefaultDir(); err != nil {
			return "", "", err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", "", fmt.Errorf("data directory: %w", err)
	}
	return filepath.Join(dir, store.DefaultFile), dir, nil
}

// dsn returns the store's Location, refusing the workspace itself as the
// data directory.
func (tb *Toolbelt) dsn() (dsn, dir string, err error) { return tb.dsnFor(tb.ws) }

// dsnFor is dsn for the workspace ws.
func (tb *Toolbelt) dsnFor(ws string) (dsn, dir string, err error) {
	if dsn, dir, err = tb.opts.Location(); err != nil {
		return "", "", err
	}
	if dir != "" && ws != "" && realpath.Within(dir, ws) && realpath.Within(ws, dir) {
		return "", "", &DataDirError{Dir: dir}
	}
	return dsn, dir, nil
}

// DataDirError is the error of a data directory that is the workspace
// itself: one inside the workspace is hidden from the tools, but the
// workspace as a whole cannot be.
type DataDirError struct{ Dir string }

func (e *DataDirError) Error() string {
	return fmt.Sprintf("the data directory %s is the workspace itself, where tools work, so it cannot be hidden from them", e.Dir)
}

// openStore opens the store: in the background when Options.StoreAfter
// is set, and with ToolsOnly only once a tool's service uses it.
func (tb *Toolbelt) openStore(ctx context.Context) error {
	dsn, dir, err := tb.dsn()
	if err != nil {
		return err
	}
	if dir != "" {
		tb.data, tb.spool = dir, filepath.Join(dir, "audit-spool")
	}
	var opts []store.Option
	if tb.cfg.Audit.Sync == "always" {
		opts = append(opts, store.SyncCommits())
	}
	if tb.opts.ToolsOnly {
		tb.lazyStore = sync.OnceValues(func() (*store.Store, error) {
			st, err := store.Open(context.Background(), dsn, opts...)
			if err != nil {
				return nil, withFreeSpace(err, dir)
			}
			tb.onClose(func(context.Context) error { return st.Close() })
			tb.sched = tb.newScheduler(st)
			return st, nil
		})
		close(tb.tokens.ready)
		return nil
	}
	after := tb.opts.StoreAfter
	if after != nil {
		tb.st, err = store.OpenInBackground(dsn, append(opts, store.OpenAfter(after))...)
	} else {
		tb.st, err = store.Open(ctx, dsn, opts...)
	}
	if err != nil {
		return withFreeSpace(err, dir)
	}
	tb.onClose(func(context.Context) error { return tb.st.Close() })
	close(tb.tokens.ready)
	return nil
}

// withFreeSpace adds to err, when the file system of the data directory
// dir is all but full, how much is left and what to do.
func withFreeSpace(err error, dir string) error {
	var fs syscall.Statfs_t
	if dir == "" || syscall.Statfs(dir, &fs) != nil {
		return err
	}
	if free := uint64(fs.Bavail) * uint64(fs.Bsize); free < 1<<20 {
		return fmt.Errorf("%w (the file system of the data directory %s has %d KiB free: free some space there, then try again)", err, dir, free>>10)
	}
	return err
}

// openAudit opens the audit log's writer: with SQLite a spool, whose
// drain first moves into the log what killed processes left in it; with
// PostgreSQL a group-commit writer. Each call's record is durable before
// its result is returned. It makes the undo journal too, whose intents
// close as records are written, and the recovery of the changes killed
// processes left unfinished.
func (tb *Toolbelt) openAudit(ctx context.Context) error {
	var opts []auditlog.Option
	if tb.opts.AuditKey != nil {
		opts = append(opts, auditlog.WithKey(tb.opts.AuditKey))
	}
	tb.auditLog = auditlog.New(tb.st, opts...)
	state := func(err error) { tb.auditState(err) }
	var w interface {
		invoke.Auditor
		lifecycle.Service
	}
	if tb.spool == "" {
		w = tb.auditLog.Writer(auditlog.WriterOptions{OnError: func(err error) { tb.log.Error("writing the audit log", "err", err) }, OnState: state})
	} else {
		sp, err := tb.auditLog.Spool(tb.spool, auditlog.SpoolOptions{
			Sync:      tb.cfg.Audit.Sync == "always",
			OnError:   func(err error) { tb.log.Error("the audit spool", "err", err) },
			OnRecover: func(n int) { tb.log.Info(intents.RecoveredRecords, "records", n) },
			OnState:   state,
		})
		if err != nil {
			return err
		}
		w = sp
	}
	if tb.opts.StateOnly && tb.spool != "" {
		// What killed processes left in the spool belongs in the log
		// before a program reads it.
		n, err := tb.auditLog.Recover(ctx, tb.spool)
		if n > 0 {
			tb.log.Info(intents.RecoveredRecords, "records", n)
		}
		if err != nil {
			return fmt.Errorf("recovering the audit spool: %w", err)
		}
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	tb.onClose(w.Stop)
	tb.writer = w
	tb.journal = tb.st.Journal(store.JournalOptions{MaxAge: tb.cfg.Retention.Undo.D(), AwaitAnswers: true})
	tb.auditor = tb.feed.Auditor(intents.Answering{Auditor: w, Journal: tb.journal, Log: tb.log})
	tb.recovery = &intents.Recovery{AuditLog: func() (*auditlog.Log, error) { return tb.auditLog, nil }, SpoolDir: tb.spool, Log: tb.log}
	return nil
}

// auditState says, in one line each, when audit records stop being
// durable (err, why) and when they are again (nil).
func (tb *Toolbelt) auditState(err error) {
	failClosed := tb.cfg.Audit.FailsClosed()
	switch {
	case err == nil && failClosed:
		tb.log.Warn("audit records are durable again: calls that change things run again")
	case err == nil:
		tb.log.Warn("audit records are durable again")
	case failClosed:
		tb.log.Warn("calls that change things are refused until audit records can be made durable again; read-only calls go on, their records kept in memory meanwhile (audit.failClosed)", "err", err)
	default:
		tb.log.Warn("calls that change things run although their audit records cannot be made durable (audit.failClosed: false); records are kept in memory until they can be written", "err", err)
	}
}

// openSchedules makes the scheduler of the workspace's schedules (the
// cron tool's); openScheduler runs it.
func (tb *Toolbelt) openSchedules(context.Context) error {
	tb.sched = tb.newScheduler(tb.st)
	return nil
}

// newScheduler makes the scheduler of the workspace's schedules in st.
func (tb *Toolbelt) newScheduler(st *store.Store) *automation.Scheduler {
	c := tb.cfg.Cron
	return automation.New(st.Schedules(tb.ws), automation.Options{Grace: c.Grace.D(), Deliver: tb.opts.Deliver, Log: tb.log, Poll: c.Poll.D(),
		ApprovalTimeout: consoleConfirmer{tb}.timeout()})
}

// openPolicy builds the configuration's policy.
func (tb *Toolbelt) openPolicy(context.Context) error {
	tb.policy = tb.cfg.Policy()
	return nil
}

// openImports starts the MCP servers the configuration imports
// (StartImports), without waiting for them: their tools join the registry
// as each answers, while the rest opens. A server that fails to start is
// logged, and its tools are missing, as they are when it stops later.
func (tb *Toolbelt) openImports(context.Context) error {
	if tb.imports = StartImports(tb.reg, tb.cfg, tb.log, tb.opts.Version, tb.tokens, tb.opts.StoreAfter); tb.imports != nil {
		tb.onClose(tb.imports.Stop)
		// Toolbelt's own agents read the servers' resources through it.
		if err := tb.reg.Register(tb.imports.ResourcesTool()); err != nil {
			return fmt.Errorf("the resources tool: %w", err)
		}
	}
	return nil
}

// StartImports begins importing into reg the tools of the MCP servers cfg
// imports and returns their manager at once (nil when cfg imports none):
// each server's tools join reg as it answers, and the manager's Started
// says when all have answered or failed. Starting them first, before the
// store and the audit log open, lets a slow server's start (a thousand
// tools, or npx downloading it) overlap the rest of a start. tokens keeps
// the grants of the servers that sign in with OAuth. checkAfter, when set,
// holds the check of the imported schemas back until it is closed (a
// server's first answers; client.Options.SchemaCheckAfter): in a start
// importing 1,000 tools on a busy machine the check, a fixed second after
// the import, ran before the first tools/list was answered and was the
// largest part of Toolbelt's own CPU (bench/HISTORY.md, third pass, part 2).
func StartImports(reg *registry.Registry, cfg *config.Config, log *slog.Logger, version string, tokens client.TokenStore, checkAfter <-chan struct{}) *client.Manager {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	m := client.New(reg, cfg.MCPServers, client.Options{Separator: cfg.MCP.Separator, Logger: log, Version: version, Tokens: tokens, SchemaCheckAfter: checkAfter})
	if err := m.Begin(); err != nil {
		log.Warn("importing MCP servers", "err", err)
	}
	return m
}

// openOpenAPI imports the operations of the APIs tools.openapi lists as
// tools (openapi.Load), their documents fetched as web_fetch fetches. An
// API whose document cannot be read, or whose tools' names are taken, is
// logged and its tools are missing.
func (tb *Toolbelt) openOpenAPI(ctx context.Context) error {
	if len(tb.cfg.Tools.OpenAPI) == 0 {
		return nil
	}
	var fetch web.FetchConfig
	_ = tool.Config(tb.cfg.Tools.Settings).Decode(web.FetchConfigKey, &fetch) // checked with web_fetch's settings
	opts := openapi.Options{Separator: tb.cfg.MCP.Separator, Resolve: tb.cfg.Resolve, AllowHosts: fetch.AllowHosts}
	for _, api := range tb.cfg.Tools.OpenAPI {
		tools, err := openapi.Load(ctx, api, opts)
		for _, t := range tools {
			if err = tb.reg.Register(t); err != nil {
				break
			}
		}
		if err != nil {
			tb.log.Warn("importing an OpenAPI document", "api", api.Name, "err", err)
		}
	}
	return nil
}

// openDirTools loads the directory tools of the configuration's folders
// (DirTools); a broken or refused tool is logged and skipped (DirProblems).
// With Options.WatchTools their folders are watched until Close.
func (tb *Toolbelt) openDirTools(ctx context.Context) error {
	sources, opts := DirTools(tb.cfg, tb.ws)
	if len(sources) == 0 {
		return nil
	}
	tb.dirs = dir.NewLoader(tb.reg, sources, opts, func(p dir.Problem) {
		tb.log.Warn("skipped a directory tool", "dir", p.Dir, "err", p.Err)
	})
	tb.onClose(tb.dirs.Stop)
	tb.dirProblems = tb.dirs.Load()
	if tb.opts.WatchTools {
		if err := tb.dirs.Start(ctx); err != nil {
			tb.log.Warn("watching the directory tools' folders", "err", err)
		}
	}
	return nil
}

// DirTools returns the folders of directory tools cfg lists (tools.dirs;
// by default toolbelt/tools in the user's config directory, if it exists)
// and how their tools are loaded for the workspace ws: their handlers run
// with the exec tool's environment allowlist and bubblewrap settings; a
// tool is untrusted when an agent can write its folder — below ws or a
// configured agent's workspace — unless its folder is declared trusted;
// the names of imported MCP servers' and OpenAPI tools are kept for them; and each
// tool gets its settings (tools.<name>).
func DirTools(cfg *config.Config, ws string) ([]dir.Source, dir.Options) {
	var sources []dir.Source
	if !cfg.Tools.DirsSet {
		if base, err := os.UserConfigDir(); err == nil {
			sources = append(sources, dir.Source{Path: filepath.Join(base, "toolbelt", "tools"), Trusted: true, Optional: true})
		}
	}
	for _, d := range cfg.Tools.Dirs {
		p := cfg.Resolve(d.Path)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		sources = append(sources, dir.Source{Path: p, Trusted: true, Vouched: d.Trusted})
	}
	var exec struct {
		EnvAllow []string `json:"envAllow"`
		Sandbox  struct {
			Bwrap string `json:"bwrap"`
		} `json:"sandbox"`
	}
	_ = tool.Config(cfg.Tools.Settings).Decode("exec", &exec) // checked with the exec tool's settings
	writable := []string{realpath.Resolve(ws)}
	for _, a := range cfg.Agents {
		if a.Workspace != "" {
			writable = append(writable, realpath.Resolve(cfg.Resolve(a.Workspace)))
		}
	}
	var reserved []string
	for name := range cfg.MCPServers {
		reserved = append(reserved, client.NamePrefix(name, cfg.MCP.Separator))
	}
	for _, api := range cfg.Tools.OpenAPI {
		reserved = append(reserved, client.NamePrefix(api.Name, cfg.MCP.Separator))
	}
	return sources, dir.Options{EnvAllow: exec.EnvAllow, Bwrap: exec.Sandbox.Bwrap, Writable: writable, Reserved: reserved, Settings: tool.Config(cfg.Tools.Settings)}
}

// openRegistry checks the tools against the policy and makes the
// workspace's tool context (workspaceContext).
func (tb *Toolbelt) openRegistry(context.Context) error {
	if !tb.opts.ToolsOnly {
		if err := tb.cfg.CheckTools(tb.reg); err != nil {
			return err
		}
	}
	tc, err := tb.workspaceContext(tb.ws)
	if err != nil && !tb.opts.ToolsOnly {
		return err
	}
	tb.base = tc
	return nil
}

// openJobs opens the job queue when a tool is async and registers the
// async tools; with Options.WorkJobs it works their jobs until Close.
func (tb *Toolbelt) openJobs(ctx context.Context) error {
	if !tb.reg.Any(func(m *tool.Meta) bool { return m.Async }) {
		return nil
	}
	q, err := tb.openQueue(ctx, tb.opts.WorkJobs)
	if err != nil {
		return err
	}
	var async []tool.Tool
	for _, t := range tb.reg.ResolveAll(tb.base, nil) {
		if t.Async != nil {
			async = append(async, t)
		}
	}
	if err := q.Register(async...); err != nil {
		return err
	}
	tb.jobsMu.Lock()
	tb.jobs, tb.base.Jobs = q, q
	tb.jobsMu.Unlock()
	if tb.opts.WorkJobs {
		return q.Start(ctx)
	}
	return nil
}

// openQueue opens a job queue on the store's database, working jobs when
// work is set; Close stops it.
func (tb *Toolbelt) openQueue(ctx context.Context, work bool) (*jobs.Queue, error) {
	dsn, _, err := tb.dsn()
	if err != nil {
		return nil, err
	}
	j := tb.cfg.Jobs
	q, err := jobs.Open(ctx, dsn, jobs.Config{
		Workers: j.Workers, StepTimeout: j.StepTimeout.D(), WebhookSecret: j.WebhookSecret, PublicURL: j.PublicURL,
		Logger: tb.log, Run: work, Retention: tb.cfg.Retention.Jobs.D(),
	})
	if err != nil {
		return nil, err
	}
	tb.onClose(q.Stop)
	return q, nil
}

// Jobs returns the job queue of the async tools, nil when no tool is.
func (tb *Toolbelt) Jobs() *jobs.Queue {
	tb.jobsMu.Lock()
	defer tb.jobsMu.Unlock()
	return tb.jobs
}

// JobRecords returns a job queue to read and change the jobs the store
// keeps: the root's, or, when no tool is async, one opened now.
func (tb *Toolbelt) JobRecords(ctx context.Context) (*jobs.Queue, error) {
	tb.jobsMu.Lock()
	defer tb.jobsMu.Unlock()
	if tb.jobs == nil {
		q, err := tb.openQueue(ctx, false)
		if err != nil {
			return nil, err
		}
		tb.jobs = q
	}
	return tb.jobs, nil
}

// openScheduler gives the scheduler of the workspace's schedules the
// root's runner on the
// "cron" channel for its tool calls; with Options.RunSchedules it runs due schedules until
// Close, unless cron.disabled.
func (tb *Toolbelt) openScheduler(ctx context.Context) error {
	if tb.opts.ToolsOnly {
		return nil
	}
	r, err := tb.RunnerFor(tb.contextFor(tool.Identity{Channel: "cron"}))
	if err != nil {
		return err
	}
	tb.sched.SetRunner(r)
	if !tb.opts.RunSchedules || tb.cfg.Cron.Disabled {
		return nil
	}
	tb.onClose(tb.sched.Stop)
	return tb.sched.Start(ctx)
}
