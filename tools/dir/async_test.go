package dir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolbelt/toolbelt/tool"
)

// asyncTool loads an async polling tool whose sh handler saves each step's
// request as request.OP and prints answer.OP, both in its folder; with
// settings, it declares notesSettings and is given those.
func asyncTool(t *testing.T, answers map[string]string, settings map[string]any) (*Tool, tool.AsyncHandler) {
	t.Helper()
	md := map[string]any{"async": true, "asyncType": "polling"}
	var opts Options
	if settings != nil {
		md["settings"] = notesSettings
		opts.Settings = tool.Config{"render": settings}
	}
	opts.Trusted = true
	files := map[string]string{
		"metadata.json": meta("render", md),
		"handler.sh": `req=$(cat)
for op in submit poll webhook; do
  case "$req" in *"\"operation\":\"$op\""*) printf '%s' "$req" > "$TOOLBELT_TOOL_DIR/request.$op"; cat "$TOOLBELT_TOOL_DIR/answer.$op"; exit 0 ;; esac
done
exit 3
`,
	}
	for op, a := range answers {
		files["answer."+op] = a
	}
	dt, err := Load(writeTool(t, t.TempDir(), "render", files), opts)
	if err != nil {
		t.Fatal(err)
	}
	tt := dt.Tool()
	if tt.Async == nil || tt.Handler == nil || tt.Execute != nil {
		t.Fatalf("an async directory tool is not registered as async: %+v", tt)
	}
	return dt, tt.Handler
}

// request returns what the handler read for op, as a map.
func request(t *testing.T, dt *Tool, op string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dt.Dir, "request."+op))
	if err != nil {
		t.Fatalf("the handler was not asked to %s: %v", op, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s request %s: %v", op, b, err)
	}
	return m
}

// TestAsyncProtocol checks the async steps' requests and answers as
// docs/directory-tools.md writes them: submit with arguments and an
// idempotencyKey answers a taskId; poll gets that taskId and answers a
// status (success optional); webhook gets the payload.
func TestAsyncProtocol(t *testing.T) {
	t.Parallel()
	dt, h := asyncTool(t, map[string]string{
		"submit":  `{"success": true, "taskId": "vid_7"}`,
		"poll":    `{"status": "processing", "progress": 40.4, "message": "rendering"}`,
		"webhook": `{"status": "completed", "progress": 100, "result": {"url": "https://v/7.mp4"}, "taskId": "vid_7"}`,
	}, nil)
	ctx := context.Background()
	id, err := h.Submit(ctx, tool.AsyncSubmit{TaskID: "task_1", IdempotencyKey: "task_1.r0", Tool: "render", Arguments: json.RawMessage(`{"prompt":"a cat"}`), WebhookURL: "http://127.0.0.1:1/hook"})
	if err != nil || id != "vid_7" {
		t.Fatalf("Submit = %q, %v", id, err)
	}
	sub := request(t, dt, "submit")
	want := map[string]any{"operation": "submit", "arguments": map[string]any{"prompt": "a cat"}, "idempotencyKey": "task_1.r0", "jobId": "task_1", "webhookUrl": "http://127.0.0.1:1/hook"}
	if b, w := mustJSON(sub), mustJSON(want); b != w {
		t.Errorf("submit request = %s, want %s", b, w)
	}

	st, err := h.Poll(ctx, "vid_7")
	if err != nil || st.Status != tool.AsyncProcessing || st.Progress != 40 || st.Message != "rendering" {
		t.Fatalf("Poll = %+v, %v", st, err)
	}
	if b := mustJSON(request(t, dt, "poll")); b != `{"operation":"poll","taskId":"vid_7"}` {
		t.Errorf("poll request = %s", b)
	}

	st, err = h.OnWebhook(ctx, json.RawMessage(`{"id":"vid_7","status":"done"}`))
	if err != nil || st.Status != tool.AsyncCompleted || st.ExternalID != "vid_7" || string(st.Result) != `{"url": "https://v/7.mp4"}` {
		t.Fatalf("OnWebhook = %+v, %v", st, err)
	}
	if b := mustJSON(request(t, dt, "webhook")); b != `{"operation":"webhook","payload":{"id":"vid_7","status":"done"}}` {
		t.Errorf("webhook request = %s", b)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAsyncAnswerErrors: answers that break the protocol fail the step
// with what was wrong.
func TestAsyncAnswerErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		op, answer, want string
	}{
		{"submit", `{"success": true}`, `answered submit without "taskId"`},
		{"submit", `{"success": true, "externalId": "x"}`, `answered submit without "taskId"`},
		{"submit", `{"taskId": "x"}`, `answered submit without "success"`},
		{"submit", `{"success": false, "error": "quota"}`, "failed to submit: quota"},
		{"submit", `not json`, "did not answer submit with one JSON object"},
		{"poll", `{"success": false, "error": "API down"}`, "failed to poll: API down"},
		{"poll", `{"status": "rendering"}`, `bad status: status "rendering" is not one of`},
		{"poll", `{"status": "processing", "progress": 140}`, "progress 140, not between 0 and 100"},
		{"webhook", `{"status": "done"}`, `bad status: status "done"`},
	} {
		t.Run(c.op+" "+c.answer, func(t *testing.T) {
			t.Parallel()
			_, h := asyncTool(t, map[string]string{c.op: c.answer}, nil)
			var err error
			switch c.op {
			case "submit":
				_, err = h.Submit(context.Background(), tool.AsyncSubmit{TaskID: "j", IdempotencyKey: "j", Arguments: json.RawMessage(`{}`)})
			case "poll":
				_, err = h.Poll(context.Background(), "x")
			case "webhook":
				_, err = h.OnWebhook(context.Background(), json.RawMessage(`{}`))
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want %q", err, c.want)
			}
		})
	}
}

// TestAsyncStepsGetSettings: every step of an async tool that declares
// settings carries them, as a call's request does.
func TestAsyncStepsGetSettings(t *testing.T) {
	t.Parallel()
	dt, h := asyncTool(t, map[string]string{
		"submit":  `{"success": true, "taskId": "vid_7"}`,
		"poll":    `{"status": "processing"}`,
		"webhook": `{"status": "processing", "taskId": "vid_7"}`,
	}, map[string]any{"baseUrl": "http://127.0.0.1:9/api"})
	ctx := context.Background()
	if _, err := h.Submit(ctx, tool.AsyncSubmit{TaskID: "task_1", IdempotencyKey: "k", Tool: "render", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Poll(ctx, "vid_7"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.OnWebhook(ctx, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"submit", "poll", "webhook"} {
		if s := mustJSON(request(t, dt, op)["settings"]); s != `{"baseUrl":"http://127.0.0.1:9/api"}` {
			t.Errorf("the %s request carries settings %s", op, s)
		}
	}
}
