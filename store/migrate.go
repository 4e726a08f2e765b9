package store

import (
	"context"
	"fmt"
	"time"
)

// migration is one step of the schema. Its version is its place in
// migrations, from 1. Steps are only ever appended: a released step never
// changes. The SQL is shared by both databases, with the type words of
// dialect.types.
type migration struct {
	name string
	sql  string
}

var migrations = []migration{
	{name: "outputs and file changes", sql: `
CREATE TABLE outputs (
	id {{id}},
	call_id TEXT NOT NULL UNIQUE,
	created_ns BIGINT NOT NULL,
	size BIGINT NOT NULL,
	body {{blob}} NOT NULL
);
CREATE INDEX outputs_created ON outputs (created_ns);
CREATE TABLE file_changes (
	id {{id}},
	call_id TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	path TEXT NOT NULL,
	existed BOOLEAN NOT NULL,
	before {{blob}},
	mode BIGINT NOT NULL,
	exists_after BOOLEAN NOT NULL,
	after_sha256 TEXT NOT NULL
);
CREATE INDEX file_changes_call ON file_changes (call_id, id);
CREATE INDEX file_changes_created ON file_changes (created_ns);
`},
	// The audit log (package audit/auditlog): each record's canonical JSON (body),
	// its hash, and copies of the fields it is filtered by. audit_head
	// holds the last sequence number and hash; appends update it first,
	// which serializes them, and Verify checks it so that removing the
	// newest records shows.
	{name: "audit log", sql: `
CREATE TABLE audit_log (
	seq BIGINT PRIMARY KEY,
	time_ns BIGINT NOT NULL,
	call_id TEXT NOT NULL,
	tool TEXT NOT NULL,
	session_key TEXT NOT NULL,
	body TEXT NOT NULL,
	hash TEXT NOT NULL
);
CREATE INDEX audit_log_tool ON audit_log (tool, seq);
CREATE INDEX audit_log_session ON audit_log (session_key, seq);
CREATE INDEX audit_log_time ON audit_log (time_ns);
CREATE TABLE audit_head (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	seq BIGINT NOT NULL,
	hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');
`},
	// What a file held after a call changed it, so an undo refused because
	// the file changed since can show how.
	{name: "file content after a change", sql: `
ALTER TABLE file_changes ADD COLUMN after {{blob}};
`},
	// "Allow always" answers, per workspace: the fingerprint of the exact
	// action a person allowed, and who allowed it when.
	{name: "approvals that persist per workspace", sql: `
CREATE TABLE approvals (
	workspace TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	tool TEXT NOT NULL,
	approved_by TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	PRIMARY KEY (workspace, fingerprint)
);
`},
	// Short-lived values by key with an expiry (package tools/web caches
	// fetched pages and search results here).
	{name: "web cache", sql: `
CREATE TABLE cache (
	id {{id}},
	cache_key TEXT NOT NULL UNIQUE,
	expires_ns BIGINT NOT NULL,
	size BIGINT NOT NULL,
	body {{blob}} NOT NULL
);
CREATE INDEX cache_expires ON cache (expires_ns);
`},
	// Where each kept output and file change came from: the workspace
	// (absolute, links resolved) and the session of the call, so that undo
	// works in the call's own workspace and result_read hands an output only
	// to its own session (or workspace). Rows from before have ''.
	{name: "workspace and session of outputs and file changes", sql: `
ALTER TABLE outputs ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE outputs ADD COLUMN session_key TEXT NOT NULL DEFAULT '';
ALTER TABLE file_changes ADD COLUMN workspace TEXT NOT NULL DEFAULT '';
ALTER TABLE file_changes ADD COLUMN session_key TEXT NOT NULL DEFAULT '';
`},
	// How far each audit spool file (package audit/auditlog) has been moved into
	// audit_log, by file name; updated in the transaction that appends its
	// records, so a spool replayed after a crash adds each record once.
	{name: "audit spool progress", sql: `
CREATE TABLE audit_spool (
	file TEXT PRIMARY KEY,
	drained BIGINT NOT NULL
);
`},
	// Agent sessions (toolbelt run --session): one row per session, and its
	// transcript, one message per row in order, as the message's JSON.
	{name: "agent sessions", sql: `
CREATE TABLE sessions (
	id TEXT PRIMARY KEY,
	workspace TEXT NOT NULL,
	model TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	updated_ns BIGINT NOT NULL
);
CREATE INDEX sessions_updated ON sessions (updated_ns);
CREATE TABLE session_messages (
	session_id TEXT NOT NULL,
	seq BIGINT NOT NULL,
	time_ns BIGINT NOT NULL,
	role TEXT NOT NULL,
	model TEXT NOT NULL,
	body TEXT NOT NULL,
	PRIMARY KEY (session_id, seq)
);
`},
	// The agents' memory index (package tools/memory): per scope (a
	// workspace) the memory files indexed with their stamps, and their
	// chunks. {{memory_search}} adds the full-text search: an FTS5 table on
	// SQLite (rowid = chunk id, BM25), a weighted tsvector with a GIN index
	// on PostgreSQL.
	{name: "memory index", sql: `
CREATE TABLE memory_files (
	scope TEXT NOT NULL,
	path TEXT NOT NULL,
	stamp TEXT NOT NULL,
	indexed_ns BIGINT NOT NULL,
	PRIMARY KEY (scope, path)
);
CREATE TABLE memory_chunks (
	id {{id}},
	scope TEXT NOT NULL,
	path TEXT NOT NULL,
	start_line BIGINT NOT NULL,
	end_line BIGINT NOT NULL,
	title TEXT NOT NULL,
	body TEXT NOT NULL
);
CREATE INDEX memory_chunks_file ON memory_chunks (scope, path);
{{memory_search}}
`},
	// Multi-agent sessions: which agent a session belongs to, the session
	// that spawned it (sub-agents), its status (idle, running, done,
	// failed, aborted), a label, and the tokens its runs used. Rows from
	// before are idle sessions of no agent.
	{name: "session agents, parents, status and usage", sql: `
ALTER TABLE sessions ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN parent_key TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE sessions ADD COLUMN label TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN input_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN output_tokens BIGINT NOT NULL DEFAULT 0;
CREATE INDEX sessions_agent ON sessions (agent_id, updated_ns);
CREATE INDEX sessions_parent ON sessions (parent_key);
`},
	// Vectors of memory chunks for hybrid search (package tools/memory),
	// per scope and embedding model, keyed by the hash of a chunk's text
	// (store.ChunkHash), so a file indexed again keeps the vectors of its
	// unchanged chunks: float32s, little-endian. The stamps of files
	// indexed before are cleared so that their chunks are indexed again,
	// with their hashes.
	{name: "memory vectors", sql: `
ALTER TABLE memory_chunks ADD COLUMN hash TEXT NOT NULL DEFAULT '';
CREATE INDEX memory_chunks_hash ON memory_chunks (scope, hash);
CREATE TABLE memory_vectors (
	scope TEXT NOT NULL,
	model TEXT NOT NULL,
	hash TEXT NOT NULL,
	dims BIGINT NOT NULL,
	vec {{blob}} NOT NULL,
	created_ns BIGINT NOT NULL,
	PRIMARY KEY (scope, model, hash)
);
UPDATE memory_files SET stamp = '';
`},
	// The cron tool's schedules, per workspace, and their runs. A schedule's
	// timing, payload and owner are JSON (spec, payload, owner);
	// next_run_ns (0: never again) is what a scheduler claims a run by,
	// with an UPDATE that expects the value it read.
	{name: "cron schedules and runs", sql: `
CREATE TABLE schedules (
	id TEXT PRIMARY KEY,
	workspace TEXT NOT NULL,
	name TEXT NOT NULL,
	spec TEXT NOT NULL,
	payload TEXT NOT NULL,
	owner TEXT NOT NULL,
	enabled BOOLEAN NOT NULL,
	next_run_ns BIGINT NOT NULL,
	last_run_ns BIGINT NOT NULL,
	created_ns BIGINT NOT NULL,
	updated_ns BIGINT NOT NULL
);
CREATE INDEX schedules_due ON schedules (workspace, enabled, next_run_ns);
CREATE TABLE schedule_runs (
	id {{id}},
	schedule_id TEXT NOT NULL,
	trigger_kind TEXT NOT NULL,
	scheduled_ns BIGINT NOT NULL,
	started_ns BIGINT NOT NULL,
	finished_ns BIGINT NOT NULL,
	status TEXT NOT NULL,
	summary TEXT NOT NULL,
	error TEXT NOT NULL
);
CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, id);
`},
	// Durable async jobs (package jobs; River runs their steps, in its own
	// river_* tables): one row per job with its status, progress and
	// result, and the ids of webhook deliveries already applied, so a
	// delivery that arrives twice completes its job once.
	{name: "async jobs and webhook deliveries", sql: `
CREATE TABLE async_jobs (
	task_id TEXT PRIMARY KEY,
	tool TEXT NOT NULL,
	workspace TEXT NOT NULL,
	session_key TEXT NOT NULL,
	call_id TEXT NOT NULL,
	async_type TEXT NOT NULL,
	webhook_path TEXT NOT NULL,
	arguments TEXT NOT NULL,
	status TEXT NOT NULL,
	progress BIGINT NOT NULL,
	message TEXT NOT NULL,
	external_id TEXT NOT NULL,
	result TEXT,
	error TEXT NOT NULL,
	round BIGINT NOT NULL,
	estimated_ms BIGINT NOT NULL,
	created_ns BIGINT NOT NULL,
	updated_ns BIGINT NOT NULL,
	completed_ns BIGINT
);
CREATE INDEX async_jobs_session ON async_jobs (session_key, status);
CREATE INDEX async_jobs_workspace ON async_jobs (workspace, created_ns);
CREATE INDEX async_jobs_external ON async_jobs (tool, external_id);
CREATE TABLE async_webhooks (
	webhook_id TEXT PRIMARY KEY,
	task_id TEXT NOT NULL,
	received_ns BIGINT NOT NULL
);
`},
	// Which process runs a cron run, and until when it vouches for it: a
	// run whose lease ran out was left by a process that stopped (package
	// automation renews the leases of its runs and expires the others').
	{name: "cron run leases", sql: `
ALTER TABLE schedule_runs ADD COLUMN node TEXT NOT NULL DEFAULT '';
ALTER TABLE schedule_runs ADD COLUMN lease_ns BIGINT NOT NULL DEFAULT 0;
CREATE INDEX schedule_runs_status ON schedule_runs (status, lease_ns);
`},
	// Who a session runs as (tool.Identity as JSON): its agent, channel,
	// principal, owner flag, sandbox and sub-agent limits, recorded when it
	// is created; every later run of it runs as that. '' for sessions kept
	// before: they take an identity the first time they run again.
	{name: "session identities", sql: `
ALTER TABLE sessions ADD COLUMN identity TEXT NOT NULL DEFAULT '';
`},
	// Where a kept output came from: result_read wraps every page of text
	// from outside as untrusted content, naming its source. Outputs kept
	// before this step are taken as from outside: their origin is unknown.
	{name: "origin of outputs", sql: `
ALTER TABLE outputs ADD COLUMN external BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE outputs ADD COLUMN source TEXT NOT NULL DEFAULT '';
`},
	// Each audit record's own id (package audit/auditlog), made when the record is
	// prepared and carried by its spool line, unique: a spool moved into
	// the log again after a crash finds its records there by id and adds
	// none twice. Records from before have none (NULL).
	{name: "audit record ids", sql: `
ALTER TABLE audit_log ADD COLUMN record_id TEXT;
CREATE UNIQUE INDEX audit_log_record ON audit_log (record_id);
`},
	// A skipped run may stand for several occurrences of its schedule: every
	// one from scheduled_ns up to, not including, until_ns (0: scheduled_ns
	// alone). A claim records every occurrence it moves the schedule past.
	{name: "skipped runs of several occurrences", sql: `
ALTER TABLE schedule_runs ADD COLUMN until_ns BIGINT NOT NULL DEFAULT 0;
`},
	// What a call is about to change, kept before the first file changes
	// (Journal.Intend): the call, who made it, where, and which process is
	// making the change (site: the lock directory's id; owner: the
	// process's lock file there). The files' states before and after are
	// the call's file_changes rows, which name the intent (intent_id; NULL
	// for rows recorded once made) and are hidden from undo while it is
	// here: closing it deletes it, so its ids must never come again.
	// file_intents holds only the changes under way and those left
	// unfinished: it needs no index.
	{name: "intents of file changes", sql: `
CREATE TABLE file_intents (
	id {{serial}},
	call_id TEXT NOT NULL,
	tool TEXT NOT NULL,
	arguments TEXT NOT NULL,
	caller TEXT NOT NULL,
	workspace TEXT NOT NULL,
	site TEXT NOT NULL,
	owner TEXT NOT NULL,
	created_ns BIGINT NOT NULL
);
ALTER TABLE file_changes ADD COLUMN intent_id BIGINT;
`},
	// Calls waiting for a person's approval in the console (Pending), with
	// what the person must see and, once decided, the decision; and the
	// console's heartbeat, by its URL, which tells a waiting call whether
	// anyone could decide it.
	{name: "approvals waiting for the console", sql: `
CREATE TABLE pending_approvals (
	id TEXT PRIMARY KEY,
	call_id TEXT NOT NULL,
	workspace TEXT NOT NULL,
	tool TEXT NOT NULL,
	args TEXT NOT NULL,
	caller TEXT NOT NULL,
	reason TEXT NOT NULL,
	message TEXT NOT NULL,
	always_covers TEXT NOT NULL,
	no_always TEXT NOT NULL,
	effects TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL,
	state TEXT NOT NULL,
	grant_scope TEXT NOT NULL,
	decided_by TEXT NOT NULL,
	decided_ns BIGINT NOT NULL,
	deny_reason TEXT NOT NULL
);
CREATE INDEX pending_approvals_state ON pending_approvals (state, created_ns);
CREATE INDEX pending_approvals_workspace ON pending_approvals (workspace, created_ns);
CREATE TABLE console_beats (
	url TEXT PRIMARY KEY,
	beat_ns BIGINT NOT NULL
);
`},
	// Allow rules a person saved for a workspace from an approval
	// ("exec(npm run test:*)"), applied as allow rules of that workspace
	// until revoked.
	{name: "saved rules per workspace", sql: `
CREATE TABLE saved_rules (
	workspace TEXT NOT NULL,
	rule TEXT NOT NULL,
	tool TEXT NOT NULL,
	saved_by TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	PRIMARY KEY (workspace, rule)
);
`},
	// The undo steps of calls of tools that take back more than files
	// (tool.Tool.Undo): the tool, and the data the call's result kept for
	// it, by call and workspace (Journal.RecordStep).
	{name: "undo steps", sql: `
CREATE TABLE undo_steps (
	id {{id}},
	call_id TEXT NOT NULL,
	workspace TEXT NOT NULL,
	session_key TEXT NOT NULL,
	tool TEXT NOT NULL,
	data TEXT NOT NULL,
	created_ns BIGINT NOT NULL
);
CREATE INDEX undo_steps_call ON undo_steps (call_id);
CREATE INDEX undo_steps_created ON undo_steps (created_ns);
`},
	// The OAuth grants of imported MCP servers, by server: sealed by the
	// caller (mcp/client.Vault) with a key kept outside the database, so a
	// row is never a token in the clear.
	{name: "oauth tokens", sql: `
CREATE TABLE oauth_tokens (
	server TEXT PRIMARY KEY,
	sealed {{blob}} NOT NULL,
	updated_ns BIGINT NOT NULL
);
`},
	// The last full scan of each scope's memory files (package
	// tools/memory), as that package records it (the stamps of the
	// directories it listed): a fresh process trusts it while they are
	// unchanged instead of stat-ing every file again.
	{name: "memory scans", sql: `
CREATE TABLE memory_scans (
	scope TEXT PRIMARY KEY,
	record {{blob}} NOT NULL,
	updated_ns BIGINT NOT NULL
);
`},
	// Paired nodes (package nodes): each node's token as its SHA-256 only,
	// what it can do, and which gateway holds its connection since when;
	// the pairing requests waiting for an owner; and the calls to nodes,
	// a row each, which the gateway holding the node takes and answers —
	// so any process on the store can invoke any node, and an idempotency
	// key makes a retried call the same row.
	{name: "nodes", sql: `
CREATE TABLE nodes (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	token_sha256 TEXT NOT NULL,
	capabilities TEXT NOT NULL,
	info TEXT NOT NULL,
	paired_ns BIGINT NOT NULL,
	approved_by TEXT NOT NULL,
	gateway TEXT NOT NULL,
	seen_ns BIGINT NOT NULL
);
CREATE TABLE node_pairings (
	code TEXT PRIMARY KEY,
	node_id TEXT NOT NULL,
	name TEXT NOT NULL,
	info TEXT NOT NULL,
	gateway TEXT NOT NULL,
	created_ns BIGINT NOT NULL,
	expires_ns BIGINT NOT NULL,
	state TEXT NOT NULL,
	decided_by TEXT NOT NULL
);
CREATE TABLE node_calls (
	id TEXT PRIMARY KEY,
	node_id TEXT NOT NULL,
	idem_key TEXT NOT NULL,
	capability TEXT NOT NULL,
	params TEXT NOT NULL,
	caller TEXT NOT NULL,
	state TEXT NOT NULL,
	gateway TEXT NOT NULL,
	progress TEXT NOT NULL,
	result TEXT NOT NULL,
	cancel BOOLEAN NOT NULL,
	created_ns BIGINT NOT NULL,
	updated_ns BIGINT NOT NULL
);
CREATE UNIQUE INDEX node_calls_key ON node_calls (node_id, idem_key);
CREATE INDEX node_calls_state ON node_calls (state, node_id);
`},
	// What channels (package channels) remember beyond a process, by
	// channel and key until it expires: the incoming deliveries they took
	// (a row claimed by the first gateway to insert it, so two gateways on
	// one store never both take one), and an email channel's threads.
	{name: "channel state", sql: `
CREATE TABLE channel_state (
	channel TEXT NOT NULL,
	state_key TEXT NOT NULL,
	value {{blob}} NOT NULL,
	expires_ns BIGINT NOT NULL,
	PRIMARY KEY (channel, state_key)
);
CREATE INDEX channel_state_expires ON channel_state (expires_ns);
`},
	// Where each pairing request came from (the address of the connection
	// that asked), so one source cannot fill the requests waiting; and at
	// most one request waiting per node id, so a stranger's hello cannot
	// replace a node's request. Requests an earlier version let pile up
	// for one node id are left at the newest, so the index can be made.
	{name: "node pairing sources", sql: `
ALTER TABLE node_pairings ADD COLUMN source TEXT NOT NULL DEFAULT '';
DELETE FROM node_pairings WHERE state = 'pending' AND EXISTS (
	SELECT 1 FROM node_pairings newer WHERE newer.node_id = node_pairings.node_id AND newer.state = 'pending'
	AND (newer.created_ns > node_pairings.created_ns OR (newer.created_ns = node_pairings.created_ns AND newer.code > node_pairings.code)));
CREATE UNIQUE INDEX node_pairings_waiting ON node_pairings (node_id) WHERE state = 'pending';
`},
	// How long after its last heartbeat a node held by a gateway counts as
	// offline: three heartbeats of the gateway that recorded it (package
	// nodes), so that gateways configured with different heartbeats on one
	// store each judge a node by the heartbeat of the gateway holding it.
	// A row no gateway of this version has recorded a heartbeat in (0) is
	// judged as gateways of earlier versions judge it.
	{name: "node offline periods", sql: `
ALTER TABLE nodes ADD COLUMN offline_after_ns BIGINT NOT NULL DEFAULT 0;
`},
	// How many nodes the owner has removed (package nodes), counted in the
	// transaction that removes each: a gateway reads this one row every
	// poll, and the paired nodes only when it changed.
	{name: "node removals", sql: `
CREATE TABLE node_removals (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	removed BIGINT NOT NULL
);
INSERT INTO node_removals (id, removed) VALUES (1, 0);
`},
}

