package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunAgainstReplayServers: toolbelt run reads a.txt through the pipeline
// for each provider's wire format; the second request carries the result
// in the provider's format with the call's id, and the answer is printed.
func TestRunAgainstReplayServers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spec  string
		body  func(string, string, ...llmtest.Call) string
		base  string // after the server's URL
		shape string // what the second request must hold
	}{
		{"anthropic/claude-test", llmtest.Anthropic, "", `"tool_use_id":"toolu_01A"`},
		{"openai/gpt-test", llmtest.Chat, "/v1", `"role":"tool","tool_call_id":"toolu_01A"`},
		{"openai-responses/gpt-test", llmtest.Responses, "/v1", `"call_id":"toolu_01A","output":`},
		{"google/gemini-test", llmtest.Gemini, "", `"functionResponse":{"name":"read","response":{"output":`},
		{"ollama/llama-test", llmtest.Chat, "/v1", `"role":"tool","tool_call_id":"toolu_01A"`},
	} {
		t.Run(c.spec, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("the treasure is under the oak\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := llmtest.New(t,
				llmtest.Response{Body: c.body("", "Let me read it.", llmtest.Call{ID: "toolu_01A", Name: "read", Args: `{"path": "a.txt"}`, Piece: 2}), Chunk: 9},
				llmtest.Response{Body: c.body("", "It says the treasure is under the oak.")})
			r := runCLI(t, "", "run", "--model", c.spec, "--base-url", s.URL+c.base, "--workspace", ws, "--json", "read a.txt and tell me what it says").expect(t, 0)
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			// apply_patch is offered to OpenAI's models only, as the seeds do.
			patch := strings.HasPrefix(c.spec, "openai")
			if got := strings.Contains(string(reqs[0].Body), `"apply_patch"`); got != patch {
				t.Errorf("apply_patch offered: %v, want %v", got, patch)
			}
			second := compactJSON(t, reqs[1].Body)
			if !strings.Contains(second, c.shape) || !strings.Contains(second, "the treasure is under the oak") {
				t.Errorf("second request lacks %s with the file's text:\n%s", c.shape, second)
			}
			var transcript []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
				t.Fatalf("stdout is not the transcript: %v\n%s", err, r.stdout)
			}
			if len(transcript) != 4 || transcript[0]["role"] != "user" || transcript[2]["role"] != "toolResult" || transcript[3]["role"] != "assistant" {
				t.Fatalf("transcript roles: %s", r.stdout)
			}
			var call map[string]any
			for _, b := range transcript[1]["content"].([]any) {
				if b := b.(map[string]any); b["type"] == "toolCall" {
					call = b
				}
			}
			if call["type"] != "toolCall" || call["name"] != "read" || call["arguments"].(map[string]any)["path"] != "a.txt" {
				t.Errorf("toolCall block %v", call)
			}
			if transcript[2]["toolCallId"] != call["id"] || transcript[2]["isError"] == true {
				t.Errorf("tool result %v", transcript[2])
			}
			last := transcript[3]["content"].([]any)[0].(map[string]any)
			if last["text"] != "It says the treasure is under the oak." {
				t.Errorf("answer %v", last)
			}
			if !strings.Contains(r.stderr, "read {") {
				t.Errorf("stderr does not show the call: %q", r.stderr)
			}
		})
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestRunPrintsAnswerAndEvents(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Hello there.")}, llmtest.Response{Body: llmtest.Chat("", "Hello again.")})
	r := runCLI(t, "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--system", "be kind", "hi").expect(t, 0)
	if r.stdout != "Hello there.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if body := compactJSON(t, s.Requests()[0].Body); !strings.Contains(body, `{"content":"be kind","role":"system"}`) {
		t.Errorf("system prompt not sent: %s", body)
	}
	r = runCLI(t, "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--events", "hi").expect(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var first, last map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if first["type"] != "agent_start" || last["type"] != "agent_end" || len(lines) < 6 {
		t.Errorf("events: %s", r.stdout)
	}
}

