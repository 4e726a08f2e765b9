package toolbelt_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt"
	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/config"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/mcp/compact"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

// seedExample is one of the seeds' examples of a call and its result
// (the documents the project was created from; docs/seeds.md lists each with this test's name).
type seedExample struct {
	name  string // the subtest: seed and section
	yaml  string // toolbelt.yaml
	tools []tool.Tool
	dirs  map[string]string // directory tools' files (folder/file → text), in tools.dirs
	files map[string][]byte // put in the workspace before the call
	// confirm answers the person's question, when the call asks one.
	confirm func(invoke.Confirmation) invoke.Answer
	call    func(ws string) llmtest.Call
	check   func(t *testing.T, msg map[string]any, text string)
	// after, when set, checks the workspace once the call ran.
	after func(t *testing.T, ws string)
	// register, when set, adds tools to the root's registry (factories).
	register func(reg *registry.Registry) error
	// compact runs the agent in compact mode (docs/compact.md), as toolbelt
	// run --compact does; prompt, when set, checks the model's first request.
	compact bool
	prompt  func(t *testing.T, first []byte)
}

// seedMainTS is the file seed 004 reads (§3.1).
const seedMainTS = "// main.ts\nimport { createServer } from 'http';\n\ncreateServer().listen(8080);\n"

type greetArgs struct {
	Name string `json:"name" jsonschema:"Who to greet"`
}

// seedGreet is seed 003's first example: a tool registered as a value.
var seedGreet = tool.Must(tool.New("greet", "Say hello to someone", func(_ context.Context, in greetArgs, _ tool.Invocation) (tool.Result, error) {
	return tool.Text("Hello, " + in.Name + "!"), nil
}))

// The seed 002 directory tool's metadata.json and schema.json, as the seed
// shows them, and a handler answering as its handler.ts does.
const (
	seedImageMeta = `{
  "name": "generate_image",
  "description": "Generate high-quality images",
  "version": "1.0.0",
  "category": "media",
  "riskLevel": "low",
  "timeout": 60,
  "requiresConfirmation": false,
  "async": false,
  "estimatedTime": 15
}`
	seedImageSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "description": "Image description"},
    "size": {"type": "string", "enum": ["256x256", "512x512", "1024x1024"], "default": "512x512"},
    "style": {"type": "string", "enum": ["natural", "vivid"], "default": "vivid"}
  },
  "required": ["prompt"]
}`
	seedImageHandler = `cat >/dev/null
