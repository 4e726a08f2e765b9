package auditlog_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
)

// rehashAll rewrites every record's chain from seq on as someone with the
// database but without a key would: plain SHA-256 of each body, chained,
// and the head moved to match. It is what defeats an unkeyed chain that is
// not checked against a saved head.
func rehashAll(from int) tamper {
	return func(ctx context.Context, tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT seq, body FROM audit_log WHERE seq >= ? ORDER BY seq", from)
		if err != nil {
			return err
		}
		type row struct {
			seq  int64
			body string
		}
		var rs []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.body); err != nil {
				return err
			}
			rs = append(rs, r)
		}
		rows.Close()
		var prev string
		if from > 1 {
			if err := tx.QueryRow(ctx, "SELECT hash FROM audit_log WHERE seq = ?", from-1).Scan(&prev); err != nil {
				return err
			}
		}
		for _, r := range rs {
			// Swap the "prev" value of the body for the new chain's.
			i := strings.Index(r.body, `"prev":"`) + len(`"prev":"`)
			j := i + strings.Index(r.body[i:], `"`)
			body := r.body[:i] + prev + r.body[j:]
			prev = sha(body)
			if _, err := tx.Exec(ctx, "UPDATE audit_log SET body = ?, hash = ? WHERE seq = ?", body, prev, r.seq); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "UPDATE audit_head SET hash = ? WHERE id = 1", prev)
		return err
	}
}

func tamperWith(t *testing.T, st *store.Store, tms ...tamper) {
	t.Helper()
	ctx := context.Background()
	for _, tm := range tms {
		if err := st.Write(ctx, func(tx *store.Tx) error { return tm(ctx, tx) }); err != nil {
			t.Fatalf("tampering: %v", err)
		}
	}
}

func wantBroken(t *testing.T, err error, seq int64, problem string) {
	t.Helper()
	var ce *auditlog.ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("verify = %v, want a broken chain at record %d (%s)", err, seq, problem)
	}
	if ce.Seq != seq || !strings.Contains(ce.Problem, problem) {
		t.Errorf("verify = %q, want record %d: %q", err, seq, problem)
	}
}

func TestHeadRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st)
		if h, err := l.Head(ctx); err != nil || h.Seq != 0 {
			t.Fatalf("empty log's head: %+v %v", h, err)
		}
		for range 3 {
			appendAll(t, l, full())
		}
		h, err := l.Head(ctx)
		rs := list(t, l, auditlog.Filter{})
		if err != nil || h.Seq != 3 || h.Hash != rs[2].Hash {
			t.Fatalf("head %+v %v, want 3:%s", h, err, rs[2].Hash)
		}
		parsed, err := auditlog.ParseHead(h.String())
		if err != nil || parsed != h {
			t.Fatalf("ParseHead(%q) = %+v %v", h.String(), parsed, err)
		}
		// Later appends keep an old head valid.
		appendAll(t, l, full())
		if sum, err := l.VerifyHead(ctx, h); err != nil || sum.Records != 4 {
			t.Errorf("VerifyHead with an older head: %+v %v", sum, err)
		}
		for _, bad := range []string{"", "3", "x:" + h.Hash, "0:" + h.Hash, "3:abc", "3:" + strings.Repeat("g", 64)} {
			if _, err := auditlog.ParseHead(bad); err == nil || !strings.Contains(err.Error(), "SEQ:HASH") {
				t.Errorf("ParseHead(%q) = %v", bad, err)
			}
		}
	})
}

// TestVerifyHeadFindsTruncationAndRewrites: what the chain alone cannot show
// (the newest records removed and the head moved back; everything rehashed)
// shows against a head saved elsewhere.
func TestVerifyHeadFindsTruncationAndRewrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tamper  []tamper
		seq     int64
		problem string
	}{
		{"tail removed, head moved back", []tamper{sqlTamper(
			"DELETE FROM audit_log WHERE seq > 4",
			"UPDATE audit_head SET seq = 4, hash = (SELECT hash FROM audit_log WHERE seq = 4) WHERE id = 1")},
			5, "missing: the log ends at record 4, but the saved head names record 6"},
		{"a record rewritten and the chain rehashed", []tamper{rewrite(2, "ls -la", "rm -rf", false), rehashAll(2)},
			6, "rewritten: it is not the record the saved head names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				l := auditlog.New(st)
				for range 6 {
					appendAll(t, l, full())
				}
				saved, err := l.Head(ctx)
				if err != nil {
					t.Fatal(err)
				}
				tamperWith(t, st, tc.tamper...)
				// The chain alone looks intact: that is the attack.
				if _, err := l.Verify(ctx); err != nil {
					t.Fatalf("the tampering was not consistent: %v", err)
				}
				_, err = l.VerifyHead(ctx, saved)
				wantBroken(t, err, tc.seq, tc.problem)
			})
		})
	}
}

func TestKeyedChain(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef-a key outside the database")
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st, auditlog.WithKey(key))
		for range 5 {
			appendAll(t, l, full())
		}
		if sum, err := l.Verify(ctx); err != nil || sum.Records != 5 {
			t.Fatalf("keyed log: %+v %v", sum, err)
		}
		// Without the key, the log cannot be verified, and says why.
		if _, err := auditlog.New(st).Verify(ctx); !errors.Is(err, auditlog.ErrKeyNeeded) || !strings.Contains(err.Error(), "TOOLBELT_AUDIT_KEY") || !strings.Contains(err.Error(), "audit.keyFile") {
			t.Errorf("verify without the key: %v", err)
		}
		// Another key is named as such.
		_, err := auditlog.New(st, auditlog.WithKey([]byte("another key, 16 bytes or more"))).Verify(ctx)
		wantBroken(t, err, 1, "keyed with another key")
		// Someone who can write the database but lacks the key rewrites a
		// record and recomputes the chain the only way they can.
		tamperWith(t, st, rewrite(3, "ls -la", "rm -rf", false), rehashAll(3))
		_, err = l.Verify(ctx)
		wantBroken(t, err, 3, "edited: its content does not match its hash")
	})
}

func TestKeyedChainRefusesUnkeyedRecords(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		appendAll(t, auditlog.New(st), full())
		// Rewritten as a whole by someone without the key: plain records.
		_, err := auditlog.New(st, auditlog.WithKey([]byte("0123456789abcdef"))).Verify(ctx)
		wantBroken(t, err, 1, "not keyed")
	})
}

// TestWriterAppendWaitsForTheCommit: when Append returns, the record is in
// the database — read back through another connection, before Close.
func TestWriterAppendWaitsForTheCommit(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		st := storetest.Open(t, dsn)
		w := auditlog.New(st).Writer(auditlog.WriterOptions{})
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer w.Stop(ctx)
		other := auditlog.New(storetest.Open(t, dsn))
		for i := range 20 {
			r := full()
			r.CallID = "c" + string(rune('a'+i))
			if err := w.Append(ctx, r); err != nil {
				t.Fatal(err)
			}
			rs := list(t, other, auditlog.Filter{Limit: 1})
			if len(rs) != 1 || rs[0].CallID != r.CallID {
				t.Fatalf("after Append of %s returned, the newest record is %+v", r.CallID, rs)
			}
		}
	})
}
