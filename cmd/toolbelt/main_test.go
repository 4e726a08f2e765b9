package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"github.com/toolbelt/toolbelt/tools"
)

// cliEnv, when set, makes the test binary run as the toolbelt CLI with the
// test tools registered, so tests run the real command in a real process.
const cliEnv = "TOOLBELT_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		e := processEnv(testTools)
		e.wrapBridge = stopAfter(os.Getenv(stopEnv))
		os.Exit(run(os.Args[1:], e))
	}
	if os.Getenv(hostileServerEnv) == "1" {
		os.Exit(serveHostile())
	}
	// A binary built with -race sleeps a second before it exits; the
	// processes the tests start (this binary again) need not.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	// No goroutine of a command run in-process outlives the tests.
	goleak.VerifyTestMain(m)
}

// testTools is the core registry plus tools only the tests use.
func testTools() (*registry.Registry, io.Closer) {
	reg, closer := tools.Core()
	type greetArgs struct {
		Name    string `json:"name" jsonschema:"Who to greet" minLength:"1"`
		Excited bool   `json:"excited,omitempty" jsonschema:"End with an exclamation mark"`
	}
	greet := tool.Must(tool.New("test_greet", "Greets someone by name.", func(_ context.Context, in greetArgs, _ tool.Invocation) (tool.Result, error) {
		end := "."
		if in.Excited {
			end = "!"
		}
		return tool.Textf("Hello, %s%s", in.Name, end), nil
	}))
	greet.Meta = tool.Meta{Section: "messaging", ReadOnly: true, Timeout: 5 * time.Second}
	type sleepArgs struct {
		MS int `json:"ms" minimum:"0" maximum:"5000"`
	}
	sleep := tool.Must(tool.New("test_sleep", "Sleeps, then says how long.", func(ctx context.Context, in sleepArgs, _ tool.Invocation) (tool.Result, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return tool.Textf("slept %d ms", in.MS), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}))
	fail := tool.Must(tool.New("test_fail", "Always fails.", func(context.Context, struct{}, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, errors.New("the disk is full")
	}))
	type dangerArgs struct {
		Target string `json:"target"`
	}
	danger := tool.Must(tool.New("test_danger", "Deletes a target (for the tests: only says so).", func(_ context.Context, in dangerArgs, _ tool.Invocation) (tool.Result, error) {
		return tool.Textf("deleted %s", in.Target), nil
	}))
	danger.Meta = tool.Meta{Risk: tool.RiskHigh, Destructive: true}
	danger.Preview = func(_ context.Context, call tool.Call, tc *tool.Context) (tool.Effects, error) {
		var in dangerArgs
		_ = json.Unmarshal(call.Arguments, &in)
		return tool.Effects{Summary: "delete " + in.Target, Command: "rm -rf " + in.Target, Workdir: tc.Workspace}, nil
	}
	type pageArgs struct {
		Chars int  `json:"chars" minimum:"1" maximum:"100000"`
		Fail  bool `json:"fail,omitempty"`
	}
	// test_page stands for a tool of another server that reaches the
	// world: imported, its text is from outside.
	page := tool.Must(tool.New("test_page", "Returns a page of text from the world (for the tests: made up, with an injection in it).", func(_ context.Context, in pageArgs, _ tool.Invocation) (tool.Result, error) {
		return tool.Result{Content: []tool.Content{{Type: tool.TextContent, Text: untrustedPage(in.Chars)}}, IsError: in.Fail}, nil
	}))
	page.Meta = tool.Meta{ReadOnly: true, OpenWorld: true}
	for _, t := range []tool.Tool{greet, sleep, fail, danger, page} {
		if err := reg.Register(t); err != nil {
			panic(err)
		}
	}
	if err := reg.RegisterFactory(func(*tool.Context) (*tool.Tool, error) {
		return nil, errors.New("needs a database: none is configured")
	}, tool.Meta{ID: "test_db", Section: "memory", Label: "Database"}); err != nil {
		panic(err)
	}
	return reg, closer
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the CLI in a child process with stdin as its standard input.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLIWith(t, cliEnvironment(t), "", stdin, args...)
}

// runCLIWith runs the CLI in a child process with the environment env, in
// the directory dir ("" for this one), without a controlling terminal.
func runCLIWith(t *testing.T, env []string, dir, stdin string, args ...string) cliResult {
	t.Helper()
	return cliUser{}.run(t, env, dir, stdin, args...)
}

// cliUser is who the CLI's child process runs as: the test binary at bin
// ("" for this one) as the user cred (nil for this process's).
type cliUser struct {
	bin  string
	cred *syscall.Credential
}

