package auditlog_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/internal/storetest"
	"github.com/toolbelt/toolbelt/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(spoolChild())
	}
	goleak.VerifyTestMain(m)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// full is a record with every field set.
func full() audit.Record {
	zone := time.FixedZone("CEST", 2*3600)
	return audit.Record{
		Time:       time.Date(2026, 3, 1, 14, 30, 5, 123456789, zone),
		CallID:     "toolu_01ABC",
		Tool:       "exec",
		AgentID:    "main",
		SessionKey: "agent:main:cli",
		Channel:    "cli",
		Owner:      true,
		Provider:   "anthropic/claude-sonnet-4",
		Arguments:  json.RawMessage(`{"command":"ls -la","env":{"LANG":"C"},"timeout":30}`),
		Verdicts: []audit.Verdict{
			{Layer: "profile", Decision: "allow", Rule: "coding"},
			{Layer: "global", Decision: "ask", Rule: "exec when command matches rm -rf *"},
		},
		Confirmation: &audit.Confirmation{Asked: true, Answer: "allow-once", By: "terminal", At: time.Date(2026, 3, 1, 14, 30, 9, 5, zone)},
		Duration:     1500 * time.Millisecond,
		ResultBytes:  2048,
		IsError:      true,
		ErrorClass:   "timeout",
		DryRun:       true,
	}
}

func list(t *testing.T, l *auditlog.Log, f auditlog.Filter) []audit.Record {
	t.Helper()
	rs, err := l.List(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func appendAll(t testing.TB, l *auditlog.Log, rs ...audit.Record) {
	t.Helper()
	for _, r := range rs {
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		l := auditlog.New(st)
		in := full()
		before := time.Now()
		appendAll(t, l, in, audit.Record{CallID: "call-2", Tool: "read"})
		got := list(t, l, auditlog.Filter{})
		if len(got) != 2 {
			t.Fatalf("%d records, want 2", len(got))
		}
		want := full()
		want.ID, want.Seq, want.Hash = got[0].ID, 1, got[0].Hash
		if len(got[0].ID) != 26 || got[1].ID == got[0].ID {
			t.Errorf("record ids %q, %q: want 26 characters each, unique", got[0].ID, got[1].ID)
		}
		want.Time = want.Time.UTC()
		want.Confirmation.At = want.Confirmation.At.UTC()
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got[0], want)
		}
		if len(got[0].Hash) != 64 || got[1].Hash == got[0].Hash {
			t.Errorf("hashes %q, %q", got[0].Hash, got[1].Hash)
		}
		// Append leaves the caller's record alone.
		if in.Confirmation.At.Location().String() != "CEST" || in.Seq != 0 {
			t.Errorf("Append changed its argument: %+v", in)
		}
		// A zero time is filled, an id made; nothing else is made up.
		min := got[1]
		if min.Time.Before(before.Add(-time.Second)) || min.Time.After(time.Now()) {
			t.Errorf("filled time %v, want about %v", min.Time, before)
		}
		min.ID, min.Time, min.Hash = "", time.Time{}, ""
		if !reflect.DeepEqual(min, audit.Record{Seq: 2, CallID: "call-2", Tool: "read"}) {
			t.Errorf("minimal record: %+v", min)
		}
	})
}

