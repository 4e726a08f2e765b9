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
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/dir"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/web"
)

// The steps of Open, in its order. Each registers what closes what it
// opened.

// openTools makes the registry: the built-in tools and Options.Tools.
func (tb *Toolbelt) openTools(context.Context) error {
	reg, closer := tb.opts.Builtins()
	tb.onClose(func(context.Context) error { return closer.Close() })
	tb.reg = reg
	for _, t := range tb.opts.Tools {
		if err := reg.Register(t); err != nil {
			return err
		}
	}
	return nil
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
func (tb *Toolbelt) dsn() (dsn, dir string, err error) {
	if dsn, dir, err = tb.opts.Location(); err != nil {
		return "", "", err
	}
	if dir != "" && realpath.Within(dir, tb.ws) && realpath.Within(tb.ws, dir) {
		return "", "", fmt.Errorf("the data directory %s is the workspace itself, where tools work, so it cannot be hidden from them: keep state elsewhere", dir)
	}
	return dsn, dir, nil
}

// openStore opens the store, in the background when Options.StoreAfter is
// set.
func (tb *Toolbelt) openStore(ctx context.Context) error {
	dsn, dir, err := tb.dsn()
	if err != nil {
		return err
	}
	if dir != "" {
		tb.spool = filepath.Join(dir, "audit-spool")
	}
	var opts []store.Option
	if tb.cfg.Audit.Sync == "always" {
		opts = append(opts, store.SyncCommits())
	}
	if tb.opts.StoreAfter != nil {
		tb.st, err = store.OpenInBackground(dsn, append(opts, store.OpenAfter(tb.opts.StoreAfter))...)
	} else {
		tb.st, err = store.Open(ctx, dsn, opts...)
	}
	if err != nil {
		return err
	}
	tb.onClose(func(context.Context) error { return tb.st.Close() })
	return nil
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
	failClosed := tb.cfg.Audit.FailsClosed()
	state := func(err error) {
		if err != nil {
			tb.log.Warn("audit records cannot be made durable", "failClosed", failClosed, "err", err)
		} else {
			tb.log.Warn("audit records are durable again")
		}
	}
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
	if err := w.Start(ctx); err != nil {
		return err
	}
	tb.onClose(w.Stop)
	tb.journal = tb.st.Journal(store.JournalOptions{MaxAge: tb.cfg.Retention.Undo.D(), AwaitAnswers: true})
	tb.auditor = intents.Answering{Auditor: w, Journal: tb.journal, Log: tb.log}
	tb.recovery = &intents.Recovery{AuditLog: func() (*auditlog.Log, error) { return tb.auditLog, nil }, SpoolDir: tb.spool, Log: tb.log}
	return nil
}

// openPolicy builds the configuration's policy.
func (tb *Toolbelt) openPolicy(context.Context) error {
	tb.policy = tb.cfg.Policy()
	return nil
}

// openApprovals opens the actions a person allowed always in the
// workspace.
func (tb *Toolbelt) openApprovals(context.Context) error {
	tb.approvals = tb.st.Approvals(tb.ws)
	return nil
}

// openImports starts the MCP servers the configuration imports
// (StartImports), without waiting for them: their tools join the registry
// as each answers, while the rest opens. A server that fails to start is
// logged, and its tools are missing, as they are when it stops later.
func (tb *Toolbelt) openImports(context.Context) error {
	if tb.imports = StartImports(tb.reg, tb.cfg, tb.log, tb.opts.Version); tb.imports != nil {
		tb.onClose(tb.imports.Stop)
	}
	return nil
}

// StartImports begins importing into reg the tools of the MCP servers cfg
// imports and returns their manager at once (nil when cfg imports none):
// each server's tools join reg as it answers, and the manager's Started
// says when all have answered or failed. Starting them first, before the
// store and the audit log open, lets a slow server's start (a thousand
// tools, or npx downloading it) overlap the rest of a start.
func StartImports(reg *registry.Registry, cfg *config.Config, log *slog.Logger, version string) *client.Manager {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	m := client.New(reg, cfg.MCPServers, client.Options{Separator: cfg.MCP.Separator, Logger: log, Version: version})
	if err := m.Begin(); err != nil {
		log.Warn("importing MCP servers", "err", err)
	}
	return m
}

// openDirTools loads the directory tools of the configuration's folders
// (DirTools); a broken or refused tool is logged and skipped.
func (tb *Toolbelt) openDirTools(context.Context) error {
	sources, opts := DirTools(tb.cfg, tb.ws)
	if len(sources) == 0 {
		return nil
	}
	tb.dirs = dir.NewLoader(tb.reg, sources, opts, func(p dir.Problem) {
		tb.log.Warn("skipped a directory tool", "dir", p.Dir, "err", p.Err)
	})
	tb.onClose(tb.dirs.Stop)
	tb.dirs.Load()
	return nil
}

// DirTools returns the folders of directory tools cfg lists (tools.dirs;
// by default toolbelt/tools in the user's config directory, if it exists)
// and how their tools are loaded for the workspace ws: their handlers run
// with the exec tool's environment allowlist and bubblewrap settings; a
// tool is untrusted when an agent can write its folder — below ws or a
// configured agent's workspace — unless its folder is declared trusted;
// and the names of imported MCP servers' tools are kept for them.
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
	return sources, dir.Options{EnvAllow: exec.EnvAllow, Bwrap: exec.Sandbox.Bwrap, Writable: writable, Reserved: reserved}
}

