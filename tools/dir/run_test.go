package dir

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/tool"
)

// envelope decodes an error envelope.
func envelope(t *testing.T, msg tool.ResultMessage) tool.Envelope {
	t.Helper()
	var e tool.Envelope
	if err := json.Unmarshal([]byte(text(msg)), &e); err != nil {
		t.Fatalf("result %q is not an envelope: %v", text(msg), err)
	}
	return e
}

func TestCallProtocol(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	// The handler echoes its request back as the result, with a summary.
	echo := shTool(t, parent, "echo", `printf '{"success":true,"summary":"echoed","result":%s}' "$req"`, nil)
	py := writeTool(t, parent, "pyecho", map[string]string{
		"metadata.json": meta("pyecho", nil),
		"schema.json":   objectSchema,
		"handler.py": `import json, sys
req = json.load(sys.stdin)
print(json.dumps({"success": True, "result": req["arguments"]["text"].upper()}))
`,
	})
	js := writeTool(t, parent, "jsecho", map[string]string{
		"metadata.json": meta("jsecho", nil),
		"schema.json":   objectSchema,
		"handler.js": `let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
  const req = JSON.parse(s);
  console.log(JSON.stringify({success: true, content: [{type: "text", text: "js:" + req.arguments.text}]}));
});
`,
	})
	h := newHarness(t, []string{echo, py, js}, Options{Trusted: true})

	msg := h.call(context.Background(), "echo", `{"text":"hi"}`)
	if msg.IsError {
		t.Fatalf("echo: %s", text(msg))
	}
	got := text(msg)
	if !strings.HasPrefix(got, "echoed\n\n") {
		t.Errorf("text %q does not start with the summary", got)
	}
	var req Request
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got, "echoed\n\n")), &req); err != nil {
		t.Fatalf("the handler's request: %v in %q", err, got)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, req.Arguments)
	if req.Operation != "call" || req.CallID != "call_1" || compact.String() != `{"text":"hi"}` ||
		req.Context.Workspace != h.workspace || req.Context.Session != "s1" || req.Context.Agent != "a1" {
		t.Errorf("request = %+v", req)
	}
	details, _ := msg.Details.(map[string]any)
	if details["summary"] != "echoed" || details["source"] != "directory" {
		t.Errorf("details = %v", msg.Details)
	}

	if msg := h.call(context.Background(), "pyecho", `{"text":"hi"}`); msg.IsError || text(msg) != "HI" {
		t.Errorf("pyecho = %q (error %v)", text(msg), msg.IsError)
	}
	if msg := h.call(context.Background(), "jsecho", `{"text":"hi"}`); msg.IsError || text(msg) != "js:hi" {
		t.Errorf("jsecho = %q (error %v)", text(msg), msg.IsError)
	}
}

