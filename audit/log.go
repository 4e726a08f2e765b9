package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
// be told from this one.
const encodingVersion = 1

// body is what is stored and hashed for a record: the record in canonical
// JSON (fixed field order, arguments with sorted keys, times in UTC) with
// the encoding's version, the id of the HMAC key when the chain is keyed,
// and the hash of the record before ("" for the first). Its Hash is empty.
type body struct {
	V    int    `json:"v"`
	Key  string `json:"key,omitempty"`
	Prev string `json:"prev"`
	Record
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
func (l *Log) Append(ctx context.Context, r Record) error {
	return l.appendAll(ctx, []Record{r})
}

// appendAll appends records in order, in one transaction.
func (l *Log) appendAll(ctx context.Context, records []Record) error {
	for i := range records {
		records[i] = prepare(records[i])
	}
	err := l.st.Write(ctx, func(tx *store.Tx) error { return l.appendTx(ctx, tx, records) })
	if err != nil {
		return appendError(records, err)
	}
	return nil
}

func appendError(records []Record, err error) error {
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
func (l *Log) appendTx(ctx context.Context, tx *store.Tx, records []Record) error {
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
		q.WriteString("INSERT INTO audit_log (seq, time_ns, call_id, tool, session_key, body, hash) VALUES ")
		args := make([]any, 0, 7*len(chunk))
		for i := range chunk {
			r := &chunk[i]
			r.Seq = first + int64(start+i)
			b, err := json.Marshal(body{V: encodingVersion, Key: l.kid, Prev: prev, Record: *r})
			if err != nil {
				return err
			}
			r.Hash = l.hash(b)
			prev = r.Hash
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?)")
			args = append(args, r.Seq, r.Time.UnixNano(), r.CallID, r.Tool, r.SessionKey, string(b), r.Hash)
		}
		if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, "UPDATE audit_head SET hash = ? WHERE id = 1", prev)
	return err
}

// prepare readies a record for the log: UTC times, a time when there is
// none, redacted arguments, no sequence or hash yet.
func prepare(r Record) Record {
	r.Seq, r.Hash = 0, ""
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	if r.Confirmation != nil {
		c := *r.Confirmation
		c.At = c.At.UTC()
		r.Confirmation = &c
	}
	r.Arguments = Redact(r.Arguments)
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
type Writer struct {
	log     *Log
	queue   chan pending
	done    chan struct{}
	onError func(error)
	mu      sync.RWMutex // Append holds it to send; Close to close the queue
	closed  bool
}

// pending is a record waiting for its commit, and where to say how it went.
type pending struct {
	r    Record
	done chan error
}

// writerQueue and writerBatch bound the queue and one transaction.
const (
	writerQueue = 4096
	writerBatch = 256
)

// Writer starts a group-commit writer for the log. onError, when not nil,
// also receives the errors of commits (Append returns them too).
func (l *Log) Writer(onError func(error)) *Writer {
	w := &Writer{log: l, queue: make(chan pending, writerQueue), done: make(chan struct{}), onError: onError}
	go w.run()
	return w
}

// Append writes r (see Log.Append for what is recorded) and returns once it
// is committed, or with the commit's error. Cancelling ctx stops the wait,
// not the write.
func (w *Writer) Append(ctx context.Context, r Record) error {
	p := pending{r: r, done: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return fmt.Errorf("appending the audit record of call %s: the writer is closed", r.CallID)
	}
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

func (w *Writer) run() {
	defer close(w.done)
	for p := range w.queue {
		batch := []pending{p}
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
		records := make([]Record, len(batch))
		for i, p := range batch {
			records[i] = p.r
		}
		err := w.log.appendAll(context.Background(), records)
		if err != nil && w.onError != nil {
			w.onError(err)
		}
		for _, p := range batch {
			p.done <- err
		}
	}
}

// Close waits for the records already handed to Append and stops the
// writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	<-w.done
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
	// Limit keeps only the newest Limit records (0: all).
	Limit int
}

// List returns the records f selects, oldest first. It reads records as
// stored, without checking the chain (Verify does).
func (l *Log) List(ctx context.Context, f Filter) ([]Record, error) {
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
	q := "SELECT seq, body, hash FROM audit_log"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY seq DESC"
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	var out []Record
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
	slices.Reverse(out)
	return out, nil
}