// TestRunRemovesTemporaryFilesOfInterruptedWrites: an agent run starts by
// removing the temporary files an interrupted write left in its workspace,
// and only those.
func TestRunRemovesTemporaryFilesOfInterruptedWrites(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	leftover := filepath.Join(ws, "sub", ".notes.txt.toolbelt-0123456789ab.tmp")
	mine := filepath.Join(ws, "notes.toolbelt.tmp")
	for _, p := range []string{leftover, mine} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("half a write"), 0o600); err != nil {
			t.Fatal(err)
		}
		backdate(t, p) // left by an earlier run
	}
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Hello there.")})
	runCLI(t, "", "run", "--model", "vllm/m", "--base-url", s.URL+"/v1", "--workspace", ws, "hi").expect(t, 0)
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the temporary file of an interrupted write is still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a file of another name was removed: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "hi"}, 2, "--model PROVIDER/MODEL"},
		{[]string{"run", "--model", "nope/x", "hi"}, 2, `unknown provider "nope"`},
		{[]string{"run", "--model", "ollama/x", "--json", "--events", "hi"}, 2, "give one"},
		{[]string{"run", "--model", "ollama/x", "--profile", "huge", "hi"}, 2, "unknown profile"},
		{[]string{"run", "--model", "ollama/x", "--base-url", "http://127.0.0.1:1/v1", "hi"}, 1, "connection refused"},
	} {
		r := runCLIWith(t, append(cliEnvironment(t), "TOOLBELT_MODEL="), "", "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: code %d, stderr %q; want %d, %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

// TestRunResumesSession: a second run with the same --session sends the
// first run's transcript (with its tool call and result) before the new
// prompt.
func TestRunResumesSession(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("first file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_S1", Name: "read", Args: `{"path":"a.txt"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "It says first file.")},
		llmtest.Response{Body: llmtest.Anthropic("", "You asked about a.txt.")})
	env := cliEnvironment(t)
	run := func(prompt string) cliResult {
		return runCLIWith(t, env, "", "", "run", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--session", "s1", prompt)
	}
	run("read a.txt").expect(t, 0)
	r := run("what did I ask before?").expect(t, 0)
	if r.stdout != "You asked about a.txt.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	third := compactJSON(t, s.Requests()[2].Body)
	for _, want := range []string{`"text":"read a.txt"`, `"tool_use_id":"toolu_S1"`, `"text":"first file\n"`, `"text":"It says first file."`, `"text":"what did I ask before?"`} {
		if !strings.Contains(third, want) {
			t.Errorf("resumed request lacks %s:\n%s", want, third)
		}
	}
}

// TestRunAcceptsClaudeCodeEditShape: a model that sends Claude Code's Read
// and Edit arguments (file_path, old_string, new_string) gets its edit
// made; the result says which shape was read.
func TestRunAcceptsClaudeCodeEditShape(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello world\nbye\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_R", Name: "Read", Args: `{"file_path":"a.txt"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_E", Name: "Edit", Args: `{"file_path":"a.txt","old_string":"world","new_string":"there","replace_all":false}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "Edited.")})
	r := runCLI(t, "", "run", "--model", "anthropic/x", "--base-url", s.URL, "--workspace", ws, "--yes", "--json", "say hello there").expect(t, 0)
	b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
	if string(b) != "hello there\nbye\n" {
		t.Fatalf("a.txt = %q\n%s", b, r.stdout)
	}
	var transcript []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatal(err)
	}
	d, _ := transcript[4]["details"].(map[string]any)
	if transcript[4]["isError"] == true || !strings.Contains(d["argumentsShape"].(string), "Claude Code Edit") {
		t.Errorf("result %v", transcript[4])
	}
	if third := compactJSON(t, s.Requests()[2].Body); !strings.Contains(third, `"tool_use_id":"toolu_E"`) || strings.Contains(third, `"is_error":true`) {
		t.Errorf("third request: %s", third)
	}
}

// TestRunWithConfiguredProvider: toolbelt.yaml's model and a provider entry
// based on a built-in one (its URL, headers with ${VAR}, quirks).
func TestRunWithConfiguredProvider(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "from the configured server")})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := "model: local/my-model\nproviders:\n  local:\n    base: vllm\n    url: " + s.URL + "/v1\n    headers:\n      X-Team: ${TB_TEST_TEAM}\n    noParallelCalls: true\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TOOLBELT_MODEL=", "TB_TEST_TEAM=blue")
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--workspace", dir, "hi").expect(t, 0)
	if r.stdout != "from the configured server\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	req := s.Requests()[0]
	if req.Header.Get("X-Team") != "blue" || req.Path != "/v1/chat/completions" || !strings.Contains(string(req.Body), `"model":"my-model"`) || !strings.Contains(string(req.Body), `"parallel_tool_calls":false`) {
		t.Errorf("request %s %v %s", req.Path, req.Header, req.Body)
	}
	// config check names an entry that is no provider, and a default model
	// whose provider does not exist.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("model: nowhere/m\nproviders:\n  mine:\n    url: http://127.0.0.1:1/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLIWith(t, env, "", "", "config", "check", bad)
	if r.code == 0 || !strings.Contains(r.stderr, "providers.mine is not a built-in provider: set base") || !strings.Contains(r.stderr, `names the provider "nowhere"`) {
		t.Errorf("config check: code %d, stderr %q", r.code, r.stderr)
	}
}

