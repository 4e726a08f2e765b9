package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/audit/auditlog"
	"github.com/toolbelt/toolbelt/store"
)

// auditData makes a data directory whose store holds records, and returns
// it.
func auditData(t *testing.T, rs ...audit.Record) string {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := auditlog.New(st)
	for _, r := range rs {
		if err := l.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tamper runs SQL on the store in data, behind toolbelt's back.
func tamper(t *testing.T, data, sql string) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), sql)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// sampleRecords are calls of the last hours, and one from last week.
func sampleRecords() []audit.Record {
	now := time.Now()
	allow := []audit.Verdict{{Layer: "global", Decision: "allow", Rule: "*"}}
	return []audit.Record{
		{Time: now.Add(-7 * 24 * time.Hour), CallID: "call-old", Tool: "read", SessionKey: "s1", Verdicts: allow, Duration: 3 * time.Millisecond},
		{Time: now.Add(-2 * time.Hour), CallID: "call-exec", Tool: "exec", SessionKey: "s1", Arguments: json.RawMessage(`{"command":"rm -rf build","env":{"API_TOKEN":"abc"}}`),
			Verdicts:     []audit.Verdict{{Layer: "global", Decision: "ask", Rule: "exec when command matches rm -rf *"}},
			Confirmation: &audit.Confirmation{Asked: true, Answer: "allow-once", By: "terminal", At: now.Add(-2 * time.Hour)},
			Duration:     1234567 * time.Microsecond, ResultBytes: 120},
		{Time: now.Add(-time.Hour), CallID: "call-denied", Tool: "exec", SessionKey: "s2", Verdicts: []audit.Verdict{{Layer: "agent", Decision: "deny", Rule: "exec"}},
			IsError: true, ErrorClass: "denied"},
		{Time: now.Add(-time.Minute), CallID: "call-dry", Tool: "write", SessionKey: "s2", Verdicts: allow, DryRun: true, Duration: 40 * time.Microsecond},
	}
}