// TestSecretsNeverStored appends a record full of secrets and looks for them
// anywhere in the database's audit table.
func TestSecretsNeverStored(t *testing.T) {
	t.Parallel()
	// Secrets that look real, built so the source does not hold them whole.
	ghToken := "ghp_" + strings.Repeat("aB3", 12)
	openAIKey := "sk-" + "proj-" + strings.Repeat("Ab1", 10)
	pemKey := "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
	secrets := []string{"hunter2", ghToken, openAIKey, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "s3cret", strings.Repeat("big", 400)}
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st)
		args := fmt.Sprintf(`{"password":"hunter2","command":"git push https://%s@github.com/o/r","key":%q,"content":%q,"url":"postgres://u:s3cret@h/db","blob":%q}`,
			ghToken, openAIKey, pemKey, strings.Repeat("big", 400))
		appendAll(t, l, audit.Record{CallID: "c1", Tool: "exec", Arguments: json.RawMessage(args)})
		var body, hash string
		if err := st.Read(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT body, hash FROM audit_log WHERE seq = 1").Scan(&body, &hash)
		}); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("stored record holds %.20q…:\n%s", s, body)
			}
		}
		got := list(t, l, auditlog.Filter{})[0].Arguments
		want := `{"blob":{"bytes":1200,"sha256":"` + sha(strings.Repeat("big", 400)) + `"},"command":"git push https://[redacted]@github.com/o/r","content":"-----BEGIN OPENSSH PRIVATE KEY-----\n[redacted]\n-----END OPENSSH PRIVATE KEY-----\n","key":"[redacted]","password":"[redacted]","url":"postgres://u:[redacted]@h/db"}`
		if string(got) != want {
			t.Errorf("arguments\n got %s\nwant %s", got, want)
		}
	})
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		l := auditlog.New(st)
		for i, r := range []struct{ tool, session string }{
			{"read", "s1"}, {"exec", "s1"}, {"read", "s2"}, {"write", "s2"}, {"exec", "s2"}, {"read", "s1"},
		} {
			appendAll(t, l, audit.Record{Time: t0.Add(time.Duration(i) * time.Hour), CallID: fmt.Sprintf("c%d", i+1), Tool: r.tool, SessionKey: r.session})
		}
		for _, tc := range []struct {
			name string
			f    auditlog.Filter
			want string
		}{
			{"all", auditlog.Filter{}, "c1 c2 c3 c4 c5 c6"},
			{"tool", auditlog.Filter{Tool: "read"}, "c1 c3 c6"},
			{"session", auditlog.Filter{Session: "s2"}, "c3 c4 c5"},
			{"since", auditlog.Filter{Since: t0.Add(3 * time.Hour)}, "c4 c5 c6"},
			{"since, to the nanosecond", auditlog.Filter{Since: t0.Add(3*time.Hour + 1)}, "c5 c6"},
			{"limit keeps the newest", auditlog.Filter{Limit: 2}, "c5 c6"},
			{"call", auditlog.Filter{CallID: "c4"}, "c4"},
			{"after a record", auditlog.Filter{After: 4}, "c5 c6"},
			{"after a record, of a tool", auditlog.Filter{After: 2, Tool: "read"}, "c3 c6"},
			{"all together", auditlog.Filter{Tool: "exec", Session: "s2", Since: t0.Add(time.Hour), Limit: 5}, "c5"},
			{"none", auditlog.Filter{Tool: "browser"}, ""},
		} {
			var ids []string
			for _, r := range list(t, l, tc.f) {
				ids = append(ids, r.CallID)
			}
			if got := strings.Join(ids, " "); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		}
	})
}

func TestVerifyIntact(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := auditlog.New(st)
		sum, err := l.Verify(ctx)
		if err != nil || !reflect.DeepEqual(sum, auditlog.Summary{}) {
			t.Fatalf("empty log: %+v, %v", sum, err)
		}
		for range 5 {
			appendAll(t, l, full())
		}
		sum, err = l.Verify(ctx)
		rs := list(t, l, auditlog.Filter{})
		if err != nil || sum.Records != 5 || sum.Head != rs[4].Hash {
			t.Fatalf("Verify = %+v, %v; want 5 records, head %s", sum, err, rs[4].Hash)
		}
	})
}

// tamper changes the stored log with SQL, as someone with access to the
// database could.
type tamper func(ctx context.Context, tx *store.Tx) error