// TestRunOffersApplyPatchAsConfigured: tools.apply_patch.providers names
// the providers or models whose sessions are offered apply_patch; a model
// it does not name cannot call it either.
func TestRunOffersApplyPatchAsConfigured(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		providers, spec string
		offered         bool
	}{
		{"[anthropic]", "anthropic/claude-test", true},
		{"[anthropic/claude-test]", "anthropic/claude-test", true},
		{`["*"]`, "vllm/m", true},
		{"[anthropic]", "openai/gpt-test", false},
	} {
		t.Run(c.providers+" "+c.spec, func(t *testing.T) {
			t.Parallel()
			body, base := llmtest.Chat, "/v1"
			if strings.HasPrefix(c.spec, "anthropic") {
				body, base = llmtest.Anthropic, ""
			}
			dir := t.TempDir()
			cfg := filepath.Join(dir, "toolbelt.yaml")
			if err := os.WriteFile(cfg, []byte("tools:\n  apply_patch:\n    providers: "+c.providers+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := llmtest.New(t,
				llmtest.Response{Body: body("", "", llmtest.Call{ID: "call_P", Name: "apply_patch", Args: `{"patch": "*** Begin Patch\n*** Add File: p.txt\n+patched\n*** End Patch"}`})},
				llmtest.Response{Body: body("", "done")})
			runCLI(t, "", "--config", cfg, "run", "--model", c.spec, "--base-url", s.URL+base, "--workspace", dir, "--yes", "patch it").expect(t, 0)
			if got := strings.Contains(string(s.Requests()[0].Body), `"apply_patch"`); got != c.offered {
				t.Errorf("apply_patch offered: %v, want %v", got, c.offered)
			}
			_, err := os.Stat(filepath.Join(dir, "p.txt"))
			if ran := err == nil; ran != c.offered {
				t.Errorf("the call ran: %v, want %v", ran, c.offered)
			}
		})
	}
}

// TestRunCostFromConfiguredPrices: a built-in provider's entry with the
// model's prices; the transcript's usage carries the cost.
func TestRunCostFromConfiguredPrices(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "cheap")})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := "providers:\n  anthropic:\n    url: " + s.URL + "\n    prices:\n      claude-x: {input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLIWith(t, append(cliEnvironment(t), "ANTHROPIC_API_KEY="), "", "", "--config", cfg, "run", "--model", "anthropic/claude-x", "--workspace", dir, "--json", "hi").expect(t, 0)
	var transcript []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatal(err)
	}
	usage, _ := transcript[1]["usage"].(map[string]any)
	want := (120*3 + 42*15 + 30*0.3 + 10*3.75) / 1e6
	if cost, _ := usage["cost"].(float64); cost < want*0.999 || cost > want*1.001 {
		t.Errorf("usage %v, want cost %v", usage, want)
	}
}

// TestRunLoopDetection: a model that repeats the same call is warned on the
// third identical result and refused once five came back.
func TestRunLoopDetection(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var script []llmtest.Response
	for i := range 6 {
		script = append(script, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: fmt.Sprintf("call_%d", i), Name: "read", Args: `{"path":"a.txt"}`})})
	}
	script = append(script, llmtest.Response{Body: llmtest.Chat("", "giving up")})
	s := llmtest.New(t, script...)
	r := runCLI(t, "", "run", "--model", "openai/x", "--base-url", s.URL+"/v1", "--workspace", ws, "--json", "read a.txt forever").expect(t, 0)
	var transcript []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &transcript); err != nil {
		t.Fatal(err)
	}
	text := func(i int) string {
		var b strings.Builder
		for _, c := range transcript[i]["content"].([]any) {
			b.WriteString(c.(map[string]any)["text"].(string))
		}
		return b.String()
	}
	// user, then (assistant, result) × 6: results at 2, 4, …, 12.
	if strings.Contains(text(4), "Warning") || !strings.Contains(text(6), "[Warning: this is the 3rd identical call to read") {
		t.Errorf("third result: %q", text(6))
	}
	if !strings.Contains(text(12), "You have called read with these same arguments 5 times") || transcript[12]["isError"] != true {
		t.Errorf("sixth result: %q", text(12))
	}
}

