package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/intents"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/lifecycle"
	"github.com/toolbelt/toolbelt/store"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools/cron"
	"github.com/toolbelt/toolbelt/tools/memory"
	"github.com/toolbelt/toolbelt/tools/sessions"
	"github.com/toolbelt/toolbelt/tools/web"
)

// runFlags are the flags of commands that run calls.
type runFlags struct {
	Yes    bool `help:"Approve every call that needs a person's approval (recorded as such in the audit log)."`
	DryRun bool `name:"dry-run" help:"Describe what the calls would change instead of changing it."`
}

// pipeline returns the options every pipeline of this run gets from the
// config: limits, confirmation settings and policy (checked against the
// registry first), and the state it keeps in the store — full outputs, the
// undo journal and the web tools' cache (set on tc), the audit log. A field of override that is set
// wins over the config.
func (e *env) pipeline(tc *tool.Context, override invoke.Config) ([]invoke.Option, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	st, err := e.state(tc.Workspace)
	if err != nil {
		return nil, err
	}
	r := cfg.Retention
	journal := st.Journal(store.JournalOptions{MaxAge: r.Undo.D(), AwaitAnswers: true})
	tc.Journal = journal
	web.CacheService.Set(tc, st.Cache(store.CacheOptions{}))
	memory.IndexService.Set(tc, st.Memory())
	if _, ok := sessions.StoreService.Get(tc); ok {
		sessions.StoreService.Set(tc, st.Sessions().ForTools())
	}
	sched, err := e.scheduler(st, tc.Workspace)
	if err != nil {
		return nil, err
	}
	cron.SchedulerService.Set(tc, sched)
	if err := cfg.CheckTools(e.toolsNow()); err != nil {
		return nil, err
	}
	aw, err := e.auditWriter(st)
	if err != nil {
		return nil, err
	}
	ic := toolbelt.PipelineConfig(cfg)
	if override.MaxResultChars > 0 {
		ic.MaxResultChars = override.MaxResultChars
	}
	ic.Loop = override.Loop
	opts := []invoke.Option{
		invoke.WithLogger(e.log), invoke.WithConfig(ic), invoke.WithPolicy(cfg.Policy()),
		invoke.WithOutputs(st.Outputs(store.OutputOptions{MaxAge: r.Outputs.D(), MaxBytes: r.OutputsBytes})),
		invoke.WithAudit(intents.Answering{Auditor: aw, Journal: journal, Log: e.log}),
		invoke.WithApprovalStore(st.Approvals(tc.Workspace)),
		invoke.Use(e.recoveries().First(journal)),
	}
	if h := toolbelt.Hooks(cfg, e.toolsNow()); h != nil {
		opts = append(opts, invoke.WithHooks(h))
	}
	// Serve, mcp and run work jobs; another command that may call an async
	// tool records its job for a server on the same store to work.
	if e.workJobs || e.hasAsyncTools() {
		q, err := e.jobQueue(tc, e.workJobs)
		if err != nil {
			return nil, err
		}
		tc.Jobs = q
		opts = append(opts, invoke.WithJobs(q))
	}
	return opts, nil
}

// auditAppender is where the run's audit records go: the spool of a SQLite
// store, or the group-commit writer of a PostgreSQL one.
type auditAppender interface {
	Append(ctx context.Context, r audit.Record) error
	lifecycle.Service
}

// spoolDir is where the audit spool of a SQLite store lives, in its data
// directory.
func spoolDir(dataDir string) string { return filepath.Join(dataDir, "audit-spool") }

