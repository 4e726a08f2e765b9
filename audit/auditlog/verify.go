package auditlog

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolbelt/toolbelt/store"
)

// Summary describes an intact log.
type Summary struct {
	// Records is the number of records.
	Records int64
	// Head is the hash of the newest record ("" when there is none). Kept
	// elsewhere, it lets a later Verify prove nothing before it changed,
	// even by someone able to rewrite the whole database.
	Head string
	// Duplicates are records that repeat an earlier one, oldest first: a
	// record added twice, with its chain intact.
	Duplicates []Duplicate
}

// Duplicate is a record that repeats an earlier one: the same record id,
// or the same call id and the same content (all but its id, place and
// hash) — one call recorded twice, as a spool replayed twice did.
type Duplicate struct {
	// Seq is the repeating record's place, Of the earlier record's.
	Seq int64 `json:"seq"`
	Of  int64 `json:"of"`
	// CallID is the call they record.
	CallID string `json:"callId"`
	// Same says what they share: "record id" or "call and content".
	Same string `json:"same"`
}

func (d Duplicate) String() string {
	return fmt.Sprintf("record %d repeats record %d (call %s, the same %s)", d.Seq, d.Of, d.CallID, d.Same)
}

// ChainError says where the chain breaks: the first record, in order, that
// was edited, removed, inserted or moved.
type ChainError struct {
	// Seq is the sequence number of the record.
	Seq int64
	// Problem says what is wrong with it.
	Problem string
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("audit record %d: %s", e.Seq, e.Problem)
}

// chained is the part of a body that Verify checks against the columns and
// the chain; decoding only it is faster than decoding the whole record.
type chained struct {
	Key        string    `json:"key"`
	Prev       string    `json:"prev"`
	ID         string    `json:"id"`
	Seq        int64     `json:"seq"`
	Time       time.Time `json:"time"`
	CallID     string    `json:"callId"`
	Tool       string    `json:"tool"`
	SessionKey string    `json:"sessionKey"`
}

// Verify walks the whole log, oldest first, and checks that each record is
// the one written at its place: its content matches its hash, it names its
// own place, it carries the hash of the record before, no place is empty,
// and the last is the one the chain's head names. A broken chain is a
// *ChainError for the first bad record; other errors are the database's.
//
// A log with a key (WithKey) requires every record to be keyed with it; a
// log without one cannot check keyed records and says so (ErrKeyNeeded).
func (l *Log) Verify(ctx context.Context) (Summary, error) {
	return l.verify(ctx, nil)
}

// VerifyHead is Verify, and checks too that the log still holds the record
// the head saved elsewhere names, unchanged: records removed from the end,
// or the log rewritten from before the head (its hashes recomputed), break
// the chain there.
func (l *Log) VerifyHead(ctx context.Context, h Head) (Summary, error) {
	return l.verify(ctx, &h)
}

// Keyed reports whether the log is an HMAC chain (WithKey): Verify then
// checks every record against the key.
func (l *Log) Keyed() bool { return l.key != nil }

// ErrKeyNeeded matches the error of verifying keyed records without the key.
var ErrKeyNeeded = errors.New("the audit log is keyed (HMAC): verifying it needs the key")

func (l *Log) verify(ctx context.Context, saved *Head) (Summary, error) {
	var sum Summary
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		var headSeq int64
		var headHash string
		if err := tx.QueryRow(ctx, "SELECT seq, hash FROM audit_head WHERE id = 1").Scan(&headSeq, &headHash); err != nil {
			return fmt.Errorf("reading the chain's head: %w", err)
		}
		rows, err := tx.Query(ctx, "SELECT seq, time_ns, call_id, tool, session_key, body, hash, COALESCE(record_id, '') FROM audit_log ORDER BY seq")
		if err != nil {
			return err
		}
		defer rows.Close()
		var prev string
		for rows.Next() {
			var (
				seq, timeNS                     int64
				callID, tool, session, hash, id string
				raw                             []byte
			)
			if err := rows.Scan(&seq, &timeNS, &callID, &tool, &session, &raw, &hash, &id); err != nil {
				return err
			}
			next := sum.Records + 1
			if seq != next {
				if next == 1 {
					return &ChainError{1, fmt.Sprintf("missing: the log starts at record %d", seq)}
				}
				return &ChainError{next, fmt.Sprintf("missing: the log goes from record %d to record %d", next-1, seq)}
			}
			var b chained
			if err := json.Unmarshal(raw, &b); err != nil {
				return &ChainError{seq, fmt.Sprintf("edited: its content is not a record (%v)", err)}
			}
			switch {
			case l.key == nil && b.Key != "":
				return fmt.Errorf("%w (record %d is keyed with key %s): set it with TOOLBELT_AUDIT_KEY, TOOLBELT_AUDIT_KEY_FILE or audit.keyFile in toolbelt.yaml", ErrKeyNeeded, seq, b.Key)
			case l.key != nil && b.Key == "":
				return &ChainError{seq, "not keyed: the log is to be keyed, but this record carries a plain hash (it was written before the key was set, or rewritten by someone without the key)"}
			case l.key != nil && b.Key != l.kid:
				return &ChainError{seq, fmt.Sprintf("keyed with another key (%s, the key given is %s)", b.Key, l.kid)}
			}
			switch {
			case b.Seq != seq:
				return &ChainError{seq, fmt.Sprintf("moved: it was written as record %d (records were reordered or renumbered)", b.Seq)}
			case l.hash(raw) != hash:
				return &ChainError{seq, "edited: its content does not match its hash"}
			case b.Prev != prev && seq == 1:
				return &ChainError{1, "edited: the first record is chained to one before it"}
			case b.Prev != prev:
				// Each is consistent with itself, so the record before was
				// rewritten along with its hash.
				return &ChainError{seq - 1, fmt.Sprintf("edited: record %d was chained to another hash (this record was rewritten with a new one)", seq)}
			case b.Time.UnixNano() != timeNS || b.CallID != callID || b.Tool != tool || b.SessionKey != session || b.ID != id:
				return &ChainError{seq, "edited: its time, call id, tool, session or record id columns do not match its content"}
			}
			if saved != nil && seq == saved.Seq && hash != saved.Hash {
				return &ChainError{seq, "rewritten: it is not the record the saved head names (the log was rewritten from this record or before it)"}
			}
			prev = hash
			sum.Records = seq
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if saved != nil && saved.Seq > sum.Records {
			return &ChainError{sum.Records + 1, fmt.Sprintf("missing: the log ends at record %d, but the saved head names record %d (records were removed from the end)", sum.Records, saved.Seq)}
		}
		switch {
		case headSeq > sum.Records:
			return &ChainError{sum.Records + 1, fmt.Sprintf("missing: the log ends at record %d, but %d were appended", sum.Records, headSeq)}
		case headSeq < sum.Records:
			appended := fmt.Sprintf("only %d records were", headSeq)
			if headSeq == 1 {
				appended = "only 1 record was"
			}
			return &ChainError{headSeq + 1, "inserted: " + appended + " appended"}
		case headHash != prev:
			return &ChainError{sum.Records, "edited: it is not the record last appended (the chain's head names another hash)"}
		}
		sum.Head = prev
		sum.Duplicates, err = duplicates(ctx, tx)
		return err
	})
	var ce *ChainError
	switch {
	case errors.As(err, &ce), errors.Is(err, ErrKeyNeeded):
		return Summary{}, err
	case err != nil:
		return Summary{}, fmt.Errorf("verifying the audit log: %w", err)
	}
	return sum, nil
}

