// Package auditlog keeps the audit log: an append-only record of every call
// (an audit.Record) in the store. Records form a hash chain — each carries
// the hash of the one before — so Verify finds any record edited, removed,
// inserted or reordered behind the log's back. Arguments are stored
// redacted (audit.Redact).
//
// Append (and a Writer's) returns once the record is committed to the
// database; a Spool's Append once it is written to the process's spool file,
// moved into the database in the background and by Recover after a crash.
// Either way a caller that waits for it (the pipeline does, before it returns
// a result) knows the record survives the process being killed. With a key
// (WithKey) the chain is an HMAC chain that nobody without the key can
// recompute.
package auditlog

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolbelt/toolbelt/audit"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// Log is the audit log in a store. It is safe for concurrent use, and
// several processes may append to one PostgreSQL or SQLite database.
type Log struct {
	st  *store.Store
	key []byte // the HMAC key; nil for a plain SHA-256 chain
	kid string // the key's id, written into keyed records

	// For tests: hook is called at the named points of a spool's life
	// and of recovery (see at), write writes spool files (f.Write when
	// nil).
	hook  func(point string)
	write func(f *os.File, b []byte) (int, error)
}

// at calls the test hook at a named point.
func (l *Log) at(point string) {
	if l.hook != nil {
		l.hook(point)
	}
}

// writeFile writes b to a spool file.
func (l *Log) writeFile(f *os.File, b []byte) (int, error) {
	if l.write != nil {
		return l.write(f, b)
	}
	return f.Write(b)
}

// Option configures a Log.
type Option func(*Log)

// WithKey makes the log an HMAC chain: each record's hash is its
// HMAC-SHA256 under key, so that someone able to write the database but
// without the key cannot rewrite records and recompute a consistent chain.
// Keep the key outside the database. Verify then requires every record to
// be keyed with it.
func WithKey(key []byte) Option {
	return func(l *Log) {
		l.key = bytes.Clone(key)
		l.kid = keyID(key)
	}
}

// MinKeyBytes is the shortest HMAC key accepted.
const MinKeyBytes = 16

// New returns the audit log of st.
func New(st *store.Store, opts ...Option) *Log {
	l := &Log{st: st}
	for _, o := range opts {
		o(l)
	}
	return l
}

// encodingVersion is written into every record so that a later encoding can
// be told from this one. Version 2 added the permission mode ("mode",
// left out when empty); a record's hash covers the bytes stored, so
// version 1 records verify unchanged beside later ones.
const encodingVersion = 2