// run is runCLIWith as u.
func (u cliUser) run(t *testing.T, env []string, dir, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmp.Or(u.bin, os.Args[0]), args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	// A session of its own: no controlling terminal to ask on, whatever
	// terminal the tests run at.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: u.cred}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running the CLI: %v", err)
	}
	return cliResult{out.String(), errOut.String(), code}
}

// configuredCLI returns a function that runs the CLI with the environment
// env and the configuration file cfg, and fails the test unless it exits
// with code.
func configuredCLI(t *testing.T, env []string, cfg string) func(code int, args ...string) cliResult {
	return func(code int, args ...string) cliResult {
		t.Helper()
		return runCLIWith(t, env, "", "", append([]string{"--config", cfg}, args...)...).expect(t, code)
	}
}

// mustJSON returns v as JSON text, failing the test when it cannot.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// backdate sets a file's times an hour back, as a file left by an earlier
// run has them.
func backdate(t *testing.T, path string) {
	t.Helper()
	earlier := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, earlier, earlier); err != nil {
		t.Fatal(err)
	}
}

// cliEnvironment runs the CLI as the test binary, with state and config in
// the test's own temporary directories, never the user's.
func cliEnvironment(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	return append(os.Environ(), cliEnv+"=1", "NO_COLOR=1", "TOOLBELT_DATA="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "TOOLBELT_DATABASE_URL=", "TOOLBELT_CONFIG=")
}

func (r cliResult) expect(t *testing.T, code int) cliResult {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

func TestList(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "list", "--include", "test_db,test_greet,test_fail,test_sleep").expect(t, 0)
	for _, want := range []string{
		"Memory (memory)\n  test_db     Database    medium  unavailable: needs a database: none is configured\n",
		"Messaging (messaging)\n  test_greet  Test Greet  low     available\n",
		"Other ()\n  test_fail   Test Fail   medium  available\n  test_sleep  Test Sleep  medium  available",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, " tools, ") || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("summary or colors:\n%s", r.stdout)
	}
	// The list shows tools as a pipeline offers them: result_read reads the
	// outputs every pipeline keeps.
	r = runCLI(t, "", "list", "--include", "result_read").expect(t, 0)
	if !strings.Contains(r.stdout, "result_read  Read Full Result  low  available") {
		t.Errorf("result_read is not listed as available:\n%s", r.stdout)
	}
}

func TestListJSON(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "list", "--json", "--include", "test_greet,group:memory").expect(t, 0)
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	byID := map[string]map[string]any{}
	for _, m := range got {
		byID[m["id"].(string)] = m
	}
	// group:memory holds the memory tools too, available in a workspace.
	if len(got) != 4 || byID["memory_search"]["available"] != true || byID["memory_get"]["available"] != true {
		t.Fatalf("got %d tools: %s", len(got), r.stdout)
	}
	db, greet := byID["test_db"], byID["test_greet"]
	for _, k := range []string{"id", "label", "description", "section", "profiles", "risk", "available", "unavailableReason"} {
		if _, ok := greet[k]; !ok {
			t.Errorf("key %q missing: %v", k, greet)
		}
	}
	if db["id"] != "test_db" || db["available"] != false || db["unavailableReason"] != "needs a database: none is configured" {
		t.Errorf("db: %v", db)
	}
	if greet["id"] != "test_greet" || greet["available"] != true || greet["risk"] != "low" || greet["section"] != "messaging" || greet["description"] != "Greets someone by name." {
		t.Errorf("greet: %v", greet)
	}
	// Filters narrow the list; exclusion wins.
	r = runCLI(t, "", "list", "--json", "--section", "messaging", "--exclude", "test_greet").expect(t, 0)
	if strings.Contains(r.stdout, "test_greet") {
		t.Errorf("excluded tool listed: %s", r.stdout)
	}
}

func TestListUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--profile", "everything"}, `unknown profile "everything": use one of minimal, coding, messaging, full`},
		{[]string{"list", "--include", "test_gret"}, "no tool or group matches test_gret"},
		{[]string{"list", "--section", "kitchen"}, `unknown section "kitchen"`},
		{[]string{"list", "--frobnicate"}, "unknown flag --frobnicate"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		r := runCLI(t, "", tc.args...).expect(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr %q, want %q", tc.args, r.stderr, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "describe", "test_greet").expect(t, 0)
	for _, want := range []string{"test_greet — Test Greet", "Greets someone by name.", "risk     low", "flags    read-only, idempotent", "timeout  5s", "Parameters:", `"description": "Who to greet"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "", "describe", "test_greet", "--json").expect(t, 0)
	var d struct {
		Meta       tool.Meta      `json:"meta"`
		Parameters map[string]any `json:"parameters"`
		Available  bool           `json:"available"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if d.Meta.ID != "test_greet" || d.Meta.Timeout != 5*time.Second || !d.Available || d.Parameters["type"] != "object" {
		t.Errorf("%+v", d)
	}
	r = runCLI(t, "", "describe", "test_db").expect(t, 0)
	if !strings.Contains(r.stdout, "unavailable: needs a database") || strings.Contains(r.stdout, "Parameters:") {
		t.Errorf("unavailable tool:\n%s", r.stdout)
	}
	r = runCLI(t, "", "describe", "test_gret").expect(t, 2)
	if !strings.Contains(r.stderr, `no tool is named "test_gret"; did you mean test_greet`) {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args.json")
	if err := os.WriteFile(argsFile, []byte(`{"name":"File"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"args", "", []string{"call", "test_greet", "--args", `{"name":"Ada","excited":true}`}, 0, "Hello, Ada!\n", ""},
		{"stdin", `{"name":"Stdin"}`, []string{"call", "test_greet"}, 0, "Hello, Stdin.\n", ""},
		{"file", "", []string{"call", "test_greet", "--args-file", argsFile}, 0, "Hello, File.\n", ""},
		{"file on stdin", `{"name":"Dash"}`, []string{"call", "test_greet", "--args-file", "-"}, 0, "Hello, Dash.\n", ""},
		{"string arguments", "", []string{"call", "test_greet", "--args", `"{\"name\":\"Str\"}"`}, 0, "Hello, Str.\n", ""},
		{"no arguments", "", []string{"call", "test_sleep", "--args", `{"ms":1}`}, 0, "slept 1 ms\n", ""},
		{"tool error", "", []string{"call", "test_fail"}, 1, "", "the disk is full\n"},
		{"validation", "", []string{"call", "test_greet", "--args", `{"name":""}`}, 1, "", "  - name: minLength: got 0 characters, want at least 1"},
		{"unknown tool", "", []string{"call", "test_gret", "--args", `{}`}, 1, "", `Tool "test_gret" not found. Did you mean "test_greet"?`},
		{"unavailable", "", []string{"call", "test_db"}, 1, "", "not available here: needs a database"},
		{"no tool", "", []string{"call"}, 2, "", "name the tool to call, or give --batch FILE"},
		{"args twice", "", []string{"call", "test_greet", "--args", "{}", "--args-file", argsFile}, 2, "", "--args or --args-file, not both"},
		{"missing file", "", []string{"call", "test_greet", "--args-file", filepath.Join(dir, "nope.json")}, 2, "", "no such file"},
		{"bad workspace", "", []string{"call", "test_greet", "--workspace", filepath.Join(dir, "nope")}, 2, "", "no such file or directory"},
		{"timeout", "", []string{"call", "test_sleep", "--args", `{"ms":5000}`, "--timeout", "200ms"}, 1, "", "Tool test_sleep timed out after 0.2 s."},
		{"negative timeout", "", []string{"call", "test_sleep", "--timeout=-1s"}, 2, "", "must not be negative"},
		{"max result chars", "", []string{"call", "test_greet", "--args", `{"name":"` + strings.Repeat("n", 200) + `"}`, "--max-result-chars", "200"}, 0,
			"Hello, " + strings.Repeat("n", 93) + "\n[... 108 more characters truncated. The full output is kept: call result_read with {\"callId\":\"c\",\"limit\":100,\"offset\":100} to read them.]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, tc.stdin, append(tc.args, "--id", "c")...).expect(t, tc.code)
			if tc.stdout != "" && r.stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tc.stdout)
			}
			if tc.stderr != "" && !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", r.stderr, tc.stderr)
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "call", "test_greet", "--args", `{"name":"Ada"}`, "--json", "--id", "toolu_01").expect(t, 0)
	var msg tool.ResultMessage
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Role != "toolResult" || msg.ToolCallID != "toolu_01" || msg.ToolName != "test_greet" || msg.IsError ||
		len(msg.Content) != 1 || msg.Content[0].Text != "Hello, Ada." || msg.Timestamp == 0 {
		t.Errorf("%+v", msg)
	}
	r = runCLI(t, "", "call", "test_fail", "--json").expect(t, 1)
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil || !msg.IsError || !regexp.MustCompile(`^cli_[0-9a-hjkmnp-tv-z]{18}$`).MatchString(msg.ToolCallID) {
		t.Errorf("%v %+v", err, msg)
	}
}

func TestCallBatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	batch := filepath.Join(dir, "batch.json")
	// The first call finishes last; results still come back in input order.
	if err := os.WriteFile(batch, []byte(`[
		{"id": "a", "name": "test_sleep", "arguments": {"ms": 300}},
		{"id": "b", "name": "test_greet", "arguments": "{\"name\":\"Bob\"}"},
		{"id": "c", "name": "test_sleep", "arguments": {"ms": 50}},
		{"name": "test_greet", "arguments": {"name": "NoID"}}
	]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "call", "--batch", batch).expect(t, 0)
	var msgs []tool.ResultMessage
	if err := json.Unmarshal([]byte(r.stdout), &msgs); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	want := [][2]string{{"a", "slept 300 ms"}, {"b", "Hello, Bob."}, {"c", "slept 50 ms"}, {"cli_", "Hello, NoID."}}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, w := range want {
		// A call without an id gets a new one.
		if id := msgs[i].ToolCallID; id != w[0] && !(w[0] == "cli_" && strings.HasPrefix(id, w[0]) && len(id) == 22) || msgs[i].Content[0].Text != w[1] {
			t.Errorf("message %d: %s %q, want %v", i, msgs[i].ToolCallID, msgs[i].Content[0].Text, w)
		}
	}
	// One failing call makes the exit code 1; the others still run.
	r = runCLI(t, `[{"id":"x","name":"test_fail"},{"id":"y","name":"test_greet","arguments":{"name":"Y"}}]`, "call", "--batch", "-").expect(t, 1)
	if err := json.Unmarshal([]byte(r.stdout), &msgs); err != nil || !msgs[0].IsError || msgs[1].IsError {
		t.Errorf("%v %s", err, r.stdout)
	}
	for _, tc := range []struct{ stdin, want string }{
		{`{"id":"x"}`, "want a JSON array"},
		{`[{"id":"x","name":""}]`, "call 0 has no name"},
		{`[{"id":"x","name":"test_fail"},{"id":"x","name":"test_fail"}]`, `call id "x" is used twice`},
	} {
		r = runCLI(t, tc.stdin, "call", "--batch", "-").expect(t, 2)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("stderr %q, want %q", r.stderr, tc.want)
		}
	}
	r = runCLI(t, "", "call", "test_greet", "--batch", batch).expect(t, 2)
	if !strings.Contains(r.stderr, "--batch takes its calls from FILE") {
		t.Error(r.stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "version").expect(t, 0)
	if !strings.HasPrefix(r.stdout, "toolbelt ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("version: %q", r.stdout)
	}
	r = runCLI(t, "", "--help").expect(t, 0)
	if !strings.Contains(r.stdout, "Usage: toolbelt <command>") {
		t.Errorf("help: %q", r.stdout)
	}
	runCLI(t, "").expect(t, 0) // the overview
}

// early makes the tools once, before they are asked for, and hands the same
// registry and closer to the one who asks.
func TestEarlyMakesTheToolsOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reg := registry.New()
	closer := io.NopCloser(nil)
	made := make(chan struct{})
	get := early(func() (*registry.Registry, io.Closer) {
		calls.Add(1)
		close(made)
		return reg, closer
	})
	<-made // started without being asked
	gotReg, gotCloser := get()
	again, _ := get()
	if gotReg != reg || gotCloser != closer || again != reg || calls.Load() != 1 {
		t.Errorf("got %p %v (again %p), want %p %v; made %d times", gotReg, gotCloser, again, reg, closer, calls.Load())
	}
}

// collectLessAtStart raises the GC percent and bounds the heap with a
// memory limit until restored, then puts both back as they were.
func TestCollectLessAtStart(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	restore := collectLessAtStart()
	if p := debug.SetGCPercent(startGCPercent); p != startGCPercent {
		t.Errorf("GC percent during the start %d, want %d", p, startGCPercent)
	}
	if l := debug.SetMemoryLimit(-1); l != startMemoryLimit {
		t.Errorf("memory limit during the start %d, want %d", l, startMemoryLimit)
	}
	t.Setenv("GOGC", "")
	p := restore()
	if p2 := restore(); p2 != p {
		t.Error("the start's pace ended twice")
	}
	// After the start, the collector keeps gcHeadroom (internal/gcpace).
	if p == nil {
		t.Error("no pacing of the collector after the start")
	}
	p.Stop()
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Errorf("memory limit after the start %d, want %d", l, int64(1<<40))
	}
}