func TestAuditList(t *testing.T) {
	t.Parallel()
	rs := sampleRecords()
	data := auditData(t, rs...)
	r := runCLI(t, "", "audit", "--data", data).expect(t, 0)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := []string{
		`^TIME +CALL ID +TOOL +DECISION +ERROR +DURATION$`,
		`^` + rs[0].Time.Format("2006-01-02 15:04:05") + `  call-old +read +allow +- +3ms$`,
		`^` + rs[1].Time.Format("2006-01-02 15:04:05") + `  call-exec +exec +allow-once +- +1\.235s$`,
		`^\S+ \S+  call-denied +exec +deny +denied +0s$`,
		`^\S+ \S+  call-dry +write +allow \(dry run\) +- +40µs$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %q", i, lines[i], w)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool", "exec"}, "call-exec call-denied"},
		{[]string{"--session", "s2"}, "call-denied call-dry"},
		{[]string{"--since", "3h"}, "call-exec call-denied call-dry"},
		{[]string{"--since", "1.5d"}, "call-exec call-denied call-dry"},
		{[]string{"--since", "8d"}, "call-old call-exec call-denied call-dry"},
		{[]string{"--limit", "1"}, "call-dry"},
		{[]string{"list", "--tool", "exec", "--session", "s1"}, "call-exec"},
	} {
		r := runCLI(t, "", append([]string{"audit", "--data", data}, tc.args...)...).expect(t, 0)
		ids := regexp.MustCompile(`call-\w+`).FindAllString(r.stdout, -1)
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("%v: %q, want %q\n%s", tc.args, got, tc.want, r.stdout)
		}
	}
	r = runCLI(t, "", "audit", "--data", data, "--tool", "browser").expect(t, 0)
	if r.stdout != "No audit records match.\n" {
		t.Errorf("no match: %q", r.stdout)
	}
}

func TestAuditListJSON(t *testing.T) {
	t.Parallel()
	data := auditData(t, sampleRecords()...)
	r := runCLI(t, "", "audit", "--json", "--tool", "exec", "--data", data).expect(t, 0)
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got) != 2 {
		t.Fatalf("%d records: %s", len(got), r.stdout)
	}
	exec := got[0]
	for k, want := range map[string]any{
		"seq": 2.0, "callId": "call-exec", "tool": "exec", "sessionKey": "s1", "durationNs": 1234567000.0, "resultBytes": 120.0, "isError": false,
	} {
		if exec[k] != want {
			t.Errorf("%s = %v, want %v", k, exec[k], want)
		}
	}
	args, _ := json.Marshal(exec["arguments"])
	if string(args) != `{"command":"rm -rf build","env":{"API_TOKEN":"[redacted]"}}` {
		t.Errorf("arguments %s", args)
	}
	if c, _ := exec["confirmation"].(map[string]any); c["answer"] != "allow-once" || c["by"] != "terminal" {
		t.Errorf("confirmation %v", exec["confirmation"])
	}
	if h, _ := exec["hash"].(string); len(h) != 64 {
		t.Errorf("hash %v", exec["hash"])
	}
	r = runCLI(t, "", "audit", "--json", "--tool", "browser", "--data", data).expect(t, 0)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("no match: %q", r.stdout)
	}
}

func TestAuditVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper string
		code   int
		want   string
	}{
		{"intact", "", 0, `^4 records, chain intact \(head 4:[0-9a-f]{64}\)\n$`},
		{"edited", "UPDATE audit_log SET body = REPLACE(body, 'rm -rf build', 'ls') WHERE seq = 2", 1,
			`^Chain broken at record 2: edited: its content does not match its hash\.\n$`},
		{"removed", "DELETE FROM audit_log WHERE seq = 3", 1, `^Chain broken at record 3: missing: the log goes from record 2 to record 4\.\n`},
		{"removed newest", "DELETE FROM audit_log WHERE seq = 4", 1, `^Chain broken at record 4: missing: the log ends at record 3, but 4 were appended\.\n`},
		{"reordered", "UPDATE audit_log SET seq = -seq WHERE seq IN (1, 2); UPDATE audit_log SET seq = 3 + seq WHERE seq IN (-1, -2)", 1,
			`^Chain broken at record 1: moved: it was written as record 2 \(records were reordered or renumbered\)\.\n`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := auditData(t, sampleRecords()...)
			if tc.tamper != "" {
				tamper(t, data, tc.tamper)
			}
			r := runCLI(t, "", "audit", "verify", "--data", data).expect(t, tc.code)
			if !regexp.MustCompile(tc.want).MatchString(r.stdout) {
				t.Errorf("output %q does not match %q", r.stdout, tc.want)
			}
		})
	}
}

func TestAuditEmptyAndErrors(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if r := runCLI(t, "", "audit", "verify", "--data", data).expect(t, 0); r.stdout != "0 records, chain intact\n" {
		t.Errorf("empty verify: %q", r.stdout)
	}
	if r := runCLI(t, "", "audit", "--data", data).expect(t, 0); r.stdout != "No audit records match.\n" {
		t.Errorf("empty list: %q", r.stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "yesterday"}, `--since: "yesterday" is not a duration: use e.g. 90s, 30m, 2h or 7d`},
		{[]string{"--since=-2h"}, `--since: "-2h": the duration must be positive`},
		{[]string{"--limit=-1"}, "--limit must not be negative"},
	} {
		r := runCLI(t, "", append([]string{"audit", "--data", data}, tc.args...)...).expect(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, r.stderr, tc.want)
		}
	}
	// A database newer than this program is a configuration error.
	st, err := store.Open(context.Background(), filepath.Join(data, store.DefaultFile))
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), "INSERT INTO schema_migrations (version, name, applied_at) VALUES (1000, 'future', 0)")
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "audit", "verify", "--data", data).expect(t, 2)
	if !strings.Contains(r.stderr, "the schema is at version 1000, newer than this program knows") {
		t.Errorf("newer database: %q", r.stderr)
	}
}

func TestStoreDSN(t *testing.T) {
	t.Parallel()
	home, err := store.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	const pg = "postgres://tb@127.0.0.1:5432/toolbelt"
	for _, tc := range []struct {
		name          string
		flag          string
		vars          map[string]string
		dsn, dir, err string
	}{
		{"default", "", nil, filepath.Join(home, store.DefaultFile), home, ""},
		{"flag", "/srv/tb", map[string]string{envData: "/other", envDatabaseURL: pg}, "/srv/tb/toolbelt.db", "/srv/tb", ""},
		{"database URL", "", map[string]string{envData: "/other", envDatabaseURL: pg}, pg, "", ""},
		{"data variable", "", map[string]string{envData: "/var/lib/tb"}, "/var/lib/tb/toolbelt.db", "/var/lib/tb", ""},
		{"not a postgres URL", "", map[string]string{envDatabaseURL: "/tmp/x.db"}, "", "", "TOOLBELT_DATABASE_URL must be a postgres:// URL; for SQLite give the directory with --data or TOOLBELT_DATA"},
	} {
		e := &env{dataDir: tc.flag}
		dsn, dir, err := e.storeDSN(func(k string) string { return tc.vars[k] })
		if dsn != tc.dsn || dir != tc.dir || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: %q, %q, %v; want %q, %q, %q", tc.name, dsn, dir, err, tc.dsn, tc.dir, tc.err)
		}
	}
}

func TestStoreInsideWorkspace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "project")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, data string
		refused    bool
	}{
		{"the workspace itself", ws, true},
		{"the workspace through a symlink", filepath.Join(root, "link"), true},
		{"below it, concealed", filepath.Join(ws, ".toolbelt", "data"), false},
		{"beside it", filepath.Join(root, "project-data"), false},
		{"above it", root, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &env{dataDir: tc.data}
			_, err := e.root(stateRoot, ws)
			if e.tb != nil {
				e.tb.Close(context.Background())
			}
			if tc.refused != (err != nil) {
				t.Fatalf("opening the state: %v, want refused: %v", err, tc.refused)
			}
			if tc.refused && !strings.Contains(err.Error(), "is the workspace itself, where tools work, so it cannot be hidden from them") {
				t.Errorf("error %q", err)
			}
		})
	}
}

// TestAuditNamesEveryProgramThatRan: commands that put a secret's name
// (password=, --password, Authorization:, mysql -p, export API_TOKEN=, a
// private key block) before a line break run the next line's program, and
// the audit names it; the secrets themselves are not recorded (issue 25,
// class 4).
func TestAuditNamesEveryProgramThatRan(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	commands := []string{
		"echo password=\ntouch ran0",
		"echo --password\ntouch ran1",
		"echo Authorization: Bearer\ntouch ran2",
		"echo mysql -u root -p\ntouch ran3",
		"export API_TOKEN=\ntouch ran4",
		"echo -----BEGIN RSA PRIVATE KEY-----\ntouch ran5",
		"echo '-----BEGIN RSA PRIVATE KEY-----' && touch ran6",
		"PASSWORD= touch ran7",
		"bash -c 'echo --token\ntouch ran8'",
		"echo password=hunter2; touch ran9",
	}
	var calls []map[string]any
	for i, c := range commands {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("c%d", i), "name": "exec", "arguments": map[string]string{"command": c}})
	}
	batch, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	env := cliEnvironment(t)
	runCLIWith(t, env, "", string(batch), "call", "--batch", "-", "--yes", "--workspace", ws).expect(t, 0)
	r := runCLIWith(t, env, "", "", "audit", "--json", "--tool", "exec").expect(t, 0)
	var records []struct {
		CallID    string `json:"callId"`
		Arguments struct {
			Command string `json:"command"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &records); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	recorded := map[string]string{}
	for _, rec := range records {
		recorded[rec.CallID] = rec.Arguments.Command
	}
	for i, c := range commands {
		ran := fmt.Sprintf("ran%d", i)
		if _, err := os.Stat(filepath.Join(ws, ran)); err != nil {
			t.Errorf("%q did not run: %v", c, err)
		}
		got, ok := recorded[fmt.Sprintf("c%d", i)]
		if !ok {
			t.Errorf("%q is not in the audit:\n%s", c, r.stdout)
			continue
		}
		if !strings.Contains(got, "touch "+ran) || strings.Count(got, "\n") != strings.Count(c, "\n") {
			t.Errorf("the audit hides what ran:\n ran      %q\n recorded %q", c, got)
		}
		if strings.Contains(got, "hunter2") {
			t.Errorf("the audit records a secret: %q", got)
		}
	}
}
