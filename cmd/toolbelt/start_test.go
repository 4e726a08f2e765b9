package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/store"
)

// TestMCPAnswersBeforeTheStoreIsOpen: toolbelt mcp opens its store in the
// background, so it answers initialize and tools/list while another
// process holds the database exclusively (the store could not even be
// read); a call that needs the store waits for it and succeeds once the
// database is free, and its audit record is kept.
func TestMCPAnswersBeforeTheStoreIsOpen(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	var data string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TOOLBELT_DATA="); ok {
			data = v
		}
	}
	path := filepath.Join(data, store.DefaultFile)
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// An exclusive lock (locking_mode EXCLUSIVE, taken by a write and kept
	// while the connection is open) that keeps even readers out.
	uri := (&url.URL{Scheme: "file", Path: path}).String() + "?_pragma=locking_mode(EXCLUSIVE)"
	lock, err := sql.Open("sqlite", uri)
	if err != nil {
		t.Fatal(err)
	}
	lock.SetMaxOpenConns(1)
	if _, err := lock.Exec("CREATE TABLE IF NOT EXISTS held (x)"); err != nil {
		t.Fatal(err)
	}
	release := func() {
		if lock != nil {
			lock.Close()
			lock = nil
		}
	}
	defer release()

	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "mcp", "--workspace", ws)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	replies := bufio.NewScanner(out)
	replies.Buffer(nil, 16<<20)
	reply := func() string {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: %v\n%s", replies.Err(), stderr.String())
		}
		return replies.Text()
	}
	send := func(s string) {
		t.Helper()
		if _, err := in.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := reply(); !strings.Contains(r, `"id":1,"result"`) {
		t.Fatalf("initialize: %s", r)
	}
	if r := reply(); !strings.Contains(r, `"id":2,"result"`) || !strings.Contains(r, `"name":"write"`) {
		t.Fatalf("tools/list: %.300s", r)
	}
	// Answered with the database held; now a call, then let it go.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.txt","content":"done"}}}`)
	release()
	var w wireReply
	if err := json.Unmarshal([]byte(reply()), &w); err != nil || w.Result == nil || w.Result.IsError {
		t.Fatalf("the write: %+v %v\n%s", w, err, stderr.String())
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("toolbelt mcp: %v\n%s", err, stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "done" {
		t.Errorf("a.txt: %q %v", b, err)
	}
	recs := auditRecords(t, env)
	if len(recs) != 1 || recs[0].Tool != "write" {
		t.Errorf("audit records %+v", recs)
	}
}

// TestCompactAboveCounts: mcp.compactAbove turns compact mode on by itself
// when the tools outnumber it, and only then (the start counts the tools
// only when this setting decides).
func TestCompactAboveCounts(t *testing.T) {
	t.Parallel()
	list := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	for above, compactOn := range map[int]bool{5: true, 100000: false} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "toolbelt.yaml")
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("mcp:\n  compactAbove: %d\n", above)), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runCLIWith(t, cliEnvironment(t), "", list, "--config", cfg, "mcp", "--workspace", dir).expect(t, 0)
		var names []string
		for l := range strings.Lines(r.stdout) {
			var reply struct {
				ID     int `json:"id"`
				Result struct {
					Tools []struct{ Name string } `json:"tools"`
				} `json:"result"`
			}
			if json.Unmarshal([]byte(l), &reply) == nil && reply.ID == 2 {
				for _, tl := range reply.Result.Tools {
					names = append(names, tl.Name)
				}
			}
		}
		got := len(names) == 3 && slices.Contains(names, "tool_search")
		if got != compactOn {
			t.Errorf("compactAbove %d: tools %v", above, names)
		}
	}
}

// TestCopiedLibrariesStartLight: the initialisers of the two libraries
// toolbelt keeps patched copies of (internal/jsonschema and
// internal/readability, see their PATCHES.md) allocate next to nothing, as
// every toolbelt command runs them before main: the copies compile their
// meta-schemas and regular expressions on first use. Upstream's allocated
// 1.7 MB and 261 KB in every start. The test runs this test binary, which
// links both, with GODEBUG=inittrace=1 and no test, and reads the heap
// each initialiser allocated.
func TestCopiedLibrariesStartLight(t *testing.T) {
	t.Parallel()
	const most = 64 << 10
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GODEBUG=inittrace=1 %s: %v\n%s", os.Args[0], err, out)
	}
	// init PACKAGE @0.5 ms, 0.2 ms clock, 9512 bytes, 159 allocs
	line := regexp.MustCompile(`(?m)^init (\S+) @.* clock, (\d+) bytes, \d+ allocs$`)
	heap := map[string]int{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		heap[m[1]], _ = strconv.Atoi(m[2])
	}
	for _, pkg := range []string{"github.com/toolbelt/toolbelt/internal/jsonschema", "github.com/toolbelt/toolbelt/internal/readability"} {
		allocated, ok := heap[pkg]
		switch {
		case !ok:
			t.Errorf("no initialiser of %s in the trace:\n%s", pkg, out)
		case allocated > most:
			t.Errorf("%s's initialiser allocated %d bytes, more than %d: does it compile at init again?", pkg, allocated, most)
		}
	}
}

// TestMCPStartsWhileImportsStart: toolbelt mcp starts the servers it
// imports first and opens the rest while they start. The imported server
// here starts only once the importing one has made its audit spool (the
// rest is open) and answered initialize (the test says so by creating a
// file): waiting for the import before either would leave it stuck until
// its connect timeout, and its tools missing. tools/list waits for the
// import and lists its tools.
func TestMCPStartsWhileImportsStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, answered := filepath.Join(dir, "data"), filepath.Join(dir, "initialize-answered")
	gate := filepath.Join(dir, "gate")
	if err := os.WriteFile(gate, []byte("#!/bin/sh\nwhile [ ! -e \"$1\" ] || [ ! -e \"$2\" ]; do sleep 0.02; done\nshift 2\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`mcpServers:
  self:
    command: %q
    args: [%q, %q, %q, mcp, --workspace, %q]
    env: {%s: "1", TOOLBELT_DATA: %q, XDG_CONFIG_HOME: %q, NO_COLOR: "1", GORACE: "atexit_sleep_ms=0"}
`, gate, filepath.Join(data, "audit-spool"), answered, os.Args[0], workspaceWith(t), cliEnv, filepath.Join(dir, "inner-data"), filepath.Join(dir, "config")))
	cmd := exec.Command(os.Args[0], "--config", cfg, "mcp", "--workspace", workspaceWith(t))
	cmd.Env = append(cliEnvironment(t), "TOOLBELT_DATA="+data)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "start-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := os.WriteFile(answered, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "self__read") || !slices.Contains(names, "read") {
		t.Errorf("tools/list lacks the imported self__read or the built-in read: %v", names)
	}
}