// auditWriter returns the run's audit writer, started once; with SQLite its
// drain first moves into the log what earlier processes left in the spool,
// in the background. Each call's record
// is durable before its result is returned: with a SQLite store it is
// written to this process's spool file (group commit, fsync with
// audit.sync: always) and drained into the database in the background;
// with PostgreSQL it is committed (group commit). While records cannot be
// made durable, the log says so once when it starts and once when it ends.
func (e *env) auditWriter(st *store.Store) (auditAppender, error) {
	if e.audit != nil {
		return e.audit, nil
	}
	l, err := e.auditLog(st)
	if err != nil {
		return nil, err
	}
	_, dir, err := e.storeDSN(os.Getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	state := func(err error) { e.auditState(err, cfg.Audit.FailsClosed()) }
	var a auditAppender
	if dir == "" {
		a = l.Writer(auditlog.WriterOptions{OnError: func(err error) { e.log.Error("writing the audit log", "err", err) }, OnState: state})
	} else {
		sp, err := l.Spool(spoolDir(dir), auditlog.SpoolOptions{
			Sync:      cfg.Audit.Sync == "always",
			OnError:   func(err error) { e.log.Error("the audit spool", "err", err) },
			OnRecover: func(n int) { e.log.Info(intents.RecoveredRecords, "records", n) },
			OnState:   state,
		})
		if err != nil {
			return nil, err
		}
		a = sp
	}
	e.audit = a
	return a, a.Start(context.Background())
}

// auditState says, in one line each, when audit records stop being
// durable (err, why) and when they are again (nil).
func (e *env) auditState(err error, failClosed bool) {
	switch {
	case err == nil && failClosed:
		e.log.Warn("audit records are durable again: calls that change things run again")
	case err == nil:
		e.log.Warn("audit records are durable again")
	case failClosed:
		e.log.Warn("calls that change things are refused until audit records can be made durable again; read-only calls go on, their records kept in memory meanwhile (audit.failClosed)", "err", err)
	default:
		e.log.Warn("calls that change things run although their audit records cannot be made durable (audit.failClosed: false); records are kept in memory until they can be written", "err", err)
	}
}

// recoverSpool moves into the log what processes that were killed left in
// the spool of the data directory dir ("" for PostgreSQL: nothing to do).
func recoverSpool(e *env, l *auditlog.Log, dir string) error {
	if dir == "" {
		return nil
	}
	n, err := l.Recover(context.Background(), spoolDir(dir))
	if n > 0 {
		e.log.Info(intents.RecoveredRecords, "records", n)
	}
	if err != nil {
		return fmt.Errorf("recovering the audit spool: %w", err)
	}
	return nil
}

// Where the audit chain's HMAC key comes from, first found: the key itself,
// a file holding it, then the config's audit.keyFile.
const (
	envAuditKey     = "TOOLBELT_AUDIT_KEY"
	envAuditKeyFile = "TOOLBELT_AUDIT_KEY_FILE"
)

// auditLog returns the audit log of st, keyed when a key is configured.
func (e *env) auditLog(st *store.Store) (*auditlog.Log, error) {
	key, err := e.auditKey(os.Getenv)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return auditlog.New(st), nil
	}
	return auditlog.New(st, auditlog.WithKey(key)), nil
}

// auditKey returns the configured HMAC key of the audit chain, nil when
// none is.
func (e *env) auditKey(getenv func(string) string) ([]byte, error) {
	var key []byte
	var from string
	if k := getenv(envAuditKey); k != "" {
		key, from = []byte(k), envAuditKey
	} else {
		file := getenv(envAuditKeyFile)
		from = envAuditKeyFile
		if file == "" {
			cfg, err := e.config()
			if err != nil {
				return nil, err
			}
			file, from = configPath(cfg, cfg.Audit.KeyFile), "audit.keyFile"
		}
		if file == "" {
			return nil, nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the audit key (%s): %w", from, err)
		}
		key, from = b, from+" "+file
	}
	key = bytes.TrimSpace(key)
	if len(key) < auditlog.MinKeyBytes {
		return nil, fmt.Errorf("the audit key from %s has %d bytes: it needs at least %d (e.g. the output of openssl rand -hex 32)", from, len(key), auditlog.MinKeyBytes)
	}
	return key, nil
}

// state opens the run's store once; it is closed when the run ends. The data
// directory must not be inside the workspace.
func (e *env) state(workspace string) (*store.Store, error) {
	if e.st == nil {
		st, err := e.openStore(context.Background(), workspace)
		if err != nil {
			return nil, err
		}
		e.st = st
	}
	return e.st, nil
}

// runner returns the pipeline for calls in tc, as the config sets it up. Who
// approves calls: --yes approves all; otherwise the person at the terminal
// is asked, if there is one; otherwise nobody, so calls that need approval
// are blocked. The returned closer releases the runner and the terminal.
func (e *env) runner(tc *tool.Context, flags runFlags, override invoke.Config, extra ...invoke.Option) (*invoke.Runner, io.Closer, error) {
	opts, err := e.pipeline(tc, override)
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts, extra...)
	var term io.Closer
	switch {
	case flags.Yes:
		opts = append(opts, invoke.WithConfirmer(invoke.AutoApprove))
	default:
		if t, ok := openTerminal(); ok {
			opts = append(opts, invoke.WithConfirmer(t))
			term = t
		}
	}
	r := invoke.New(e.registry(), tc, opts...)
	e.useRunner(r)
	return r, releaser{r, term}, nil
}

// releaser releases a runner and the terminal it asks at (nil when none).
type releaser struct {
	r    *invoke.Runner
	term io.Closer
}

func (x releaser) Close() error {
	x.r.Close()
	if x.term == nil {
		return nil
	}
	return x.term.Close()
}