// openRegistry checks the tools against the policy and makes the
// workspace's tool context, with its file bridge and the state its tools
// keep in the store.
func (tb *Toolbelt) openRegistry(context.Context) error {
	if err := tb.cfg.CheckTools(tb.reg); err != nil {
		return err
	}
	b, err := tb.bridge()
	if err != nil {
		return fmt.Errorf("workspace %s: %w", tb.ws, err)
	}
	tb.onClose(func(context.Context) error { return b.Close() })
	tb.base = &tool.Context{
		Identity: tool.Identity{Workspace: tb.ws}, FSRoot: tb.ws, FS: b, Config: tool.Config(tb.cfg.Tools.Settings),
		Journal: tb.journal,
	}
	memory.IndexService.Set(tb.base, tb.st.Memory())
	web.CacheService.Set(tb.base, tb.st.Cache(store.CacheOptions{}))
	return nil
}

// openJobs opens the job queue when a tool is async (or the root serves),
// registers the async tools, and with Options.WorkJobs works jobs until
// Close.
func (tb *Toolbelt) openJobs(ctx context.Context) error {
	if !tb.opts.WorkJobs && !tb.reg.Any(func(m *tool.Meta) bool { return m.Async }) {
		return nil
	}
	dsn, _, err := tb.dsn()
	if err != nil {
		return err
	}
	j := tb.cfg.Jobs
	q, err := jobs.Open(ctx, dsn, jobs.Config{
		Workers: j.Workers, StepTimeout: j.StepTimeout.D(), WebhookSecret: j.WebhookSecret, PublicURL: j.PublicURL,
		Logger: tb.log, Run: tb.opts.WorkJobs, Retention: tb.cfg.Retention.Jobs.D(),
	})
	if err != nil {
		return err
	}
	tb.onClose(q.Stop)
	var async []tool.Tool
	for _, t := range tb.reg.ResolveAll(tb.base, nil) {
		if t.Async != nil {
			async = append(async, t)
		}
	}
	if err := q.Register(async...); err != nil {
		return err
	}
	tb.jobs, tb.base.Jobs = q, q
	if tb.opts.WorkJobs {
		return q.Start(ctx)
	}
	return nil
}

// openScheduler makes the scheduler of the workspace's schedules (the
// cron tool's), whose tool calls run through a runner of the root on the
// "cron" channel; with Options.WorkJobs it runs due schedules until Close,
// unless cron.disabled.
func (tb *Toolbelt) openScheduler(ctx context.Context) error {
	c := tb.cfg.Cron
	tb.sched = automation.New(tb.st.Schedules(tb.ws), automation.Options{Grace: c.Grace.D(), Deliver: tb.opts.Deliver, Log: tb.log, Poll: c.Poll.D()})
	cron.SchedulerService.Set(tb.base, tb.sched)
	tb.sched.SetRunner(tb.Runner(tool.Identity{Channel: "cron"}))
	if !tb.opts.WorkJobs || c.Disabled {
		return nil
	}
	tb.onClose(tb.sched.Stop)
	return tb.sched.Start(ctx)
}