// body is what is stored and hashed for a record: the record in canonical
// JSON (fixed field order, arguments with sorted keys, times in UTC) with
// the encoding's version, the id of the HMAC key when the chain is keyed,
// and the hash of the record before ("" for the first). Its Hash is empty.
type body struct {
	V    int    `json:"v"`
	Key  string `json:"key,omitempty"`
	Prev string `json:"prev"`
	audit.Record
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// macOf is the hash of a keyed record: HMAC-SHA256 under key.
func macOf(key, b []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// keyID names a key without giving it away: the first 16 hex digits of an
// HMAC of a fixed text under it.
func keyID(key []byte) string {
	return macOf(key, []byte("toolbelt audit key id"))[:16]
}

// hash is the hash of a record's body in this log's chain.
func (l *Log) hash(b []byte) string {
	if l.key != nil {
		return macOf(l.key, b)
	}
	return hashOf(b)
}

// Append adds r to the end of the log: it redacts the arguments, fills Time
// when it is zero, and chains the record to the one before. Appends are
// serialized by the update of the chain's head, so concurrent appends, from
// any number of processes, never fork the chain.
func (l *Log) Append(ctx context.Context, r audit.Record) error {
	return l.appendAll(ctx, []audit.Record{r})
}

// appendAll appends records in order, in one transaction.
func (l *Log) appendAll(ctx context.Context, records []audit.Record) error {
	for i := range records {
		records[i] = prepare(records[i])
	}
	err := l.st.Write(ctx, func(tx *store.Tx) error { return l.appendTx(ctx, tx, records) })
	if err != nil {
		return appendError(records, err)
	}
	return nil
}

func appendError(records []audit.Record, err error) error {
	ids := make([]string, len(records))
	for i, r := range records {
		ids[i] = r.CallID
	}
	return fmt.Errorf("appending the audit records of calls %s: %w", strings.Join(ids, ", "), err)
}

// appendTx appends prepared records in order in tx, chaining each to the
// one before and setting their Seq and Hash. The head is moved first, by
// the number of records, which serializes appends across processes; the
// records go in with multi-row inserts.
func (l *Log) appendTx(ctx context.Context, tx *store.Tx, records []audit.Record) error {
	if len(records) == 0 {
		return nil
	}
	var last int64
	var prev string
	if err := tx.QueryRow(ctx, "UPDATE audit_head SET seq = seq + ? WHERE id = 1 RETURNING seq, hash", len(records)).Scan(&last, &prev); err != nil {
		return err
	}
	first := last - int64(len(records)) + 1
	const rowsPerInsert = 64
	for start := 0; start < len(records); start += rowsPerInsert {
		chunk := records[start:min(start+rowsPerInsert, len(records))]
		var q strings.Builder
		q.WriteString("INSERT INTO audit_log (seq, time_ns, call_id, tool, session_key, body, hash, record_id) VALUES ")
		args := make([]any, 0, 8*len(chunk))
		for i := range chunk {
			r := &chunk[i]
			r.Seq, r.Hash = first+int64(start+i), ""
			b, err := json.Marshal(body{V: encodingVersion, Key: l.kid, Prev: prev, Record: *r})
			if err != nil {
				return err
			}
			r.Hash = l.hash(b)
			prev = r.Hash
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, r.Seq, r.Time.UnixNano(), r.CallID, r.Tool, r.SessionKey, string(b), r.Hash, nullIfEmpty(r.ID))
		}
		if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, "UPDATE audit_head SET hash = ? WHERE id = 1", prev)
	return err
}

// appendNew appends, in order, those of records whose ids the log does
// not hold yet (see unlogged) and returns them.
func (l *Log) appendNew(ctx context.Context, tx *store.Tx, records []audit.Record) ([]audit.Record, error) {
	fresh, err := unlogged(ctx, tx, records)
	if err != nil {
		return nil, err
	}
	return fresh, l.appendTx(ctx, tx, fresh)
}

// unlogged returns, in order, the records whose ids the log does not hold
// yet: a record moved in again (a spool replayed after a crash, a commit
// retried whose outcome was unknown) is added once. The slice is new, so
// appending it leaves records as they were.
func unlogged(ctx context.Context, tx *store.Tx, records []audit.Record) ([]audit.Record, error) {
	logged := map[string]bool{}
	const idsPerQuery = 256
	for start := 0; start < len(records); start += idsPerQuery {
		chunk := records[start:min(start+idsPerQuery, len(records))]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r.ID
		}
		if err := loggedIDs(ctx, tx, args, logged); err != nil {
			return nil, err
		}
	}
	fresh := make([]audit.Record, 0, len(records))
	for _, r := range records {
		if !logged[r.ID] {
			fresh = append(fresh, r)
			logged[r.ID] = true // twice in records: once
		}
	}
	return fresh, nil
}

// loggedIDs adds to logged those of ids the log holds.
func loggedIDs(ctx context.Context, tx *store.Tx, ids []any, logged map[string]bool) error {
	rows, err := tx.Query(ctx, "SELECT record_id FROM audit_log WHERE record_id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		logged[id] = true
	}
	return rows.Err()
}

// nullIfEmpty is s, or NULL for "" (a record from before ids: the
// column's unique index holds any number of NULLs).
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// newRecordID returns a record id: 128 random bits as 26 characters of
// base32.
func newRecordID() string { return rand.Text() }

