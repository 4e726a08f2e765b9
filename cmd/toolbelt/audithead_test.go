package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/store"
)

// sqlOn runs statements on the data directory's database directly, as
// someone able to write the file could.
func sqlOn(t *testing.T, data string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Write(ctx, func(tx *store.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAuditHeadAndVerifyHead(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	ws := t.TempDir()
	if r := runCLIWith(t, environ, "", "", "audit", "head").expect(t, 0); r.stdout != "0 records: the log is empty, there is no head yet\n" {
		t.Errorf("empty: %q", r.stdout)
	}
	for i := range 4 {
		runCLIWith(t, environ, "", "", "call", "test_greet", "--args", fmt.Sprintf(`{"name":"n%d"}`, i), "--workspace", ws).expect(t, 0)
	}
	head := strings.TrimSpace(runCLIWith(t, environ, "", "", "audit", "head").expect(t, 0).stdout)
	if !regexp.MustCompile(`^4:[0-9a-f]{64}$`).MatchString(head) {
		t.Fatalf("head %q", head)
	}
	r := runCLIWith(t, environ, "", "", "audit", "verify", "--head", head).expect(t, 0)
	if !strings.Contains(r.stdout, "4 records, chain intact (head "+head+"), and it holds the saved head's record 4 unchanged") {
		t.Errorf("verify --head: %q", r.stdout)
	}
	// The newest two records removed and the head moved back: the chain
	// alone looks intact; the saved head does not.
	sqlOn(t, data, "DELETE FROM audit_log WHERE seq > 2",
		"UPDATE audit_head SET seq = 2, hash = (SELECT hash FROM audit_log WHERE seq = 2) WHERE id = 1")
	runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0)
	r = runCLIWith(t, environ, "", "", "audit", "verify", "--head", head).expect(t, 1)
	if r.stdout != "Chain broken at record 3: missing: the log ends at record 2, but the saved head names record 4 (records were removed from the end).\n" {
		t.Errorf("truncated: %q", r.stdout)
	}
	r = runCLIWith(t, environ, "", "", "audit", "verify", "--head", "4:nothex").expect(t, 2)
	if !strings.Contains(r.stderr, "--head: \"4:nothex\" is not a head: want SEQ:HASH") {
		t.Errorf("bad head: %q", r.stderr)
	}
}

func TestAuditKey(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	key := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(key, []byte("  a key of more than sixteen bytes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyed := sharedEnvironment(t, data, envAuditKeyFile+"="+key)
	plain := sharedEnvironment(t, data)
	ws := t.TempDir()
	for i := range 3 {
		runCLIWith(t, keyed, "", "", "call", "test_greet", "--args", fmt.Sprintf(`{"name":"n%d"}`, i), "--workspace", ws).expect(t, 0)
	}
	runCLIWith(t, keyed, "", "", "audit", "verify").expect(t, 0)
	// The same key given as the value itself.
	runCLIWith(t, sharedEnvironment(t, data, envAuditKey+"=a key of more than sixteen bytes"), "", "", "audit", "verify").expect(t, 0)
	r := runCLIWith(t, plain, "", "", "audit", "verify").expect(t, 1)
	if !strings.HasPrefix(r.stdout, "Cannot verify: the audit log is keyed (HMAC)") {
		t.Errorf("without the key: %q", r.stdout)
	}
	// A record rewritten in the file, its hash recomputed without the key
	// (plain SHA-256), the next record's link and the head moved to match.
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(ctx, func(tx *store.Tx) error {
		var body string
		if err := tx.QueryRow(ctx, "SELECT body FROM audit_log WHERE seq = 2").Scan(&body); err != nil {
			return err
		}
		body = strings.Replace(body, `"n1"`, `"zz"`, 1)
		sum := sha256.Sum256([]byte(body))
		_, err := tx.Exec(ctx, "UPDATE audit_log SET body = ?, hash = ? WHERE seq = 2", body, hex.EncodeToString(sum[:]))
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, keyed, "", "", "audit", "verify").expect(t, 1)
	if r.stdout != "Chain broken at record 2: edited: its content does not match its hash.\n" {
		t.Errorf("rewritten without the key: %q", r.stdout)
	}
	if r := runCLIWith(t, sharedEnvironment(t, data, envAuditKey+"=short"), "", "", "audit", "verify").expect(t, 2); !strings.Contains(r.stderr, "the audit key from TOOLBELT_AUDIT_KEY has 5 bytes: it needs at least 16") {
		t.Errorf("short key: %q", r.stderr)
	}
}

// forgeChain rewrites the whole audit log of data as someone who can write
// the database but has not the key: record seq's arguments changed, each
// record's body edited by edit, every hash recomputed (plain SHA-256, the
// only hash they can compute), each record chained to the one before, and
// the head moved to match — a chain consistent from end to end.
func forgeChain(t *testing.T, data string, seq int, from, to string, edit func(string) string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Write(ctx, func(tx *store.Tx) error {
		rows, err := tx.Query(ctx, "SELECT seq, body FROM audit_log ORDER BY seq")
		if err != nil {
			return err
		}
		bodies := map[int]string{}
		for rows.Next() {
			var n int
			var b string
			if err := rows.Scan(&n, &b); err != nil {
				return err
			}
			bodies[n] = b
		}
		rows.Close()
		prevRE := regexp.MustCompile(`"prev":"[0-9a-f]*"`)
		prev := ""
		for n := 1; n <= len(bodies); n++ {
			b := edit(prevRE.ReplaceAllString(bodies[n], fmt.Sprintf(`"prev":%q`, prev)))
			if n == seq {
				b = strings.Replace(b, from, to, 1)
			}
			sum := sha256.Sum256([]byte(b))
			prev = hex.EncodeToString(sum[:])
			if _, err := tx.Exec(ctx, "UPDATE audit_log SET body = ?, hash = ? WHERE seq = ?", b, prev, n); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, "UPDATE audit_head SET hash = ? WHERE id = 1", prev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeyedAuditCannotBeForged: a keyed log rewritten into a chain that is
// consistent from end to end, by someone with the database but not the
// key, fails toolbelt audit verify with the key — whether the forger keeps
// the records' key ids or drops them (which makes a plain chain that
// verifies without the key: the attack the key is for).
func TestKeyedAuditCannotBeForged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(string) string
		plain int // exit code of verify without the key
		keyed string
	}{
		{"key ids kept", func(b string) string { return b }, 1, "Chain broken at record 1: edited: its content does not match its hash.\n"},
		{"key ids dropped", func(b string) string { return regexp.MustCompile(`"key":"[0-9a-f]+",`).ReplaceAllString(b, "") }, 0,
			"Chain broken at record 1: not keyed: the log is to be keyed, but this record carries a plain hash (it was written before the key was set, or rewritten by someone without the key).\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := t.TempDir()
			keyed := sharedEnvironment(t, data, envAuditKey+"=a key of more than sixteen bytes")
			ws := t.TempDir()
			for i := range 3 {
				runCLIWith(t, keyed, "", "", "call", "test_greet", "--args", fmt.Sprintf(`{"name":"n%d"}`, i), "--workspace", ws).expect(t, 0)
			}
			forgeChain(t, data, 2, `"n1"`, `"forged"`, tc.edit)
			runCLIWith(t, sharedEnvironment(t, data), "", "", "audit", "verify").expect(t, tc.plain)
			if r := runCLIWith(t, keyed, "", "", "audit", "verify").expect(t, 1); r.stdout != tc.keyed {
				t.Errorf("verify with the key: %q, want %q", r.stdout, tc.keyed)
			}
		})
	}
}
