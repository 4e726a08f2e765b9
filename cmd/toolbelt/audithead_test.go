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