// TestRunMarksHowEachCallEnded: without a terminal, toolbelt run shows on
// stderr how each call ended — ran, failed (with the tool's error) or
// blocked (with the pipeline's reason and, only for a call that needed an
// approval nobody could give, how to approve it) — and the answer alone
// on stdout.
func TestRunMarksHowEachCallEnded(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, "tools:\n  ask: [{tool: test_greet, when: {name: \"root*\"}}]\n  deny: [test_page]\n")
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "",
			llmtest.Call{ID: "call_1", Name: "test_greet", Args: `{"name":"Ada"}`},
			llmtest.Call{ID: "call_2", Name: "test_fail", Args: `{}`},
			llmtest.Call{ID: "call_3", Name: "test_greet", Args: `{"name":"root"}`},
			llmtest.Call{ID: "call_4", Name: "test_page", Args: `{"chars":10}`})},
		llmtest.Response{Body: llmtest.Chat("", "Done.")})
	r := runCLI(t, "", "--config", cfg, "run", "--model", "openai/x", "--base-url", s.URL+"/v1", "--workspace", t.TempDir(), "greet Ada and root").expect(t, 0)
	if r.stdout != "Done.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	for _, want := range []string{
		"→ test_greet {\"name\":\"Ada\"}\n",
		"✓ test_greet ran: Hello, Ada.\n",
		"✗ test_fail failed: the disk is full\n",
		"✗ test_page blocked: Tool test_page is not allowed here (global: deny test_page).\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The reason is the pipeline's; the hint follows it on a line of its own.
	blocked := regexp.MustCompile(`(?m)^✗ test_greet blocked: [^\n]*approval[^\n]*root\*[^\n]*\n` + regexp.QuoteMeta(needsApprovalHint) + "\n")
	if !blocked.MatchString(r.stderr) {
		t.Errorf("stderr lacks the blocked call, its reason and how to approve it:\n%s", r.stderr)
	}
	if n := strings.Count(r.stderr, needsApprovalHint); n != 1 {
		t.Errorf("the approval hint shows %d times, want once (not for the denied call):\n%s", n, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\r\x1b") {
		t.Errorf("a spinner drew on stderr, which is no terminal: %q", r.stderr)
	}
}

// TestRunPromptFromStdin: toolbelt run - sends what stdin holds as the
// prompt; an empty stdin is an empty prompt, refused.
func TestRunPromptFromStdin(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "Noted.")})
	r := runCLI(t, "what the pipe\nsays", "run", "--model", "openai/gpt-test", "--base-url", s.URL+"/v1", "--workspace", ws, "-").expect(t, 0)
	reqs := s.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `what the pipe\nsays`) {
		t.Fatalf("the request does not carry stdin as the prompt (%d requests): %s", len(reqs), reqs)
	}
	if !strings.Contains(r.stdout, "Noted.") {
		t.Errorf("stdout %q", r.stdout)
	}
	r = runCLI(t, "", "run", "--model", "openai/gpt-test", "--base-url", s.URL+"/v1", "--workspace", ws, "-").expect(t, 2)
	if !strings.Contains(r.stderr, "the prompt is empty") {
		t.Errorf("an empty stdin: %q", r.stderr)
	}
}

// TestRunImageWithTheRunsModel: with no model in toolbelt.yaml, the image
// tool analyzes with the run's own --model (a providers: entry's), the
// agent loop and the tool talking to the same replayed server in turn.
func TestRunImageWithTheRunsModel(t *testing.T) {
	t.Parallel()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "image", Args: `{"image":"dot.png","prompt":"What colour is it?"}`})},
		llmtest.Response{Body: llmtest.Chat("", "A blue dot.")}, // the image tool's request
		llmtest.Response{Body: llmtest.Chat("", "The dot is blue.")},
	)
	dir := t.TempDir()
	dot, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAGUlEQVR42mNgWHvjP0V41IBRA0YNGC4GAADcloQfy01I0gAAAABJRU5ErkJggg==")
	cfg := filepath.Join(dir, "toolbelt.yaml")
	for name, data := range map[string][]byte{"dot.png": dot, "toolbelt.yaml": []byte("providers:\n  local: {base: openai, url: " + s.URL + "/v1}\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(cliEnvironment(t), "TOOLBELT_MODEL=")
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--yes", "--model", "local/vis", "--workspace", dir, "What colour is the dot?").expect(t, 0)
	if r.stdout != "The dot is blue.\n" {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the loop's two and the tool's one", len(reqs))
	}
	if tool := string(reqs[1].Body); !strings.Contains(tool, `"model":"vis"`) || !strings.Contains(tool, "What colour is it?") || !strings.Contains(tool, "data:image/png;base64,") {
		t.Errorf("the image tool's request: %s", tool)
	}
	if last := string(reqs[2].Body); !strings.Contains(last, "A blue dot.") {
		t.Errorf("the loop's last request lacks the tool's answer: %s", last)
	}
}