// prepare readies a record for the log: its id (kept when it has one), UTC
// times, a time when there is none, redacted arguments, no sequence or hash
// yet.
func prepare(r audit.Record) audit.Record {
	r.Seq, r.Hash = 0, ""
	if r.ID == "" {
		r.ID = newRecordID()
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if r.Confirmation != nil {
		c := *r.Confirmation
		c.At = c.At.UTC()
		r.Confirmation = &c
	}
	r.Arguments = audit.Redact(r.Arguments)
	return r
}

// Writer appends records with group commit: Append returns once its record
// is committed, and records that arrive while a commit is under way are
// committed together in the next one, so concurrent callers share the cost
// of a commit. Records keep the order Append received them in.
//
// On SQLite a commit writes the records to the database's write-ahead log
// before Append returns, so they survive the process being killed; whether
// they also survive a power loss is the store's sync setting
// (store.SyncCommits). On PostgreSQL a commit is durable as the server is
// configured.
//
// A failed commit is a state the writer comes out of by itself: its
// records are kept in memory, in order, and committed with those appended
// after them once a retry (with backoff) succeeds; meanwhile Append keeps
// each record without waiting and returns an error matching audit.ErrNotDurable,
// and so does Durable. A retried record is committed once, even when the
// commit before it failed after all but taking it.
//
// It is a [github.com/toolbelt/toolbelt/lifecycle.Service]: records are
// committed once it is started; Stop commits those already handed to Append.
type Writer struct {
	log     *Log
	queue   chan pending
	done    chan struct{}
	ctx     context.Context    // the commits' context: cancelled when Stop's ends
	cancel  context.CancelFunc // cancels ctx
	started bool               // guarded by mu
	onError func(error)
	onState func(error)
	mu      sync.RWMutex // Append holds it to send; Start and Stop to change the state
	closed  bool

	fmu   sync.Mutex
	fault error          // why the last commit failed; nil after one succeeded
	kept  []audit.Record // records of failed commits, committed before the next ones
}

// WriterOptions configure a Writer.
type WriterOptions struct {
	// OnError receives the errors of commits: the first of each run of
	// failures (the writer retries meanwhile), and of the last try at
	// Stop, when records are lost.
	OnError func(error)
	// OnState, when set, is told when records stop being durable (with
	// why, as Durable returns it) and when they are again (nil): once
	// each, not per record.
	OnState func(error)
}

// pending is a record waiting for its commit, and where to say how it went
// (nil once it was told).
type pending struct {
	r    audit.Record
	done chan error
}

// writerQueue and writerBatch bound the queue and one transaction.
const (
	writerQueue = 4096
	writerBatch = 256
)

// Writer returns a group-commit writer for the log; Start starts it.
func (l *Log) Writer(o WriterOptions) *Writer {
	return &Writer{log: l, queue: make(chan pending, writerQueue), done: make(chan struct{}), onError: o.OnError, onState: o.OnState}
}

// Start starts committing the records handed to Append; ctx bounds
// starting only ([github.com/toolbelt/toolbelt/lifecycle.Service]).
func (w *Writer) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.closed {
		return errors.New("audit writer: Start called twice, or after Stop")
	}
	w.started = true
	w.ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go w.run()
	return nil
}

