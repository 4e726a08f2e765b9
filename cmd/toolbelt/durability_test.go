package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/audit"
	"github.com/toolbelt/toolbelt/internal/syncbuf"
)

// answered collects the calls that got an answer, by the name they greet,
// and what the processes wrote to their standard error.
type answered struct {
	mu     sync.Mutex
	names  []string
	stderr []string
}

func (a *answered) add(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.names = append(a.names, name)
}

func (a *answered) log(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stderr = append(a.stderr, s)
}

// checkExactlyOnce checks that the audit verifies, with no duplicate, and
// holds each answered greeting exactly once.
func checkExactlyOnce(t *testing.T, environ []string, names []string) {
	t.Helper()
	if r := runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0); !strings.Contains(r.stdout, "chain intact") || strings.Contains(r.stdout, "repeat") {
		t.Errorf("verify: %s", r.stdout)
	}
	count := map[string]int{}
	for _, r := range auditRecords(t, environ, "--tool", "test_greet") {
		var a struct{ Name string }
		_ = json.Unmarshal(r.Arguments, &a)
		count[a.Name]++
	}
	for _, n := range names {
		if count[n] != 1 {
			t.Errorf("answered call %s is in the audit %d times, want once", n, count[n])
		}
	}
}

// TestSpoolRaceAcrossProcesses is the fault battery's spool race: loops of
// `toolbelt call` (a process each) beside `toolbelt mcp` servers that start,
// answer a few calls and are killed with SIGKILL at a random moment (calls
// in flight or not), all on one data directory, every start recovering
// what the killed ones left. Every call runs (no process fails to take its
// spool), every answered call is in the audit exactly once, the chain
// verifies with no duplicate, and no process logs an error about another's
// spool files.
func TestSpoolRaceAcrossProcesses(t *testing.T) {
	t.Parallel()
	environ := sharedEnvironment(t, t.TempDir())
	ws := t.TempDir()
	const loops, calls, servers, rounds = 3, 12, 2, 8
	var got answered
	var wg sync.WaitGroup
	for l := range loops {
		wg.Go(func() {
			for i := range calls {
				name := fmt.Sprintf("call-%d-%d", l, i)
				r := runCLIWith(t, environ, "", "", "call", "test_greet", "--args", fmt.Sprintf(`{"name":%q}`, name), "--workspace", ws)
				got.log(r.stderr)
				if r.code != 0 || r.stdout != "Hello, "+name+".\n" {
					t.Errorf("toolbelt call %s: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
					continue
				}
				got.add(name)
			}
		})
	}
	for s := range servers {
		wg.Go(func() {
			for round := range rounds {
				raceServer(t, environ, ws, fmt.Sprintf("mcp-%d-%d", s, round), &got)
			}
		})
	}
	wg.Wait()
	for _, e := range got.stderr {
		if strings.Contains(e, "level=ERROR") || strings.Contains(e, "no such file or directory") {
			t.Errorf("a process starting beside others logged:\n%s", e)
		}
	}
	checkExactlyOnce(t, environ, got.names)
}

// raceServer starts `toolbelt mcp`, makes a few calls — some of them still
// in flight when it is killed with SIGKILL, at a random moment — and notes
// those answered.
func raceServer(t *testing.T, environ []string, ws, prefix string, got *answered) {
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = environ
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "race", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Errorf("mcp did not start: %v\n%s", err, stderr.String())
		return
	}
	sequential, inFlight := rand.IntN(4), 1+rand.IntN(4)
	call := func(i int) {
		name := fmt.Sprintf("%s-%d", prefix, i)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": name}})
		if err == nil && !res.IsError {
			got.add(name)
		}
	}
	for i := range sequential {
		call(i)
	}
	var calls sync.WaitGroup
	for i := range inFlight {
		calls.Go(func() { call(sequential + i) })
	}
	time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	_ = cmd.Process.Kill()
	calls.Wait()
	_ = cs.Close()
	got.log(stderr.String())
}