printf '{"success": true, "result": {"imageUrl": "https://images.example/sunset.png", "size": "512x512", "format": "png", "prompt": "a beautiful sunset"}, "summary": "Generated image: a beautiful sunset..."}'
`
)

var seedExamples = []seedExample{
	{name: "004-read", // §2.1 the call, §3.1 its result
		files: map[string][]byte{"main.ts": []byte(seedMainTS)},
		call: func(ws string) llmtest.Call {
			return llmtest.Call{ID: "call_abc123", Name: "read", Args: `{"file_path": "` + filepath.Join(ws, "main.ts") + `", "offset": 0, "limit": 200}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			if msg["isError"] != false || !strings.HasPrefix(text, "// main.ts\nimport { createServer } from 'http';") {
				t.Errorf("read from offset 0 = %q (isError %v), want the file from its first line", text, msg["isError"])
			}
		}},
	{name: "004-camelCase", // §6.1: filePath is file_path
		files: map[string][]byte{"main.ts": []byte(seedMainTS)},
		call: func(ws string) llmtest.Call {
			return llmtest.Call{ID: "call_abc123", Name: "read", Args: `{"filePath": "` + filepath.Join(ws, "main.ts") + `"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			if msg["isError"] != false || !strings.HasPrefix(text, "// main.ts\n") {
				t.Errorf("read {filePath} = %q, want the file", text)
			}
		}},
	{name: "004-claude-edit", // §6.2: Claude Code's edit {file_path, old_string, new_string}
		files:   map[string][]byte{"main.ts": []byte(seedMainTS)},
		confirm: func(invoke.Confirmation) invoke.Answer { return invoke.Answer{Allow: true, By: "test"} },
		call: func(ws string) llmtest.Call {
			return llmtest.Call{ID: "toolu_01", Name: "edit", Args: `{"file_path": "` + filepath.Join(ws, "main.ts") + `", "old_string": "8080", "new_string": "3000"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			if msg["isError"] != false {
				t.Errorf("edit {file_path, old_string, new_string} = %q", text)
			}
		},
		after: func(t *testing.T, ws string) {
			if b, _ := os.ReadFile(filepath.Join(ws, "main.ts")); !strings.Contains(string(b), "listen(3000)") {
				t.Errorf("main.ts after the edit:\n%s", b)
			}
		}},
	{name: "004-error", // §3.2
		call: func(string) llmtest.Call { return llmtest.Call{ID: "call_abc123", Name: "exec", Args: `{}`} },
		check: func(t *testing.T, msg map[string]any, text string) {
			var env map[string]any
			if err := json.Unmarshal([]byte(text), &env); err != nil || msg["isError"] != true || env["status"] != "error" || env["tool"] != "exec" || !strings.Contains(env["error"].(string), "command") {
				t.Errorf("exec without a command = %s (isError %v), want the envelope {status: error, tool: exec, error: …command…}", text, msg["isError"])
			}
		}},
	{name: "004-image", // §3.3, and seed 001's imageResult
		files: map[string][]byte{"screenshot.png": seedPNG()},
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_abc123", Name: "read", Args: `{"path": "screenshot.png"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			blocks := seedList(msg["content"])
			if len(blocks) != 2 || text != "MEDIA:screenshot.png" {
				t.Fatalf("content %v, want MEDIA:screenshot.png and the image", blocks)
			}
			img := seedObj(blocks[1])
			if img["type"] != "image" || img["mimeType"] != "image/png" || !strings.HasPrefix(img["data"].(string), "iVBORw0KGgo") {
				t.Errorf("second block %v, want {type: image, data: iVBORw0KGgo…, mimeType: image/png}", img)
			}
			if seedObj(msg["details"])["path"] != "screenshot.png" {
				t.Errorf("details %v, want the path", msg["details"])
			}
		}},
	{name: "004-blocked", // §8.2: a before_tool_call hook blocks
		yaml:    "hooks:\n  before:\n    - tools: [exec]\n      command: |\n        cat >/dev/null; printf '%s' '{\"decision\":\"block\",\"reason\":\"Tool blocked by policy: safe-bin mode\"}'\n",
		confirm: func(invoke.Confirmation) invoke.Answer { return invoke.Answer{Allow: true, By: "test"} },
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_abc123", Name: "exec", Args: `{"command": "ls"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			var env map[string]any
			if err := json.Unmarshal([]byte(text), &env); err != nil || msg["isError"] != true || env["status"] != "blocked" || env["tool"] != "exec" || !strings.Contains(fmt.Sprint(env["reason"]), "Tool blocked by policy: safe-bin mode") {
				t.Errorf("exec a hook blocks = %s (isError %v), want {status: blocked, tool: exec, reason: the hook's}", text, msg["isError"])
			}
		}},
	{name: "004-denied", // §8.2's envelope when policy denies
		yaml: "tools:\n  deny: [exec]\n",
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_abc123", Name: "exec", Args: `{"command": "ls"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			var env map[string]any
			if err := json.Unmarshal([]byte(text), &env); err != nil || msg["isError"] != true || env["status"] != "blocked" || env["tool"] != "exec" || env["reason"] == nil {
				t.Errorf("a denied exec = %s (isError %v), want the envelope {status: blocked, tool: exec, reason}", text, msg["isError"])
			}
		}},
	{name: "003-greet", // registry.register's example
		tools: []tool.Tool{seedGreet},
		call:  func(string) llmtest.Call { return llmtest.Call{ID: "toolu_01", Name: "greet", Args: `{"name": "Ada"}`} },
		check: func(t *testing.T, msg map[string]any, text string) {
			if text != "Hello, Ada!" || msg["isError"] != false {
				t.Errorf("greet = %q, want Hello, Ada!", text)
			}
		}},
	{name: "003-read", // "for standalone use": read {path: "src/index.ts"}
		files: map[string][]byte{"src/index.ts": []byte("export const answer = 42;\n")},
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_2", Name: "read", Args: `{"path": "src/index.ts"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			if text != "export const answer = 42;\n" {
				t.Errorf("read src/index.ts = %q, want the file's text", text)
			}
		}},
	{name: "001-cron-status", // pattern B: jsonResult(cron.status)
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_1", Name: "cron", Args: `{"action": "status"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			// jsonResult: the payload as JSON indented by two spaces, and
			// the same payload as details.
			details, _ := json.MarshalIndent(msg["details"], "", "  ")
			var payload any
			if err := json.Unmarshal([]byte(text), &payload); err != nil || msg["isError"] != false || !strings.HasPrefix(text, "{\n  \"") {
				t.Fatalf("cron status = %s, want jsonResult's indented JSON", text)
			}
			again, _ := json.MarshalIndent(payload, "", "  ")
			if string(again) != string(details) {
				t.Errorf("details %s differ from the text's payload %s", details, again)
			}
		}},
	{name: "002-directory-tool", // the MCP execution flow's call of generate_image
		dirs: map[string]string{"generate_image/metadata.json": seedImageMeta, "generate_image/schema.json": seedImageSchema, "generate_image/handler.sh": seedImageHandler},
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_1", Name: "generate_image", Args: `{"prompt": "a beautiful sunset", "size": "512x512"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			// The model sees the summary first, then the result; details
			// keep both, as the seed's handler returned them.
			if msg["isError"] != false || !strings.HasPrefix(text, "Generated image: a beautiful sunset...") || !strings.Contains(text, `"imageUrl": "https://images.example/sunset.png"`) {
				t.Errorf("generate_image = %q, want its summary, then its result", text)
			}
			d := seedObj(msg["details"])
			if d["summary"] != "Generated image: a beautiful sunset..." || seedObj(d["result"])["imageUrl"] != "https://images.example/sunset.png" || seedObj(d["result"])["size"] != "512x512" {
				t.Errorf("details %v, want the handler's result and summary", d)
			}
		}},
	{name: "003-workspace-info", // registry.registerFactory's example
		register: func(reg *registry.Registry) error {
			return reg.RegisterFactory(func(tc *tool.Context) (*tool.Tool, error) {
				return &tool.Tool{
					Name: "workspace_info", Description: "Returns the workspace directory",
					Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
					Execute: func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
						return tool.Text(cmp.Or(tc.Workspace, "(none)")), nil
					},
				}, nil
			}, tool.Meta{ID: "workspace_info", Label: "Workspace Info", Description: "Returns the workspace directory",
				Section: "custom", Profiles: []string{"full"}, Source: tool.SourceCore})
		},
		call: func(string) llmtest.Call { return llmtest.Call{ID: "toolu_02", Name: "workspace_info", Args: `{}`} },
		check: func(t *testing.T, msg map[string]any, text string) {
			// The factory made the tool for the call's context: the
			// text is the root's workspace.
			if fi, err := os.Stat(text); err != nil || !fi.IsDir() || !filepath.IsAbs(text) || msg["isError"] != false {
				t.Errorf("workspace_info = %q, want the workspace directory", text)
			}
		}},
	{name: "002-compact", // MCP mode: names and brief descriptions in the prompt; the call runs locally, validated; a summary comes back
		compact: true,
		dirs:    map[string]string{"generate_image/metadata.json": seedImageMeta, "generate_image/schema.json": seedImageSchema, "generate_image/handler.sh": seedImageHandler},
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_1", Name: "tool_call", Args: `{"name": "generate_image", "arguments": {"prompt": "a beautiful sunset", "size": "512x512"}}`}
		},
		prompt: func(t *testing.T, first []byte) {
			var req struct {
				System string `json:"system"`
				Tools  []struct {
					Name string `json:"name"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(first, &req); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range req.Tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, ",") != "tool_call,tool_describe,tool_search" {
				t.Errorf("the model was offered %v, want the three tools only", names)
			}
			// "Prompt only includes: tool name list, brief description".
			if !strings.Contains(req.System, "\n- generate_image: Generate high-quality images") {
				t.Errorf("the system prompt does not list generate_image with its brief description: %.2000s", first)
			}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			// {toolName, summary, status: "completed"}: the summary first,
			// isError false.
			if msg["isError"] != false || !strings.HasPrefix(text, "Generated image: a beautiful sunset...") {
				t.Errorf("tool_call generate_image = %q, want the handler's summary first", text)
			}
		}},
	{name: "002-high-risk", // a high-risk tool's confirmation, declined
		dirs: map[string]string{"delete_file/metadata.json": seedDeleteMeta, "delete_file/handler.sh": "cat >/dev/null\nprintf '{\"success\": true}'\n"},
		confirm: func(c invoke.Confirmation) invoke.Answer {
			if c.Message != "This operation will permanently delete the file and cannot be recovered. Continue?" || c.Tool != "delete_file" {
				return invoke.Answer{Reason: "asked the wrong question: " + c.Message}
			}
			return invoke.Answer{Reason: "keep the file", By: "test"}
		},
		call: func(string) llmtest.Call {
			return llmtest.Call{ID: "call_1", Name: "delete_file", Args: `{"path": "notes.txt"}`}
		},
		check: func(t *testing.T, msg map[string]any, text string) {
			var env map[string]any
			if err := json.Unmarshal([]byte(text), &env); err != nil || msg["isError"] != true || env["status"] != "blocked" || !strings.Contains(fmt.Sprint(env["reason"]), "keep the file") {
				t.Errorf("a declined delete_file = %s, want the blocked envelope with the person's reason", text)
			}
		}},
}

// seedDeleteMeta is seed 002's high-risk tool, with the description every
// tool needs.
const seedDeleteMeta = `{
  "name": "delete_file",
  "description": "Delete a file.",
  "riskLevel": "high",
  "requiresConfirmation": true,
  "confirmationMessage": "This operation will permanently delete the file and cannot be recovered. Continue?",
  "destructive": true
}`

// seedPNG is a small PNG (blueDot's bytes).
func seedPNG() []byte {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(blueDot, "data:image/png;base64,"))
	if err != nil {
		panic(err)
	}
	return b
}

// TestSeedExamples replays each of the seeds' examples of a call and its
// result: a model (llmtest's replay server, Anthropic's wire) makes the
// seed's call, the real tool answers through the pipeline of a root, and
// the result message in the transcript has the seed's shape —
// {role: "toolResult", toolCallId, toolName, content, details, isError,
// timestamp} — and the content the seed shows.
func TestSeedExamples(t *testing.T) {
	t.Setenv("TOOLBELT_MODEL", "")
	for _, ex := range seedExamples {
		t.Run(ex.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, b := range ex.files {
				p := filepath.Join(ws, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			yaml := ex.yaml
			if ex.dirs != nil {
				dirs := t.TempDir()
				for name, text := range ex.dirs {
					p := filepath.Join(dirs, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				yaml = "tools:\n  dirs: [{path: " + dirs + "}]\n" + yaml
			}
			c := ex.call(ws)
			var confirm invoke.Confirmer
			if ex.confirm != nil {
				confirm = invoke.ConfirmFunc(func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) { return ex.confirm(c), nil })
			}
			msg := replaySeedCall(t, yaml, ws, ex, confirm, c)
			for key, want := range map[string]any{"role": "toolResult", "toolCallId": c.ID, "toolName": c.Name} {
				if msg[key] != want {
					t.Errorf("%s = %v, want %v", key, msg[key], want)
				}
			}
			if _, ok := msg["isError"].(bool); !ok {
				t.Errorf("isError missing: %v", msg)
			}
			if ts, _ := msg["timestamp"].(float64); ts <= 0 {
				t.Errorf("timestamp %v", msg["timestamp"])
			}
			blocks := seedList(msg["content"])
			if len(blocks) == 0 || seedObj(blocks[0])["type"] != "text" {
				t.Fatalf("content %v, want a text block first", msg["content"])
			}
			ex.check(t, msg, seedObj(blocks[0])["text"].(string))
			if ex.after != nil {
				ex.after(t, ws)
			}
		})
	}
}

// replaySeedCall opens a root on ws with yaml, tools and confirm, runs an agent
// whose model makes call and then answers, and returns the call's result
// message as the transcript writes it.
func replaySeedCall(t *testing.T, yaml, ws string, ex seedExample, confirm invoke.Confirmer, call llmtest.Call) map[string]any {
	t.Helper()
	cfg, err := config.Parse("toolbelt.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := toolbelt.Open(context.Background(), toolbelt.Options{Config: cfg, Workspace: ws, DataDir: t.TempDir(), Tools: ex.tools, Confirm: confirm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close(context.Background()) })
	if ex.register != nil {
		if err := ex.register(tb.Registry()); err != nil {
			t.Fatal(err)
		}
	}
	r, err := tb.Runner(tool.Identity{Channel: "test", Owner: true})
	if err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "I'll do that.", call)}, llmtest.Response{Body: llmtest.Anthropic("", "Done.")})
	c, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: s.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	a := &agent.Agent{Client: c, Runner: r}
	if ex.compact {
		// As toolbelt run --compact sets the agent up: the three tools in
		// front of the runner, the tools listed in the system prompt.
		cm := compact.New(r, compact.Options{Summaries: cfg.Tools.Summaries})
		front := registry.New()
		for _, ct := range cm.Tools() {
			if err := front.Register(ct); err != nil {
				t.Fatal(err)
			}
		}
		a.Runner = invoke.New(front, r.Context(), invoke.WithOutputs(r.Context().Outputs))
		a.System = cm.Listing()
	}
	tr, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if ex.prompt != nil {
		ex.prompt(t, s.Requests()[0].Body)
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m["role"] == "toolResult" {
			return m
		}
	}
	t.Fatalf("no tool result in the transcript %s", b)
	return nil
}

// seedList and seedObj read decoded JSON without a check at each step.
func seedList(v any) []any { l, _ := v.([]any); return l }

func seedObj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
