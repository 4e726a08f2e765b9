package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// writeToolFolder makes the folder of a directory tool, dir, holding files
// (name to content) written with perm.
func writeToolFolder(t *testing.T, dir string, perm os.FileMode, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), perm); err != nil {
			t.Fatal(err)
		}
	}
}

// dirToolsEnv is a CLI environment whose toolbelt.yaml loads the example
// tools and a folder of misbehaving tools, plus extra YAML; it returns the
// environment, the workspace and the folder where handlers leave their
// process ids.
func dirToolsEnv(t *testing.T, extraYAML string) (env []string, ws, pids string) {
	t.Helper()
	examples, err := filepath.Abs("../../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	ws, pids, bad := filepath.Join(base, "ws"), filepath.Join(base, "pids"), filepath.Join(base, "bad")
	for _, d := range []string{ws, pids, bad} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	badTool := func(name, script string, extra string) {
		dir := filepath.Join(bad, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		md := `{"name": "` + name + `", "description": "A misbehaving test tool."` + extra + `}`
		if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "handler.sh"), []byte("cat >/dev/null\necho $$ > "+filepath.Join(pids, name)+"\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	badTool("bad_hang", "sleep 300", `, "timeout": 1`)
	badTool("bad_wait", "sleep 300", "")
	badTool("bad_text", "echo 'this is not JSON'", "")
	badTool("bad_crash", "kill -SEGV $$", "")
	badTool("bad_large", "head -c 5000000 /dev/zero | tr '\\0' x", "")
	badTool("bad_meta", "true", `, "riskLevl": "low"`)
	cfg := filepath.Join(base, "toolbelt.yaml")
	yaml := "workspace: " + ws + "\ntools:\n  dirs:\n    - path: " + examples + "\n      trusted: true\n    - path: " + bad + "\n      trusted: true\n" + extraYAML
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(cliEnvironment(t), "TOOLBELT_CONFIG="+cfg), ws, pids
}

// handlerGone waits for the handler whose pid is in file to be gone.
func handlerGone(t *testing.T, file string) bool {
	t.Helper()
	var pid int
	for range 500 {
		if b, err := os.ReadFile(file); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatalf("the handler never wrote %s", file)
	}
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return false
}

func TestDirectoryToolsThroughTheCLI(t *testing.T) {
	t.Parallel()
	env, ws, pids := dirToolsEnv(t, "")

	r := runCLIWith(t, env, "", "", "list", "--section", "directory").expect(t, 0)
	for _, want := range []string{"text_stats", "sys_info", "clean_cache", "(directory tool: ", "examples/tools/text_stats)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "bad_meta") || !strings.Contains(r.stderr, "skipped a directory tool") ||
		!strings.Contains(r.stderr, `unknown field \"riskLevl\"; did you mean \"riskLevel\"?`) {
		t.Errorf("the broken tool is not reported and skipped:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}

	r = runCLIWith(t, env, "", "", "describe", "clean_cache").expect(t, 0)
	for _, want := range []string{"risk", "high", "This permanently deletes files", "source", "directory (", "examples/tools/clean_cache)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}

	r = runCLIWith(t, env, "", "", "call", "text_stats", "--args", `{"text": "the cat and the hat", "top": 1}`, "--json").expect(t, 0)
	var msg struct {
		Content []struct{ Text string }
		Details map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	res, _ := msg.Details["result"].(map[string]any)
	if res["words"] != 5.0 || msg.Details["summary"] != "5 words, 1 lines" || !strings.Contains(msg.Content[0].Text, `"word": "the"`) {
		t.Errorf("text_stats = %s", r.stdout)
	}

	// A schema error: the handler never runs.
	r = runCLIWith(t, env, "", "", "call", "text_stats", "--args", `{"top": 0}`).expect(t, 1)
	if !strings.Contains(r.stderr, "text") || !strings.Contains(r.stderr, "top") {
		t.Errorf("schema error = %s", r.stderr)
	}

	// The high-risk tool: blocked without someone to ask, runs with --yes.
	cache := filepath.Join(ws, ".cache", "build")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "a.o"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, "", "", "call", "clean_cache").expect(t, 1)
	if _, err := os.Stat(filepath.Join(cache, "a.o")); err != nil {
		t.Fatalf("clean_cache ran without approval: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "Blocked: ") {
		t.Errorf("unapproved clean_cache = %s / %s", r.stdout, r.stderr)
	}
	r = runCLIWith(t, env, "", "", "call", "clean_cache", "--yes").expect(t, 0)
	if !strings.Contains(r.stdout, "deleted 1 files (5 bytes) from .cache") {
		t.Errorf("clean_cache --yes = %s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(cache, "a.o")); err == nil {
		t.Error("clean_cache --yes left the file")
	}

	// Misbehaving handlers.
	for _, c := range []struct{ tool, want string }{
		{"bad_hang", "Tool bad_hang timed out after 1 s"},
		{"bad_text", "did not answer with one JSON object"},
		{"bad_crash", "was killed by SIGSEGV"},
		{"bad_large", "printed more than 4194304 bytes and was stopped"},
	} {
		r := runCLIWith(t, env, "", "", "call", c.tool, "--yes").expect(t, 1)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s = %s, want %q", c.tool, r.stderr, c.want)
		}
	}
	if !handlerGone(t, filepath.Join(pids, "bad_hang")) {
		t.Error("the timed-out handler is still running")
	}
}

func TestDirectoryToolCancelledByInterrupt(t *testing.T) {
	t.Parallel()
	env, _, pids := dirToolsEnv(t, "")
	cmd := exec.Command(os.Args[0], "call", "bad_wait", "--yes")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out strings.Builder
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(pids, "bad_wait")
	for range 1000 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	if !strings.Contains(out.String(), "Tool bad_wait was cancelled") {
		t.Errorf("output = %q", out.String())
	}
	if !handlerGone(t, pidFile) {
		t.Error("the handler outlived the interrupted call")
	}
}

func TestCommandHooksThroughTheCLI(t *testing.T) {
	t.Parallel()
	env, _, _ := dirToolsEnv(t, `hooks:
  before:
    - name: no-secrets
      tools: [text_stats]
      command: "grep -q password && { echo 'the text holds a password' >&2; exit 2; } || exit 0"
`)
	r := runCLIWith(t, env, "", "", "call", "text_stats", "--args", `{"text": "my password is swordfish"}`).expect(t, 1)
	if !strings.Contains(r.stderr, "the text holds a password") {
		t.Errorf("blocked call = %s", r.stderr)
	}
	runCLIWith(t, env, "", "", "call", "text_stats", "--args", `{"text": "nothing to see"}`).expect(t, 0)
}

// TestCommandHooksChangeAndObserveThroughTheCLI: a before hook matched by a
// glob changes the arguments (the handler gets them), an after hook
// matched by a group observes the call as it ran, and a hook that runs
// out of time blocks the call (fail closed).
func TestCommandHooksChangeAndObserveThroughTheCLI(t *testing.T) {
	t.Parallel()
	seen := filepath.Join(t.TempDir(), "after.json")
	env, _, _ := dirToolsEnv(t, `hooks:
  before:
    - name: cap-top
      tools: ["text_*"]
      command: "echo '{\"params\": {\"top\": 1}}'"
    - name: slow
      tools: [sys_info]
      command: "sleep 30"
      timeout: 200ms
  after:
    - tools: [group:directory]
      command: "cat > `+seen+`"
`)
	r := runCLIWith(t, env, "", "", "call", "text_stats", "--args", `{"text": "a b a c", "top": 3}`, "--json").expect(t, 0)
	var msg struct{ Details map[string]any }
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if res, _ := msg.Details["result"].(map[string]any); res == nil || len(res["top"].([]any)) != 1 {
		t.Errorf("the before hook's arguments did not reach the handler: %s", r.stdout)
	}
	var after struct {
		Event, Tool string
		Params      map[string]any
		Result      struct{ IsError bool }
	}
	b, err := os.ReadFile(seen)
	if err != nil || json.Unmarshal(b, &after) != nil || after.Event != "after_tool_call" || after.Tool != "text_stats" || after.Params["top"] != 1.0 || after.Result.IsError {
		t.Errorf("the after hook read %s (%v)", b, err)
	}
	r = runCLIWith(t, env, "", "", "call", "sys_info").expect(t, 1)
	if !strings.Contains(r.stderr, "Tool call blocked because before_tool_call hook failed") {
		t.Errorf("a timed-out hook did not block: %s", r.stderr)
	}
}

func TestToolNewCheckTry(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	dir := t.TempDir()
	for _, lang := range []string{"sh", "python", "node", "go"} {
		name := "hello_" + lang
		r := runCLIWith(t, env, dir, "", "tool", "new", name, "--lang", lang).expect(t, 0)
		// The scaffold's own test passes, run as the message says.
		if !strings.Contains(r.stdout, "test it:       (cd tools/"+name+" && "+langs[lang].test+")") {
			t.Errorf("new %s does not say how to test it: %s", lang, r.stdout)
		}
		test := exec.Command("sh", "-c", langs[lang].test)
		test.Dir, test.Env = filepath.Join(dir, "tools", name), env
		if out, err := test.CombinedOutput(); err != nil {
			t.Errorf("the test of the %s scaffold fails: %v\n%s", lang, err, out)
		}
		r = runCLIWith(t, env, dir, "", "tool", "check", filepath.Join("tools", name)).expect(t, 0)
		if !strings.Contains(r.stdout, "is a valid directory tool") {
			t.Errorf("check %s = %s", lang, r.stdout)
		}
		r = runCLIWith(t, env, dir, "", "tool", "try", filepath.Join("tools", name), "--args", `{"name": "Ada"}`, "--yes").expect(t, 0)
		if !strings.Contains(r.stdout, "Hello, Ada!") {
			t.Errorf("try %s = %s / %s", lang, r.stdout, r.stderr)
		}
	}
	r := runCLIWith(t, env, dir, "", "tool", "new", "hello_sh").expect(t, 2)
	if !strings.Contains(r.stderr, "already exists") {
		t.Errorf("second new = %s", r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools", "hello_sh", "metadata.json"), []byte(`{"name": "hello_sh", "description": "x", "timeout": "soon"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, dir, "", "tool", "check", filepath.Join("tools", "hello_sh")).expect(t, 2)
	if !strings.Contains(r.stderr, `metadata.json:1: field "timeout" must be a number, not string`) {
		t.Errorf("check of a broken tool = %s", r.stderr)
	}
}

func TestDirectoryToolsOverMCP(t *testing.T) {
	t.Parallel()
	env, _, pids := dirToolsEnv(t, "")
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		progress []string
	)
	client := sdk.NewClient(&sdk.Implementation{Name: "dirtools-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%s %g %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Message))
			mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*sdk.Tool{}
	for _, tt := range list.Tools {
		found[tt.Name] = tt
	}
	if found["text_stats"] == nil || found["clean_cache"] == nil || found["bad_meta"] != nil {
		t.Fatalf("tools/list = %v", found)
	}
	if a := found["clean_cache"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("clean_cache annotations = %+v", found["clean_cache"].Annotations)
	}

	params := &sdk.CallToolParams{Name: "text_stats", Arguments: map[string]any{"text": "a b a"}}
	params.SetProgressToken("stats-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError || !strings.Contains(textOf(res), "3 words, 1 lines") {
		t.Fatalf("text_stats: %v %q", err, textOf(res))
	}
	// The handler's progress lines on stderr arrive as progress notifications
	// (which the client may handle after the result).
	var got string
	for ctx.Err() == nil {
		mu.Lock()
		got = strings.Join(progress, "\n")
		mu.Unlock()
		if strings.Contains(got, "ranking words") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(got, "stats-1 1 10% counting") || !strings.Contains(got, "stats-1 2 60% ranking words") {
		t.Errorf("progress notifications = %q", got)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "text_stats", Arguments: map[string]any{"top": 3}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "text") {
		t.Errorf("schema error: %v %q", err, textOf(res))
	}
	// This client cannot be asked, so the high-risk call is blocked.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "clean_cache", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "blocked") {
		t.Errorf("clean_cache: %v %q", err, textOf(res))
	}
	for _, c := range []struct{ tool, want string }{
		{"bad_text", "did not answer with one JSON object"},
		{"bad_crash", "was killed by SIGSEGV"},
		{"bad_hang", "timed out after 1 s"},
		{"bad_large", "printed more than 4194304 bytes and was stopped"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(textOf(res), c.want) {
			t.Errorf("%s: %v %q, want %q", c.tool, err, textOf(res), c.want)
		}
	}

	// Cancelling the request stops the handler.
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(cctx, &sdk.CallToolParams{Name: "bad_wait", Arguments: map[string]any{}})
	}()
	pidFile := filepath.Join(pids, "bad_wait")
	for range 1000 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ccancel()
	<-done
	if !handlerGone(t, pidFile) {
		t.Error("the handler outlived the cancelled MCP request")
	}
}

// TestDirectoryToolConfirmationOverMCP: an MCP client that can ask its
// user is shown the high-risk example's confirmation message; the call
// runs when the user allows it and not when they decline.
func TestDirectoryToolConfirmationOverMCP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer *sdk.ElicitResult
		ran    bool
	}{
		{"allowed", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, true},
		{"declined", &sdk.ElicitResult{Action: "decline"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env, ws, _ := dirToolsEnv(t, "")
			cached := filepath.Join(ws, ".cache", "a.o")
			if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cached, []byte("12345"), 0o644); err != nil {
				t.Fatal(err)
			}
			var asked []string
			client := sdk.NewClient(&sdk.Implementation{Name: "confirm-test", Version: "1"}, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return c.answer, nil
				},
			})
			cmd := exec.Command(os.Args[0], "mcp")
			cmd.Env = env
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "clean_cache", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || !strings.Contains(asked[0], "This permanently deletes files in the workspace's .cache folder") {
				t.Errorf("the user was asked %q", asked)
			}
			_, statErr := os.Stat(cached)
			if ran := statErr != nil; ran != c.ran || res.IsError == c.ran {
				t.Errorf("ran = %v (isError %v: %q), want ran = %v", ran, res.IsError, textOf(res), c.ran)
			}
			if c.ran && !strings.Contains(textOf(res), "deleted 1 files (5 bytes) from .cache") {
				t.Errorf("clean_cache = %q", textOf(res))
			}
		})
	}
}

func TestMCPHotReloadsDirectoryTools(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tools := filepath.Join(base, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(base, "toolbelt.yaml")
	if err := os.WriteFile(cfg, []byte("workspace: "+base+"\ntools:\n  dirs:\n    - path: tools\n      trusted: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = append(cliEnvironment(t), "TOOLBELT_CONFIG="+cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	changed := make(chan struct{}, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "reload-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	has := func(name string) bool { return listsTool(ctx, t, cs, name) }
	if has("fresh") {
		t.Fatal("fresh is listed before it exists")
	}
	dir := filepath.Join(tools, "fresh")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.sh"), []byte(`cat >/dev/null; echo '{"success": true, "result": "fresh!"}'`), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(`{"name": "fresh", "description": "Added while serving.", "readOnly": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after a tool folder was added")
	}
	for !has("fresh") {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("fresh never appeared in tools/list")
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "fresh", Arguments: map[string]any{}})
	if err != nil || res.IsError || textOf(res) != "fresh!" {
		t.Errorf("fresh: %v %q", err, textOf(res))
	}
}

// TestWorkspaceToolsOnlyWhenConfigured: a workspace's own tools/ folder is
// not loaded by default, and when listed its tools are untrusted and not
// taken at their word (never low risk, read-only, or in a section or
// profile of their choosing).
func TestWorkspaceToolsOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	dir := filepath.Join(ws, "tools", "ws_tool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := `{"name": "ws_tool", "description": "Claims to be harmless.", "riskLevel": "low", "readOnly": true, "section": "fs", "profiles": ["minimal"]}`
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.sh"), []byte(`cat >/dev/null; echo '{"success": true}'`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cliEnvironment(t)
	r := runCLIWith(t, env, ws, "", "list", "--json").expect(t, 0)
	if strings.Contains(r.stdout, "ws_tool") {
		t.Fatalf("the workspace's tools folder was loaded without being configured:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "the workspace's tools folder holds directory tools that were not loaded") {
		t.Errorf("nothing says the workspace's tools were not loaded: %s", r.stderr)
	}
	if err := os.WriteFile(filepath.Join(ws, "toolbelt.yaml"), []byte("tools:\n  dirs: [./tools]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, ws, "", "describe", "ws_tool", "--json").expect(t, 0)
	var d struct {
		Meta struct {
			Risk     string   `json:"risk"`
			ReadOnly bool     `json:"readOnly"`
			Section  string   `json:"section"`
			Profiles []string `json:"profiles"`
			Source   string   `json:"source"`
		} `json:"meta"`
		Dir       string `json:"dir"`
		Untrusted string `json:"untrusted"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if d.Meta.Risk != "medium" || d.Meta.ReadOnly || d.Meta.Section != "directory" || len(d.Meta.Profiles) != 0 || d.Meta.Source != "directory" ||
		!strings.HasSuffix(d.Dir, filepath.Join("tools", "ws_tool")) || !strings.Contains(d.Untrusted, "which the agent can write") {
		t.Errorf("a workspace tool is taken at its word: %s", r.stdout)
	}
	if err := os.WriteFile(filepath.Join(ws, "toolbelt.yaml"), []byte("tools:\n  dirs:\n    - path: ./tools\n      trusted: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, ws, "", "describe", "ws_tool", "--json").expect(t, 0)
	if !strings.Contains(r.stdout, `"risk": "low"`) {
		t.Errorf("trusted: true does not trust the folder: %s", r.stdout)
	}
}

// TestUserConfigToolsLoadByDefault: without tools.dirs, the tools in
// toolbelt/tools of the user's config directory are loaded, trusted (the
// agent cannot write there), and marked with their folder.
func TestUserConfigToolsLoadByDefault(t *testing.T) {
	t.Parallel()
	env := cliEnvironment(t)
	var cfgHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			cfgHome = v
		}
	}
	dir := filepath.Join(cfgHome, "toolbelt", "tools", "user_tool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := `{"name": "user_tool", "description": "A tool of the user's own.", "riskLevel": "low", "readOnly": true}`
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.sh"), []byte(`cat >/dev/null; echo '{"success": true, "result": "mine"}'`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	r := runCLIWith(t, env, ws, "", "describe", "user_tool", "--json").expect(t, 0)
	if !strings.Contains(r.stdout, `"risk": "low"`) || !strings.Contains(r.stdout, `"source": "directory"`) || !strings.Contains(r.stdout, filepath.Join("toolbelt", "tools", "user_tool")) {
		t.Errorf("describe user_tool = %s", r.stdout)
	}
	r = runCLIWith(t, env, ws, "", "call", "user_tool").expect(t, 0)
	if strings.TrimSpace(r.stdout) != "mine" {
		t.Errorf("call user_tool = %q", r.stdout)
	}
	if err := os.WriteFile(filepath.Join(ws, "toolbelt.yaml"), []byte("tools:\n  dirs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCLIWith(t, env, ws, "", "describe", "user_tool").expect(t, 2)
}

// TestAsyncExampleThroughRunAndMCP: the async example reminder (a polling
// tool) runs as a job: toolbelt run waits for it and hands its result to
// the model; over MCP the call answers a pending envelope and job_status
// reads the result once the job is done.
func TestAsyncExampleThroughRunAndMCP(t *testing.T) {
	t.Parallel()
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		env, ws, _ := dirToolsEnv(t, "")
		if r := runCLIWith(t, env, "", "", "tool", "check", "../../examples/tools/reminder").expect(t, 0); !strings.Contains(r.stdout, "  async    polling every 1s\n") {
			t.Errorf("tool check reminder = %s", r.stdout)
		}
		s := llmtest.New(t,
			llmtest.Response{Body: llmtest.Anthropic("", "Setting it.", llmtest.Call{ID: "toolu_01R", Name: "reminder", Args: `{"message": "take the tea out", "seconds": 1}`})},
			llmtest.Response{Body: llmtest.Anthropic("", "I will remind you.")},
			llmtest.Response{Body: llmtest.Anthropic("", "Time to take the tea out!")})
		r := runCLIWith(t, env, "", "", "run", "--model", "anthropic/claude-test", "--base-url", s.URL, "--workspace", ws, "remind me of the tea in a second").expect(t, 0)
		if !strings.Contains(r.stdout, "Time to take the tea out!") {
			t.Errorf("stdout = %q", r.stdout)
		}
		reqs := s.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3 (call, turn end, follow-up)", len(reqs))
		}
		if second := compactJSON(t, reqs[1].Body); !strings.Contains(second, `\"status\":\"pending\"`) {
			t.Errorf("the tool result is not the pending envelope:\n%s", second)
		}
		if third := compactJSON(t, reqs[2].Body); !strings.Contains(third, "of reminder completed.]") || !strings.Contains(third, "Reminder: take the tea out") {
			t.Errorf("the follow-up lacks the job's result:\n%s", third)
		}
	})
	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		env, _, _ := dirToolsEnv(t, "")
		cmd := exec.Command(os.Args[0], "mcp")
		cmd.Env = env
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "reminder-test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "reminder", Arguments: map[string]any{"message": "stretch", "seconds": 1}})
		if err != nil || res.IsError {
			t.Fatalf("reminder: %v %q", err, textOf(res))
		}
		var pending struct{ Status, TaskID string }
		if err := json.Unmarshal([]byte(textOf(res)), &pending); err != nil || pending.Status != "pending" || pending.TaskID == "" {
			t.Fatalf("not a pending envelope: %q", textOf(res))
		}
		for {
			st, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "job_status", Arguments: map[string]any{"taskId": pending.TaskID}})
			if err != nil {
				t.Fatal(err)
			}
			if s := textOf(st); strings.Contains(s, "(reminder): completed") {
				if !strings.Contains(s, "Result: Reminder: stretch") {
					t.Errorf("job_status = %s", s)
				}
				break
			} else if !strings.Contains(s, "(reminder): pending") && !strings.Contains(s, "(reminder): processing") {
				t.Fatalf("job_status = %s", s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// TestDirectoryToolSettingsThroughTheCLI: a directory tool's settings in
// toolbelt.yaml are checked against the schema its metadata.json declares,
// by config check and at every start, each problem at its line; settings
// that match reach the handler in its request.
func TestDirectoryToolSettingsThroughTheCLI(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeToolFolder(t, filepath.Join(base, "tools", "notes"), 0o755, map[string]string{
		"metadata.json": `{"name": "notes", "description": "Echoes its request.", "settings": {"type": "object", "properties": {
			"baseUrl": {"type": "string"}, "maxItems": {"type": "integer", "minimum": 1}}}}`,
		"handler.sh": `printf '{"success":true,"result":%s}' "$(cat)"`,
	})
	config := func(settings string) []string {
		cfg := filepath.Join(base, "toolbelt.yaml")
		yaml := "workspace: ws\ntools:\n  dirs:\n    - path: tools\n      trusted: true\n  notes:\n" + settings
		if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return append(cliEnvironment(t), "TOOLBELT_CONFIG="+cfg)
	}

	env := config("    baseUrll: http://127.0.0.1:9/api\n    maxItems: 0\n")
	want := base + "/toolbelt.yaml:7:5: tools.notes.baseUrll: unknown key; did you mean \"baseUrl\"?\n" + base + "/toolbelt.yaml:8:15: tools.notes.maxItems is 0: minimum: got 0, want at least 1\n"
	for _, args := range [][]string{{"config", "check"}, {"call", "notes", "--args", "{}"}} {
		r := runCLIWith(t, env, "", "", args...).expect(t, 2)
		if !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%v: stderr %q, want it to end with %q", args, r.stderr, want)
		}
	}

	env = config("    baseUrl: http://127.0.0.1:9/api\n    maxItems: 2\n")
	runCLIWith(t, env, "", "", "config", "check").expect(t, 0)
	r := runCLIWith(t, env, "", "", "call", "notes", "--args", "{}", "--json").expect(t, 0)
	var msg struct {
		Details struct {
			Result struct {
				Settings map[string]any `json:"settings"`
			} `json:"result"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &msg); err != nil || fmt.Sprint(msg.Details.Result.Settings) != "map[baseUrl:http://127.0.0.1:9/api maxItems:2]" {
		t.Errorf("the handler got settings %v (%v): %s", msg.Details.Result.Settings, err, r.stdout)
	}
}