// TestFullDataDiskRefusesChanges runs `toolbelt mcp` with its data
// directory on a small file system (a tmpfs; root only) that fills up
// while it serves: calls go on while the space the spool keeps ahead
// lasts, then calls that change things are refused — with a message that
// says why and what still works — while reads go on, and the server says
// so once on stderr. Once space is freed, changes run again (said once
// too), and every answered call's record reaches the log: verify and list
// succeed. A `toolbelt call` that would change a file on the full disk is
// refused too.
func TestFullDataDiskRefusesChanges(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("mounting a small tmpfs to fill up needs root (CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	environ := sharedEnvironment(t, filepath.Join(mnt, "data"))
	ws := workspaceWith(t)
	runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0) // the database, before the disk fills
	cmd := exec.Command(os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = environ
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "full-disk", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string // answered greetings
	greet := func(name string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test_greet", Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("a read (test_greet %s) on a full disk: %v %s", name, err, textOf(res))
		}
		names = append(names, name)
	}
	write := func(i int) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write", Arguments: map[string]any{"path": fmt.Sprintf("w/%d.txt", i), "content": strings.Repeat("x", 2000)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	greet("before")
	filler := filepath.Join(mnt, "filler")
	fillFile(t, filler)
	const refusal = "write was not run: it changes things, and audit records cannot be made durable: no space left on device — no change is made without its audit record. Read-only tools still work"
	// Refused by the audit step, or first by the intent the write keeps in
	// the store before it changes a file (the spool keeps space ahead;
	// the database may be the first that cannot grow).
	const intentRefusal = "No file was changed: Toolbelt records every change for undo and crash recovery before making it"
	isRefusal := func(text string) bool {
		return strings.Contains(text, refusal) || strings.Contains(text, intentRefusal)
	}
	refused := -1
	for i := range 5000 {
		res := write(i)
		if isRefusal(textOf(res)) {
			refused = i
			break
		}
		if i%50 == 0 {
			greet(fmt.Sprintf("while-filling-%d", i))
		}
	}
	if refused < 0 {
		t.Fatalf("5000 writes on a full disk and none refused; stderr:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(ws, "w", fmt.Sprintf("%d.txt", refused))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused write ran: %v", err)
	}
	for i := range 3 {
		greet(fmt.Sprintf("refusing-%d", i))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read", Arguments: map[string]any{"path": "notes.txt"}})
	if err != nil || res.IsError {
		t.Fatalf("read on a full disk: %v %s", err, textOf(res))
	}
	// A one-shot process on the full disk refuses a change as well.
	r := runCLIWith(t, environ, "", "", "call", "write", "--args", `{"path":"cli.txt","content":"x"}`, "--workspace", ws)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "no space left on device") {
		t.Errorf("toolbelt call write on a full disk: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "cli.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the one-shot write ran on a full disk: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for i := refused + 1; isRefusal(textOf(write(i))); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused a minute after space was freed; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	greet("after")
	_ = cs.Close()
	log := stderr.String()
	// Whichever refused, it says so once, and once that changes run again.
	notices := []string{"calls that change things are refused until audit records can be made durable again", "audit records are durable again: calls that change things run again"}
	if !strings.Contains(log, notices[0]) {
		notices = []string{"keeping the intent of a file change failed; changes are refused until one can be kept", "the intents of file changes can be kept again: changes run again"}
	}
	for _, line := range notices {
		if n := strings.Count(log, line); n != 1 {
			t.Errorf("stderr says %q %d times, want once:\n%s", line, n, log)
		}
	}
	if strings.Contains(log, "writing the audit record failed") {
		t.Errorf("an error per call on stderr:\n%s", log)
	}
	checkExactlyOnce(t, environ, names)
	var refusals int
	for _, rec := range auditRecords(t, environ, "--tool", "write") {
		if rec.ErrorClass == "audit-unavailable" || rec.IsError && strings.Contains(string(rec.Arguments), fmt.Sprintf("w/%d.txt", refused)) {
			refusals++
		}
	}
	if refusals == 0 {
		t.Error("the refused writes are not in the audit")
	}
}

// TestFullDataDiskAtStart: a command started on a data disk with no room
// left says so, and what to do, instead of only the database's error.
func TestFullDataDiskAtStart(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mounting a small tmpfs to fill up needs root (CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	data := filepath.Join(mnt, "data")
	environ := sharedEnvironment(t, data)
	runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0)
	fillFile(t, filepath.Join(mnt, "filler"))
	ws := t.TempDir()
	r := runCLIWith(t, environ, "", "", "call", "write", "--args", `{"path":"f.txt","content":"x"}`, "--workspace", ws).expect(t, 2)
	if want := "(the file system of the data directory " + data + " has 0 KiB free: free some space there, then try again)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "f.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write ran: %v", err)
	}
}

// fillFile writes the file at path until its file system is full.
func fillFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

// spoolLine is a record's line in a spool file, as a process before record
// ids wrote it.
func spoolLine(t *testing.T, callID, name string) string {
	t.Helper()
	b, err := json.Marshal(audit.Record{CallID: callID, Tool: "test_greet", Arguments: json.RawMessage(fmt.Sprintf(`{"name":%q}`, name)), Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestAuditRecoversDamagedSpools: a spool file a killed process left with a
// garbled line in it and a torn record at its end no longer stops the
// audit ("the line at byte … is not an audit record … move it out"): the
// records are recovered, the garbled line set aside, the torn end dropped,
// each recorded; verify and list succeed. A record a spool holds twice
// (written before records had ids) is in the log twice, and verify reports
// it.
func TestAuditRecoversDamagedSpools(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	spool := filepath.Join(data, "audit-spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	content := spoolLine(t, "c1", "one") + "not a record\n" + spoolLine(t, "c2", "two") + `{"callId":"c3","to`
	if err := os.WriteFile(filepath.Join(spool, "4242-dead.spool"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 0)
	if !strings.HasPrefix(r.stdout, "4 records, chain intact") {
		t.Errorf("verify: %s%s", r.stdout, r.stderr)
	}
	rs := auditRecords(t, environ)
	var got []string
	for _, rec := range rs {
		got = append(got, rec.CallID+rec.Kind)
	}
	if fmt.Sprint(got) != "[c1 recovery c2 recovery]" {
		t.Fatalf("records %v", got)
	}
	if !strings.Contains(rs[1].Note, "set aside in "+filepath.Join(spool, "4242-dead-at-")) || !strings.Contains(rs[3].Note, "dropped the last 18 bytes of the audit spool 4242-dead.spool") {
		t.Errorf("notes %q, %q", rs[1].Note, rs[3].Note)
	}
	if list := runCLIWith(t, environ, "", "", "audit").expect(t, 0); strings.Count(list.stdout, "(recovery)") != 2 {
		t.Errorf("audit list:\n%s", list.stdout)
	}

	twice := spoolLine(t, "c9", "nine")
	if err := os.WriteFile(filepath.Join(spool, "4243-dead.spool"), []byte(twice+twice), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, environ, "", "", "audit", "verify").expect(t, 1)
	if !strings.Contains(r.stdout, "6 records, chain intact") || !strings.Contains(r.stdout, "But 1 record repeats an earlier one (a call recorded twice):\n  record 6 repeats record 5 (call c9, the same call and content)") {
		t.Errorf("verify with a record twice:\n%s%s", r.stdout, r.stderr)
	}
}

// TestStartSaysWhereStateIs: serve and mcp say on stderr which store they
// use — the SQLite file, or the PostgreSQL URL without its password — and a
// --data that overrides a configured database is a one-line warning.
func TestStartSaysWhereStateIs(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	environ := sharedEnvironment(t, data)
	r := runCLIWith(t, environ, "", "", "mcp", "--workspace", t.TempDir())
	if want := "toolbelt: state in " + filepath.Join(data, "toolbelt.db") + " (SQLite)\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("mcp stderr lacks %q:\n%s", want, r.stderr)
	}
	pg := "postgres://tb:s3cret@127.0.0.1:1/toolbelt"
	r = runCLIWith(t, append(environ, envDatabaseURL+"="+pg, "PGCONNECT_TIMEOUT=1"), "", "", "mcp", "--workspace", t.TempDir())
	if want := "toolbelt: state in postgres://tb:xxxxx@127.0.0.1:1/toolbelt (PostgreSQL)\n"; !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "s3cret") {
		t.Errorf("mcp stderr lacks %q (or shows the password):\n%s", want, r.stderr)
	}
	conf := filepath.Join(t.TempDir(), "toolbelt.yaml")
	if err := os.WriteFile(conf, []byte("database: "+pg+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	r = runCLIWith(t, append(environ, "TOOLBELT_DATA="), "", "", "--config", conf, "--data", other, "mcp", "--workspace", t.TempDir())
	want := fmt.Sprintf("--data overrides database: in %s: state is kept in SQLite in %s, not in postgres://tb:xxxxx@127.0.0.1:1/toolbelt", conf, filepath.Join(other, "toolbelt.db"))
	if strings.Count(r.stderr, want) != 1 || !strings.Contains(r.stderr, "level=WARN") || strings.Contains(r.stderr, "s3cret") {
		t.Errorf("stderr does not warn once that --data overrides the database:\n%s", r.stderr)
	}
	cmd := exec.Command(os.Args[0], "serve", "--workspace", t.TempDir(), "--addr", "127.0.0.1:0")
	cmd.Env = environ
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() && !strings.Contains(sc.Text(), "Ctrl-C stops the server.") {
	}
	if want := "toolbelt: state in " + filepath.Join(data, "toolbelt.db") + " (SQLite)\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve stderr lacks %q:\n%s", want, stderr.String())
	}
}