// migrate applies the migrations the database lacks, each in its own
// transaction, and refuses a database newer than ms.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	// Most opens find the database up to date: a plain read says so without
	// the write transaction, the migration lock and the CREATE TABLE the
	// steps below take (versions only grow, so "up to date" stays true).
	// Anything else (no table yet, behind, newer) goes the locked way.
	var current int
	if s.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current) == nil && current == len(ms) {
		return nil
	}
	for {
		applied, err := s.migrateStep(ctx, ms)
		if err != nil || !applied {
			return err
		}
	}
}

// migrateStep applies the next migration the database lacks, if any. It
// reads the version and applies the step in one transaction that holds the
// migration lock, so processes that open the database at once apply each
// step once.
func (s *Store) migrateStep(ctx context.Context, ms []migration) (applied bool, err error) {
	err = s.Write(ctx, func(tx *Tx) error {
		if s.d.lockMigrations != "" {
			if _, err := tx.Exec(ctx, s.d.lockMigrations); err != nil {
				return fmt.Errorf("waiting for other processes' migrations: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version BIGINT PRIMARY KEY,
	name TEXT NOT NULL,
	applied_at BIGINT NOT NULL
)`); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
			return fmt.Errorf("reading the schema version: %w", err)
		}
		if current > len(ms) {
			return fmt.Errorf("the schema is at version %d, newer than this program knows (%d): use a newer toolbelt, or another database", current, len(ms))
		}
		if current == len(ms) {
			return nil
		}
		m := ms[current]
		if _, err := tx.Exec(ctx, s.d.types.Replace(m.sql)); err != nil {
			return fmt.Errorf("migration %d (%s): %w", current+1, m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			current+1, m.name, time.Now().Unix()); err != nil {
			return fmt.Errorf("recording migration %d: %w", current+1, err)
		}
		applied = true
		return nil
	})
	return applied, err
}