// duplicates finds the records that repeat an earlier one (see
// Duplicate). Only calls with more than one record are read whole.
func duplicates(ctx context.Context, tx *store.Tx) ([]Duplicate, error) {
	var found []Duplicate
	rows, err := tx.Query(ctx, "SELECT a.seq, b.seq, b.call_id FROM audit_log a JOIN audit_log b ON a.record_id = b.record_id AND a.seq < b.seq")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		d := Duplicate{Same: "record id"}
		if err := rows.Scan(&d.Of, &d.Seq, &d.CallID); err != nil {
			rows.Close()
			return nil, err
		}
		found = append(found, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	calls, err := repeatedCalls(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, call := range calls {
		ds, err := sameContent(ctx, tx, call)
		if err != nil {
			return nil, err
		}
		found = append(found, ds...)
	}
	slices.SortFunc(found, func(a, b Duplicate) int { return cmp.Compare(a.Seq, b.Seq) })
	return slices.CompactFunc(found, func(a, b Duplicate) bool { return a.Seq == b.Seq }), nil
}

// repeatedCalls returns the call ids that more than one record names.
func repeatedCalls(ctx context.Context, tx *store.Tx) ([]string, error) {
	rows, err := tx.Query(ctx, "SELECT call_id FROM audit_log WHERE call_id <> '' GROUP BY call_id HAVING COUNT(*) > 1")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var calls []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	return calls, rows.Err()
}

// sameContent returns the records of call that repeat an earlier one's
// content: everything but the id, place and hash.
func sameContent(ctx context.Context, tx *store.Tx, call string) ([]Duplicate, error) {
	rows, err := tx.Query(ctx, "SELECT seq, body FROM audit_log WHERE call_id = ? ORDER BY seq", call)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	first := map[string]int64{} // content → the first record holding it
	var found []Duplicate
	for rows.Next() {
		var (
			seq int64
			raw []byte
			b   body
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, &ChainError{seq, fmt.Sprintf("edited: its content is not a record (%v)", err)}
		}
		r := b.Record
		r.ID, r.Seq, r.Hash = "", 0, ""
		content, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if of, ok := first[string(content)]; ok {
			found = append(found, Duplicate{Seq: seq, Of: of, CallID: call, Same: "call and content"})
		} else {
			first[string(content)] = seq
		}
	}
	return found, rows.Err()
}

// Head names the newest record of the log: its sequence number and hash.
// Saved somewhere the database's writers cannot reach, it lets VerifyHead
// prove later that nothing up to it was removed or rewritten.
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// String writes the head as SEQ:HASH, the form ParseHead reads.
func (h Head) String() string { return fmt.Sprintf("%d:%s", h.Seq, h.Hash) }

// ParseHead reads a head written as SEQ:HASH.
func ParseHead(s string) (Head, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 1 || len(hash) != 64 || strings.Trim(strings.ToLower(hash), "0123456789abcdef") != "" {
		return Head{}, fmt.Errorf("%q is not a head: want SEQ:HASH as toolbelt audit head prints it, e.g. 42:%s", s, strings.Repeat("0", 64))
	}
	return Head{Seq: n, Hash: strings.ToLower(hash)}, nil
}

// Head returns the log's head as appends left it; Seq 0 when the log is
// empty.
func (l *Log) Head(ctx context.Context) (Head, error) {
	var h Head
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		return tx.QueryRow(ctx, "SELECT seq, hash FROM audit_head WHERE id = 1").Scan(&h.Seq, &h.Hash)
	})
	if err != nil {
		return Head{}, fmt.Errorf("reading the audit log's head: %w", err)
	}
	return h, nil
}
