package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Prev       string    `json:"prev"`
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
func (l *Log) Verify(ctx context.Context) (Summary, error) {
	var sum Summary
	err := l.st.Read(ctx, func(tx *store.Tx) error {
		var headSeq int64
		var headHash string
		if err := tx.QueryRow(ctx, "SELECT seq, hash FROM audit_head WHERE id = 1").Scan(&headSeq, &headHash); err != nil {
			return fmt.Errorf("reading the chain's head: %w", err)
		}
		rows, err := tx.Query(ctx, "SELECT seq, time_ns, call_id, tool, session_key, body, hash FROM audit_log ORDER BY seq")
		if err != nil {
			return err
		}
		defer rows.Close()
		var prev string
		for rows.Next() {
			var (
				seq, timeNS                 int64
				callID, tool, session, hash string
				raw                         []byte
			)
			if err := rows.Scan(&seq, &timeNS, &callID, &tool, &session, &raw, &hash); err != nil {
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
			case b.Seq != seq:
				return &ChainError{seq, fmt.Sprintf("moved: it was written as record %d (records were reordered or renumbered)", b.Seq)}
			case hashOf(raw) != hash:
				return &ChainError{seq, "edited: its content does not match its hash"}
			case b.Prev != prev && seq == 1:
				return &ChainError{1, "edited: the first record is chained to one before it"}
			case b.Prev != prev:
				// Each is consistent with itself, so the record before was
				// rewritten along with its hash.
				return &ChainError{seq - 1, fmt.Sprintf("edited: record %d was chained to another hash (this record was rewritten with a new one)", seq)}
			case b.Time.UnixNano() != timeNS || b.CallID != callID || b.Tool != tool || b.SessionKey != session:
				return &ChainError{seq, "edited: its time, call id, tool or session columns do not match its content"}
			}
			prev = hash
			sum.Records = seq
		}
		if err := rows.Err(); err != nil {
			return err
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
		return nil
	})
	var ce *ChainError
	switch {
	case errors.As(err, &ce):
		return Summary{}, err
	case err != nil:
		return Summary{}, fmt.Errorf("verifying the audit log: %w", err)
	}
	return sum, nil
}