// TestSchemaDefaultsReachTheHandler: the seeds' schema.json example — the
// handler gets size and style as their defaults when the call leaves them
// out, defaults of nested objects too, and what the call gives as given.
func TestSchemaDefaultsReachTheHandler(t *testing.T) {
	t.Parallel()
	const seedsSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "description": "Image description"},
    "size": {"type": "string", "enum": ["256x256", "512x512", "1024x1024"], "default": "512x512"},
    "style": {"type": "string", "enum": ["natural", "vivid"], "default": "vivid"},
    "output": {"type": "object", "properties": {"format": {"type": "string", "default": "png"}, "dir": {"type": "string"}}}
  },
  "required": ["prompt"]
}`
	dir := writeTool(t, t.TempDir(), "generate_image", map[string]string{
		"metadata.json": meta("generate_image", nil),
		"schema.json":   seedsSchema,
		"handler.sh":    "req=$(cat)\nprintf '{\"success\":true,\"result\":%s}' \"$req\"\n",
	})
	h := newHarness(t, []string{dir}, Options{Trusted: true})
	for _, tt := range []struct{ args, want string }{
		{`{"prompt":"a beautiful sunset"}`, `{"prompt":"a beautiful sunset","size":"512x512","style":"vivid"}`},
		{`{"prompt":"p","size":"256x256","output":{"dir":"out"}}`, `{"output":{"dir":"out","format":"png"},"prompt":"p","size":"256x256","style":"vivid"}`},
	} {
		msg := h.call(context.Background(), "generate_image", tt.args)
		var req Request
		if err := json.Unmarshal([]byte(text(msg)), &req); msg.IsError || err != nil {
			t.Fatalf("%s: %s (%v)", tt.args, text(msg), err)
		}
		var got bytes.Buffer
		_ = json.Compact(&got, req.Arguments)
		if got.String() != tt.want {
			t.Errorf("%s reached the handler as %s, want %s", tt.args, got.String(), tt.want)
		}
	}
}

func TestBadOutput(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cases := []struct {
		name, script string
		want         []string
	}{
		{"not_json", `echo 'hello world'; echo 'oops' >&2`, []string{"did not answer with one JSON object", "hello world", "last log lines: oops"}},
		{"two_values", `echo '{"success":true} {"success":true}'`, []string{"more than one JSON value"}},
		{"no_success", `echo '{"result":1}'`, []string{`without "success"`}},
		{"too_large", `head -c 100000 /dev/zero | tr '\0' 'x'; sleep 30`, []string{"printed more than 1000 bytes and was stopped"}},
		{"crash", `kill -SEGV $$`, []string{"was killed by SIGSEGV before it answered"}},
		{"exit_code", `echo 'bad input' >&2; exit 3`, []string{"exited with code 3 without an answer", "bad input"}},
		{"bad_image", `echo '{"success":true,"content":[{"type":"image","data":"!!","mimeType":"image/png"}]}'`, []string{"data is not base64"}},
		{"resource_no_uri", `echo '{"success":true,"content":[{"type":"resource","resource":{"text":"x"}}]}'`, []string{"resource block (content[0]) without a uri"}},
		{"resource_bad_blob", `echo '{"success":true,"content":[{"type":"resource","resource":{"uri":"test://r","blob":"!!"}}]}'`, []string{"blob is not base64"}},
		{"empty", `true`, []string{"did not answer", "no output"}},
	}
	var folders []string
	for _, c := range cases {
		folders = append(folders, shTool(t, parent, c.name, c.script, nil))
	}
	h := newHarness(t, folders, Options{Trusted: true, MaxOutput: 1000, KillGrace: 100 * time.Millisecond})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			msg := h.call(context.Background(), c.name, `{"text":"x"}`)
			if !msg.IsError {
				t.Fatalf("not an error: %s", text(msg))
			}
			e := envelope(t, msg)
			if e.Status != "error" || e.Suggestion == "" {
				t.Errorf("envelope = %+v", e)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Error, w) {
					t.Errorf("error %q does not contain %q", e.Error, w)
				}
			}
		})
	}
}

func TestHandlerFailure(t *testing.T) {
	t.Parallel()
	f := shTool(t, t.TempDir(), "fails", `echo '{"success":false,"error":"quota exceeded","canRetry":true,"suggestion":"wait a minute"}'`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true})
	e := envelope(t, h.call(context.Background(), "fails", `{"text":"x"}`))
	if e.Error != "quota exceeded" || e.CanRetry == nil || !*e.CanRetry || e.Suggestion != "wait a minute" {
		t.Errorf("envelope = %+v", e)
	}
}

func TestSchemaErrorNeverRunsTheHandler(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	f := shTool(t, t.TempDir(), "strict", `touch `+marker+`; echo '{"success":true}'`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true})
	msg := h.call(context.Background(), "strict", `{"txt": "hi"}`)
	if !msg.IsError || !strings.Contains(text(msg), "text") {
		t.Fatalf("result = %s", text(msg))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the handler ran although the arguments did not match the schema")
	}
}

// waitFile waits for path to hold text, and returns it.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for range 1000 {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was never written", path)
	return ""
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The handler starts a grandchild that would outlive it, then hangs.
	f := shTool(t, t.TempDir(), "hangs", `sleep 300 & echo $! > `+pidFile+`; wait`, map[string]any{"timeout": 0.5})
	h := newHarness(t, []string{f}, Options{Trusted: true, KillGrace: 100 * time.Millisecond})
	msg := h.call(context.Background(), "hangs", `{"text":"x"}`)
	if !msg.IsError || !strings.Contains(text(msg), "Tool hangs timed out after 0.5 s") {
		t.Fatalf("result = %s", text(msg))
	}
	pid, _ := strconv.Atoi(waitFile(t, pidFile))
	for range 500 {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the handler's child %d outlived the timeout", pid)
}

func TestCancelStopsTheHandlerAndForwardsProgress(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	f := shTool(t, t.TempDir(), "slow",
		`echo $$ > `+pidFile+`; echo '{"progress": 40, "message": "halfway"}' >&2; echo 'a plain log line' >&2; sleep 300`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true, KillGrace: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan tool.Result, 10)
	done := make(chan tool.ResultMessage, 1)
	go func() {
		done <- h.call(ctx, "slow", `{"text":"x"}`, invoke.OnUpdate(func(r tool.Result) { updates <- r }))
	}()
	u := <-updates
	if len(u.Content) != 1 || u.Content[0].Text != "40% halfway" {
		t.Errorf("update = %+v, want 40%% halfway", u)
	}
	if d, _ := u.Details.(map[string]any); d["progress"] != 40.0 {
		t.Errorf("update details = %v", u.Details)
	}
	cancel()
	msg := <-done
	if !msg.IsError || !strings.Contains(text(msg), "Tool slow was cancelled") {
		t.Fatalf("result = %s", text(msg))
	}
	pid, _ := strconv.Atoi(waitFile(t, pidFile))
	for range 500 {
		if !alive(pid) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("the handler %d outlived the cancellation", pid)
	}
	select {
	case u := <-updates:
		t.Errorf("a log line became an update: %+v", u)
	default:
	}
}

func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("DIRTOOL_TEST_TOKEN", "hunter2")
	t.Setenv("DIRTOOL_TEST_API_KEY", "allowed-secret")
	t.Setenv("DIRTOOL_TEST_PLAIN", "plain")
	f := shTool(t, t.TempDir(), "env",
		`printf '{"success":true,"result":"token=%s key=%s plain=%s dir=%s"}' "$DIRTOOL_TEST_TOKEN" "$DIRTOOL_TEST_API_KEY" "$DIRTOOL_TEST_PLAIN" "$(basename "$TOOLBELT_TOOL_DIR")"`,
		map[string]any{"env": []string{"DIRTOOL_TEST_API_*"}})
	h := newHarness(t, []string{f}, Options{Trusted: true})
	msg := h.call(context.Background(), "env", `{"text":"x"}`)
	if got, want := text(msg), "token= key=allowed-secret plain=plain dir=env"; got != want {
		t.Errorf("handler saw %q, want %q", got, want)
	}
}

func TestHighRiskAsksWithTheConfirmationMessage(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	f := shTool(t, t.TempDir(), "wipe", `touch `+marker+`; echo '{"success":true,"result":"wiped"}'`,
		map[string]any{"riskLevel": "high", "confirmationMessage": "This wipes the cache. Continue?", "destructive": true})
	var asked []invoke.Confirmation
	answer := invoke.Answer{Allow: false, Reason: "not today", By: "test"}
	h := newHarness(t, []string{f}, Options{Trusted: true}, invoke.WithConfirmer(invoke.ConfirmFunc(
		func(_ context.Context, c invoke.Confirmation) (invoke.Answer, error) {
			asked = append(asked, c)
			return answer, nil
		})))
	msg := h.call(context.Background(), "wipe", `{"text":"x"}`)
	if !msg.IsError || !strings.Contains(text(msg), "not today") {
		t.Fatalf("denied call = %s", text(msg))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the handler ran although the call was denied")
	}
	if len(asked) != 1 || asked[0].Message != "This wipes the cache. Continue?" || asked[0].Risk != tool.RiskHigh {
		t.Fatalf("asked = %+v", asked)
	}
	if e := asked[0].Effects; e == nil || e.ScriptHash == "" || !strings.HasSuffix(e.Command, "handler.sh") {
		t.Errorf("effects = %+v, want the handler and its hash", asked[0].Effects)
	}
	answer = invoke.Answer{Allow: true, By: "test"}
	if msg := h.call(context.Background(), "wipe", `{"text":"x"}`); msg.IsError || text(msg) != "wiped" {
		t.Errorf("allowed call = %s", text(msg))
	}
}

func TestImageContent(t *testing.T) {
	t.Parallel()
	// A 1×1 PNG.
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	f := shTool(t, t.TempDir(), "img",
		`echo '{"success":true,"content":[{"type":"text","text":"a dot"},{"type":"image","data":"`+png+`","mimeType":"image/png"}]}'`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true})
	msg := h.call(context.Background(), "img", `{"text":"x"}`)
	if msg.IsError || len(msg.Content) != 2 || msg.Content[1].Type != tool.ImageContent || msg.Content[1].MIMEType != "image/png" {
		t.Errorf("result = %+v", msg)
	}
}

func TestAudioAndResourceContent(t *testing.T) {
	t.Parallel()
	f := shTool(t, t.TempDir(), "media", `echo '{"success":true,"content":[`+
		`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},`+
		`{"type":"resource","resource":{"uri":"test://notes","mimeType":"text/plain","text":"the notes"}},`+
		`{"type":"resource","resource":{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AAEC"}}]}'`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true})
	msg := h.call(context.Background(), "media", `{"text":"x"}`)
	want := []tool.Content{
		{Type: tool.AudioContent, Data: "UklGRg==", MIMEType: "audio/wav"},
		{Type: tool.ResourceContent, URI: "test://notes", MIMEType: "text/plain", Text: "the notes"},
		{Type: tool.ResourceContent, URI: "test://blob", MIMEType: "application/octet-stream", Data: "AAEC"},
	}
	if msg.IsError || !reflect.DeepEqual(msg.Content, want) {
		t.Errorf("result = %+v, want %+v", msg.Content, want)
	}
}

func TestLogLines(t *testing.T) {
	t.Parallel()
	f := shTool(t, t.TempDir(), "chatty", `echo '{"log": "starting", "level": "debug"}' >&2
echo '{"log": "no level"}' >&2
echo '{"log": "odd level", "level": "loud"}' >&2
echo 'plain text' >&2
echo '{"progress": 50, "message": "half"}' >&2
echo '{"success": true, "summary": "done"}'`, nil)
	h := newHarness(t, []string{f}, Options{Trusted: true})
	var mu sync.Mutex
	var got []string
	ctx := tool.WithLog(context.Background(), func(level, message string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, level+" "+message)
	})
	if msg := h.call(ctx, "chatty", `{"text":"x"}`); msg.IsError {
		t.Fatalf("call failed: %s", text(msg))
	}
	mu.Lock()
	defer mu.Unlock()
	// A line whose level is not one of MCP's, plain text and progress
	// are not log lines for the client.
	if want := []string{"debug starting", "info no level"}; !reflect.DeepEqual(got, want) {
		t.Errorf("log lines = %q, want %q", got, want)
	}
}