func sqlTamper(stmts ...string) tamper {
	return func(ctx context.Context, tx *store.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
}

// rewrite replaces old by new in the body of record seq and, when rehash is
// set, stores the new body's hash too.
func rewrite(seq int, old, new string, rehash bool) tamper {
	return func(ctx context.Context, tx *store.Tx) error {
		var body string
		if err := tx.QueryRow(ctx, "SELECT body FROM audit_log WHERE seq = ?", seq).Scan(&body); err != nil {
			return err
		}
		if !strings.Contains(body, old) {
			return fmt.Errorf("record %d lacks %q: %s", seq, old, body)
		}
		body = strings.ReplaceAll(body, old, new)
		if rehash {
			_, err := tx.Exec(ctx, "UPDATE audit_log SET body = ?, hash = ? WHERE seq = ?", body, sha(body), seq)
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE audit_log SET body = ? WHERE seq = ?", body, seq)
		return err
	}
}

// forge inserts a record at seq that is consistent with itself and chained
// to the record before.
func forge(seq int) tamper {
	return func(ctx context.Context, tx *store.Tx) error {
		var prev string
		if err := tx.QueryRow(ctx, "SELECT hash FROM audit_log WHERE seq = ?", seq-1).Scan(&prev); err != nil {
			return err
		}
		body := fmt.Sprintf(`{"v":1,"prev":%q,"seq":%d,"time":"2026-03-01T12:00:00Z","callId":"forged","tool":"read","agentId":"","sessionKey":"","channel":"","owner":false,"provider":"","durationNs":0,"resultBytes":0,"isError":false,"errorClass":"","dryRun":false}`, prev, seq)
		_, err := tx.Exec(ctx, "INSERT INTO audit_log (seq, time_ns, call_id, tool, session_key, body, hash) VALUES (?, ?, 'forged', 'read', '', ?, ?)",
			seq, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano(), body, sha(body))
		return err
	}
}

func TestVerifyFindsTampering(t *testing.T) {
	t.Parallel()
	const n = 6
	for _, tc := range []struct {
		name    string
		tamper  []tamper
		seq     int64
		problem string
	}{
		{"edited content", []tamper{sqlTamper("UPDATE audit_log SET body = REPLACE(body, 'ls -la', 'rm -rf') WHERE seq = 3")},
			3, "edited: its content does not match its hash"},
		{"edited content and hash", []tamper{rewrite(4, "ls -la", "rm -rf", true)},
			4, "edited: record 5 was chained to another hash"},
		{"edited last record and hash", []tamper{rewrite(n, "ls -la", "rm -rf", true)},
			n, "edited: it is not the record last appended"},
		{"edited column", []tamper{sqlTamper("UPDATE audit_log SET tool = 'read' WHERE seq = 2")},
			2, "edited: its time, call id, tool, session or record id columns do not match its content"},
		{"edited time column", []tamper{sqlTamper("UPDATE audit_log SET time_ns = time_ns - 3600000000000 WHERE seq = 5")},
			5, "columns do not match"},
		{"not a record", []tamper{sqlTamper("UPDATE audit_log SET body = 'gone' WHERE seq = 2")},
			2, "edited: its content is not a record"},
		{"removed", []tamper{sqlTamper("DELETE FROM audit_log WHERE seq = 3")},
			3, "missing: the log goes from record 2 to record 4"},
		{"removed first", []tamper{sqlTamper("DELETE FROM audit_log WHERE seq = 1")},
			1, "missing: the log starts at record 2"},
		{"removed newest", []tamper{sqlTamper(fmt.Sprintf("DELETE FROM audit_log WHERE seq >= %d", n-1))},
			n - 1, fmt.Sprintf("missing: the log ends at record %d, but %d were appended", n-2, n)},
		{"rows swapped", []tamper{sqlTamper(
			"UPDATE audit_log SET seq = -3 WHERE seq = 3",
			"UPDATE audit_log SET seq = 3 WHERE seq = 4",
			"UPDATE audit_log SET seq = 4 WHERE seq = -3")},
			3, "moved: it was written as record 4"},
		{"inserted at the end", []tamper{forge(n + 1)},
			n + 1, fmt.Sprintf("inserted: only %d records were appended", n)},
		{"inserted in the middle", []tamper{sqlTamper(
			"UPDATE audit_log SET seq = -(seq + 1) WHERE seq >= 3",
			"UPDATE audit_log SET seq = -seq WHERE seq < 0"), forge(3)},
			4, "moved: it was written as record 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				l := auditlog.New(st)
				for range n {
					appendAll(t, l, full())
				}
				if _, err := l.Verify(ctx); err != nil {
					t.Fatalf("before tampering: %v", err)
				}
				for _, tm := range tc.tamper {
					if err := st.Write(ctx, func(tx *store.Tx) error { return tm(ctx, tx) }); err != nil {
						t.Fatalf("tampering: %v", err)
					}
				}
				_, err := l.Verify(ctx)
				var ce *auditlog.ChainError
				if !errors.As(err, &ce) {
					t.Fatalf("Verify after tampering = %v, want a ChainError", err)
				}
				if ce.Seq != tc.seq || !strings.Contains(ce.Problem, tc.problem) {
					t.Errorf("Verify = %q, want record %d: %q", err, tc.seq, tc.problem)
				}
			})
		})
	}
}

