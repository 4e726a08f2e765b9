package dir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolbelt/toolbelt/schema"
)

// compileDoc compiles a JSON Schema published in docs/schemas.
func compileDoc(t *testing.T, name string) (*schema.Validator, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.CompileJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return v, doc
}

// TestMetadataSchemaMatchesTheParser keeps the published schema of
// metadata.json in step with the fields the parser knows, and checks the
// example tools against it.
func TestMetadataSchemaMatchesTheParser(t *testing.T) {
	t.Parallel()
	v, doc := compileDoc(t, "metadata.schema.json")
	props, _ := doc["properties"].(map[string]any)
	var documented []string
	for k := range props {
		documented = append(documented, k)
	}
	slices.Sort(documented)
	known := slices.Sorted(slices.Values(metadataFields))
	if !slices.Equal(documented, known) {
		t.Errorf("docs/schemas/metadata.schema.json documents %v;\nthe parser knows %v", documented, known)
	}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "tools", "*", MetadataFile))
	if len(examples) < 3 {
		t.Fatalf("found %d example tools", len(examples))
	}
	for _, f := range examples {
		b, _ := os.ReadFile(f)
		var m any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if errs := v.Validate(m); len(errs) > 0 {
			t.Errorf("%s does not match the published schema: %v", f, errs)
		}
		if _, err := Load(filepath.Dir(f), Options{Trusted: true}); err != nil {
			t.Errorf("example %s: %v", f, err)
		}
	}
	for _, bad := range []string{
		`{"name": "x", "description": "d", "riskLevl": "low"}`,
		`{"name": "x y", "description": "d"}`,
		`{"name": "x", "description": "d", "confirmationMessage": "sure?"}`,
		`{"name": "x", "description": "d", "async": true}`,
		`{"name": "x", "description": "d", "async": true, "asyncType": "webhook"}`,
		`{"name": "x", "description": "d", "async": true, "asyncType": "polling", "webhookPath": "/h"}`,
		`{"name": "x", "description": "d", "async": true, "asyncType": "polling", "sandbox": true}`,
		`{"name": "x", "description": "d", "pollingInterval": 5}`,
		`{"name": "x", "description": "d", "settings": {"type": "string"}}`,
	} {
		var m any
		_ = json.Unmarshal([]byte(bad), &m)
		if len(v.Validate(m)) == 0 {
			t.Errorf("the published schema accepts %s, which the parser refuses", bad)
		}
		if _, err := ParseMetadata("metadata.json", []byte(bad)); err == nil {
			t.Errorf("the parser accepts %s", bad)
		}
	}
}

// TestProtocolMatchesItsSchemas checks each message of the handler
// protocol against its schema in docs/schemas: the requests Toolbelt
// writes, and answers it accepts and refuses.
func TestProtocolMatchesItsSchemas(t *testing.T) {
	t.Parallel()
	valid := func(name string, msg any) bool {
		v, _ := compileDoc(t, name)
		var m any
		switch msg := msg.(type) {
		case string:
			if err := json.Unmarshal([]byte(msg), &m); err != nil {
				t.Fatal(err)
			}
		default:
			b, _ := json.Marshal(msg)
			_ = json.Unmarshal(b, &m)
		}
		return len(v.Validate(m)) == 0
	}
	for _, c := range []struct {
		schema string
		msg    any
		ok     bool
	}{
		{"request.schema.json", Request{Operation: "call", Arguments: json.RawMessage(`{"a":1}`), CallID: "c", Context: RequestContext{Workspace: "/w", Session: "s", Agent: "a"}}, true},
		{"submit-request.schema.json", SubmitRequest{Operation: "submit", Arguments: json.RawMessage(`{"a":1}`), IdempotencyKey: "k", JobID: "task_1", WebhookURL: "http://h/x"}, true},
		{"submit-request.schema.json", SubmitRequest{Operation: "submit", Arguments: json.RawMessage(`{}`), IdempotencyKey: "k", JobID: "task_1"}, true},
		{"poll-request.schema.json", PollRequest{Operation: "poll", TaskID: "vid_1"}, true},
		{"request.schema.json", Request{Operation: "call", Arguments: json.RawMessage(`{}`), CallID: "c", Settings: json.RawMessage(`{"baseUrl":"http://h"}`)}, true},
		{"submit-request.schema.json", SubmitRequest{Operation: "submit", Arguments: json.RawMessage(`{}`), IdempotencyKey: "k", JobID: "task_1", Settings: json.RawMessage(`{"n":1}`)}, true},
		{"poll-request.schema.json", PollRequest{Operation: "poll", TaskID: "vid_1", Settings: json.RawMessage(`{"n":1}`)}, true},
		{"webhook-request.schema.json", WebhookRequest{Operation: "webhook", Payload: json.RawMessage(`{}`), Settings: json.RawMessage(`{"n":1}`)}, true},
		{"webhook-request.schema.json", WebhookRequest{Operation: "webhook", Payload: json.RawMessage(`{"id":"vid_1"}`)}, true},
		{"response.schema.json", `{"success": true, "result": {"n": 1}, "summary": "one"}`, true},
		{"response.schema.json", `{"success": false, "error": "quota", "canRetry": true, "suggestion": "wait"}`, true},
		{"response.schema.json", `{"success": true, "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}`, true},
		{"response.schema.json", `{"success": true, "content": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]}`, true},
		{"response.schema.json", `{"success": true, "content": [{"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "hi"}}]}`, true},
		{"response.schema.json", `{"success": true, "content": [{"type": "resource", "resource": {"uri": "test://r"}}]}`, false},
		{"response.schema.json", `{"result": 1}`, false},
		{"submit-response.schema.json", `{"success": true, "taskId": "vid_1"}`, true},
		{"submit-response.schema.json", `{"success": true}`, false},
		{"submit-response.schema.json", `{"success": false, "error": "quota"}`, true},
		{"status-response.schema.json", `{"status": "processing", "progress": 40, "message": "rendering"}`, true},
		{"status-response.schema.json", `{"status": "completed", "result": "x.mp4", "taskId": "vid_1"}`, true},
		{"status-response.schema.json", `{"success": false, "error": "API down"}`, true},
		{"status-response.schema.json", `{"status": "rendering"}`, false},
		{"status-response.schema.json", `{"status": "processing", "progress": 140}`, false},
		{"progress.schema.json", `{"progress": 40, "message": "ranking"}`, true},
		{"progress.schema.json", `{"level": "info"}`, false},
	} {
		if got := valid(c.schema, c.msg); got != c.ok {
			t.Errorf("%s: %s valid = %v, want %v", c.schema, mustJSON(c.msg), got, c.ok)
		}
	}
}

// TestRequestMatchesItsSchema checks the request handlers get against
// docs/schemas/request.schema.json.
func TestRequestMatchesItsSchema(t *testing.T) {
	t.Parallel()
	v, _ := compileDoc(t, "request.schema.json")
	b, _ := json.Marshal(Request{Operation: "call", Arguments: json.RawMessage(`{"a":1}`), CallID: "c", Context: RequestContext{Workspace: "/w"}})
	var m any
	_ = json.Unmarshal(b, &m)
	if errs := v.Validate(m); len(errs) > 0 {
		t.Errorf("%s: %v", b, errs)
	}
	for _, name := range []string{"response.schema.json", "progress.schema.json", "hook-before.schema.json"} {
		compileDoc(t, name)
	}
}