// Append writes r (see Log.Append for what is recorded) and returns once it
// is committed, or with the commit's error. While commits fail, r is kept
// in memory for the retry, and the error matches audit.ErrNotDurable. Cancelling
// ctx stops the wait, not the write.
func (w *Writer) Append(ctx context.Context, r audit.Record) error {
	p := pending{r: prepare(r), done: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return fmt.Errorf("appending the audit record of call %s: the writer is closed", r.CallID)
	}
	w.fmu.Lock()
	if w.fault != nil {
		w.kept = append(w.kept, p.r)
		err := w.notDurable(p.r)
		w.fmu.Unlock()
		w.mu.RUnlock()
		return err
	}
	w.fmu.Unlock()
	select {
	case w.queue <- p:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Durable returns nil when a record appended now is committed before
// Append returns, and otherwise why not (matching audit.ErrNotDurable).
func (w *Writer) Durable() error {
	w.fmu.Lock()
	defer w.fmu.Unlock()
	return w.durable()
}

func (w *Writer) durable() error {
	if w.fault == nil {
		return nil
	}
	return fmt.Errorf("%w: committing to the database failed: %v", audit.ErrNotDurable, w.fault)
}

// notDurable is the error of an Append whose record is kept in memory; the
// caller holds w.fmu.
func (w *Writer) notDurable(r audit.Record) error {
	return fmt.Errorf("the audit record of call %s is kept in memory until the database can be written: %w", r.CallID, w.durable())
}

func (w *Writer) run() {
	defer close(w.done)
	wait := retryFirst
	retry := time.NewTimer(wait)
	retry.Stop()
	for {
		var batch []pending
		select {
		case p, ok := <-w.queue:
			if !ok {
				w.closing()
				return
			}
			batch = append(batch, p)
		more:
			for len(batch) < writerBatch {
				select {
				case next, ok := <-w.queue:
					if !ok {
						break more
					}
					batch = append(batch, next)
				default:
					break more
				}
			}
		case <-retry.C:
		}
		if err := w.commit(batch); err != nil {
			retry.Reset(wait)
			wait = min(2*wait, retryMax)
		} else {
			wait = retryFirst
		}
	}
}

// commit commits the kept records and then batch's, and answers batch's
// callers. On failure every record is kept, in order, for the retry.
func (w *Writer) commit(batch []pending) error {
	w.fmu.Lock()
	records, retried := w.kept, len(w.kept) > 0
	w.kept = nil
	w.fmu.Unlock()
	for _, p := range batch {
		records = append(records, p.r)
	}
	if len(records) == 0 {
		return nil
	}
	ctx := w.ctx
	err := w.log.st.Write(ctx, func(tx *store.Tx) error {
		if retried {
			_, err := w.log.appendNew(ctx, tx, records)
			return err
		}
		return w.log.appendTx(ctx, tx, records)
	})
	w.fmu.Lock()
	defer w.fmu.Unlock()
	if err != nil {
		err = appendError(records, err)
		first := w.fault == nil
		w.fault = err
		w.kept = append(records, w.kept...)
		if first {
			if w.onError != nil {
				w.onError(fmt.Errorf("%w (retrying; the records are kept in memory meanwhile)", err))
			}
			if w.onState != nil {
				w.onState(w.durable())
			}
		}
		for _, p := range batch {
			p.done <- w.notDurable(p.r)
		}
		return err
	}
	if w.fault != nil {
		w.fault = nil
		if w.onState != nil {
			w.onState(nil)
		}
	}
	for _, p := range batch {
		p.done <- nil
	}
	return nil
}

// closing gives the records kept after failed commits a last try as the
// writer closes; those that still fail are lost, and OnError says so.
func (w *Writer) closing() {
	w.fmu.Lock()
	n := len(w.kept)
	w.fmu.Unlock()
	if n == 0 {
		return
	}
	if err := w.commit(nil); err != nil && w.onError != nil {
		w.onError(fmt.Errorf("%d audit records could not be committed, and are lost: %w", n, err))
	}
}

// Stop commits the records already handed to Append and stops the
// writer. Records kept after failed commits get a last try. When ctx ends
// first, the commit under way is cancelled: the records not committed are
// lost, and Stop returns the error, as it does when the last try fails
// ([github.com/toolbelt/toolbelt/lifecycle.Service]).
func (w *Writer) Stop(ctx context.Context) error {
	w.mu.Lock()
	started := w.started
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-w.done:
	case <-ctx.Done():
		w.cancel()
		<-w.done
	}
	w.cancel()
	w.fmu.Lock()
	defer w.fmu.Unlock()
	if n := len(w.kept); n > 0 {
		return fmt.Errorf("%d audit records could not be committed, and are lost: %w", n, w.fault)
	}
	return nil
}

// Filter selects records; its zero value selects all.
type Filter struct {
	// Tool keeps the records of this tool.
	Tool string
	// Since keeps the records made at or after it.
	Since time.Time
	// Session keeps the records of this session key.
	Session string
	// CallID keeps the records of this call.
	CallID string
	// After keeps the records after the one of this sequence number: those
	// appended since it was read.
	After int64
	// Before keeps the records before the one of this sequence number:
	// older than it.
	Before int64
	// Limit keeps only the newest Limit records (0: all); with Oldest,
	// the oldest Limit.
	Limit  int
	Oldest bool
}

// List returns the records f selects, oldest first. It reads records as
// stored, without checking the chain (Verify does).
func (l *Log) List(ctx context.Context, f Filter) ([]audit.Record, error) {
	var (
		where []string
		args  []any
	)
	if f.Tool != "" {
		where, args = append(where, "tool = ?"), append(args, f.Tool)
	}
	if f.Session != "" {
		where, args = append(where, "session_key = ?"), append(args, f.Session)
	}
	if f.CallID != "" {
		where, args = append(where, "call_id = ?"), append(args, f.CallID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time_ns >= ?"), append(args, f.Since.UnixNano())
	}
	if f.After > 0 {
		where, args = append(where, "seq > ?"), append(args, f.After)
	}
	if f.Before > 0 {
		where, args = append(where, "seq < ?"), append(args, f.Before)
	}
	q := "SELECT seq, body, hash FROM audit_log"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Oldest {
		q += " ORDER BY seq"
	} else {
		q += " ORDER BY seq DESC"
	}
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	var out []audit.Record
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq int64
				raw []byte
				b   body
			)
			if err := rows.Scan(&seq, &raw, &b.Hash); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return fmt.Errorf("record %d cannot be read: %w", seq, err)
			}
			out = append(out, b.Record)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing audit records: %w", err)
	}
	if !f.Oldest {
		slices.Reverse(out)
	}
	return out, nil
}