// TestConcurrentAppends appends from many goroutines through two stores on
// one database, as two processes would: the chain never forks.
func TestConcurrentAppends(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 25
	storetest.Run(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		logs := []*auditlog.Log{auditlog.New(storetest.Open(t, dsn)), auditlog.New(storetest.Open(t, dsn))}
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					errs <- logs[w%2].Append(ctx, audit.Record{CallID: fmt.Sprintf("w%d-%d", w, i), Tool: "read"})
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		sum, err := logs[0].Verify(ctx)
		if err != nil || sum.Records != workers*each {
			t.Fatalf("Verify = %+v, %v; want %d records", sum, err, workers*each)
		}
		seen := map[string]bool{}
		for i, r := range list(t, logs[1], auditlog.Filter{}) {
			if r.Seq != int64(i+1) || seen[r.CallID] {
				t.Fatalf("record %d: seq %d, call %s (seen: %v)", i+1, r.Seq, r.CallID, seen[r.CallID])
			}
			seen[r.CallID] = true
		}
	})
}

// TestModeKeptAndOldRecordsVerify: a record keeps the permission mode its
// call ran in (encoding version 2), and a log that begins with records
// written before modes existed (version 1, no mode) still verifies.
func TestModeKeptAndOldRecordsVerify(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		old := `{"v":1,"prev":"","seq":1,"time":"2026-03-01T12:00:00Z","callId":"old","tool":"read","agentId":"","sessionKey":"","channel":"","owner":false,"provider":"","durationNs":0,"resultBytes":0,"isError":false,"errorClass":"","dryRun":false}`
		err := st.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO audit_log (seq, time_ns, call_id, tool, session_key, body, hash) VALUES (1, ?, 'old', 'read', '', ?, ?)",
				time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano(), old, sha(old)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE audit_head SET seq = 1, hash = ? WHERE id = 1", sha(old))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		l := auditlog.New(st)
		r := full()
		r.Mode = "plan"
		appendAll(t, l, r)
		if _, err := l.Verify(ctx); err != nil {
			t.Fatalf("a log of version 1 and 2 records does not verify: %v", err)
		}
		got := list(t, l, auditlog.Filter{})
		if len(got) != 2 || got[0].Mode != "" || got[1].Mode != "plan" {
			t.Fatalf("modes read back: %+v", got)
		}
		var body string
		if err := st.Read(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, "SELECT body FROM audit_log WHERE seq = 2").Scan(&body)
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(body, `{"v":2,`) || !strings.Contains(body, `"mode":"plan"`) {
			t.Errorf("stored body %s: want version 2 with the mode", body)
		}
	})
}
