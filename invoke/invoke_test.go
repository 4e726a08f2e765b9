package invoke_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fn makes a tool from a function, with the five-field schema.
func fn(name string, f tool.ExecuteFunc) tool.Tool {
	return tool.Tool{Name: name, Description: name, Parameters: fiveFields(), Execute: f}
}

// echo returns its arguments as text.
func echo(_ context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
	return tool.Text(string(call.Arguments)), nil
}

func newRunner(t *testing.T, tools []tool.Tool, opts ...invoke.Option) *invoke.Runner {
	t.Helper()
	reg := registry.New()
	for _, tt := range tools {
		if err := reg.Register(tt); err != nil {
			t.Fatal(err)
		}
	}
	return invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, opts...)
}

func text(m tool.ResultMessage) string {
	var parts []string
	for _, c := range m.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// errorText is the text of an error result with its envelope opened: the
// envelope's error, then the blocks after it. It fails the test when the
// result is not an error in the envelope.
func errorText(t *testing.T, m tool.ResultMessage) string {
	t.Helper()
	if !m.IsError || len(m.Content) == 0 {
		t.Fatalf("not an error result: %+v", m)
	}
	var env tool.Envelope
	if err := json.Unmarshal([]byte(m.Content[0].Text), &env); err != nil || env.Status != "error" || env.Tool != m.ToolName {
		t.Fatalf("error result not in the envelope {\"status\":\"error\",\"tool\":%q,…}: %q", m.ToolName, m.Content[0].Text)
	}
	parts := []string{env.Error}
	for _, c := range m.Content[1:] {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func run(t *testing.T, r *invoke.Runner, name, args string) tool.ResultMessage {
	t.Helper()
	return r.Run(context.Background(), tool.Call{ID: "call_1", Name: name, Arguments: json.RawMessage(args)})
}

func TestResultMessage(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("echo", echo)})
	before := time.Now().UnixMilli()
	msg := run(t, r, "echo", `{"path":"a"}`)
	if msg.Role != "toolResult" || msg.ToolCallID != "call_1" || msg.ToolName != "echo" || msg.IsError ||
		text(msg) != `{"path":"a"}` || msg.Timestamp < before || msg.Timestamp > time.Now().UnixMilli() {
		t.Errorf("message %+v", msg)
	}
	b, _ := json.Marshal(msg)
	var keys map[string]any
	_ = json.Unmarshal(b, &keys)
	for _, k := range []string{"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("result message JSON lacks %q: %s", k, b)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("read", echo), fn("ready", echo), fn("reader", echo), fn("thread", echo), fn("write", echo)})
	msg := run(t, r, "raed", `{}`)
	if !msg.IsError || msg.ToolName != "raed" {
		t.Fatalf("%+v", msg)
	}
	if got := errorText(t, msg); !strings.HasPrefix(got, `Tool "raed" not found. Did you mean "read"`) || strings.Contains(got, "write") {
		t.Errorf("suggestions: %s", got)
	}
	msg = run(t, r, "get_weather_forecast", `{}`)
	if got := errorText(t, msg); !strings.Contains(got, `Available tools: "read", "write", "reader", "ready", "thread".`) {
		t.Errorf("no close match should list tools: %s", got)
	}
	empty := newRunner(t, nil)
	if got := errorText(t, run(t, empty, "x", "")); got != `Tool "x" not found: no tools are available.` {
		t.Errorf("empty registry: %s", got)
	}
}

func TestNameResolution(t *testing.T) {
	t.Parallel()
	exec := fn("exec", echo)
	exec.Meta.Source = tool.SourceCore
	r := newRunner(t, []tool.Tool{exec})
	for _, name := range []string{"exec", " exec ", "EXEC", "bash", "functions.exec", "tools/bash", "functions.exec:0", "exec_2"} {
		msg := run(t, r, name, `{"path":"x"}`)
		if msg.IsError || msg.ToolName != "exec" {
			t.Errorf("%q: %+v", name, msg)
		}
	}
}

func TestArguments(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("echo", echo)})
	for _, tc := range []struct {
		args    string
		isError bool
		want    string
	}{
		{`{"path":"a"}`, false, `{"path":"a"}`},
		{`  {"path":"a"}  `, false, `{"path":"a"}`},
		{`"{\"path\":\"a\"}"`, false, `{"path":"a"}`},
		{`" {\"path\":\"a\"} "`, false, `{"path":"a"}`},
		{``, true, `Missing required parameter: path (received: nothing)`}, // empty means {}
		{`null`, true, `Missing required parameter: path (received: nothing)`},
		{`""`, true, `Missing required parameter: path (received: nothing)`},
		{`[1,2]`, true, `they must be a JSON object, but an array was received: [1,2]`},
		{`42`, true, `but a number was received: 42`},
		{`true`, true, `but a boolean was received`},
		{`"just text"`, true, `they arrived as a JSON string that does not hold an object; received: just text`},
		{`{"path": "a",}`, true, `they are not valid JSON`},
		{`{"path":"a"} {"x":1}`, true, `they are not valid JSON`},
		{`"unterminated`, true, `they are not valid JSON`},
		{`<xml/>`, true, `they are not valid JSON (invalid character '<' looking for beginning of value at line 1, column 1)`},
		{`notes.txt`, true, `they are not valid JSON (invalid character 'o' in literal null (expecting 'u') at line 1, column 2); received: notes.txt`},
	} {
		msg := run(t, r, "echo", tc.args)
		got := text(msg)
		if tc.isError {
			got = errorText(t, msg)
		}
		if msg.IsError != tc.isError || !strings.Contains(got, tc.want) {
			t.Errorf("args %s: isError=%v %q, want %v %q", tc.args, msg.IsError, got, tc.isError, tc.want)
		}
		if tc.isError && strings.Contains(tc.want, "JSON") && !strings.HasPrefix(got, `Invalid arguments for tool "echo": `) {
			t.Errorf("args %s: %q", tc.args, got)
		}
	}
	// The tool receives the object even when the arguments came as a string.
	noArgs := tool.Tool{Name: "noargs", Execute: echo}
	r = newRunner(t, []tool.Tool{noArgs})
	for _, args := range []string{``, `null`, `""`, `{}`} {
		if got := text(run(t, r, "noargs", args)); got != `{}` {
			t.Errorf("args %q reached the tool as %q", args, got)
		}
	}
}

func TestValidationReportsEverything(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("read", echo)})
	msg := run(t, r, "read", `{"path":"","offset":0,"limit":"x10","mode":"all","numbers":"yes","extra":1}`)
	want := `Validation failed for tool "read":
  - (root): unknown property "extra" is not allowed
  - limit: got string, want integer
  - mode: value must be one of "text", "lines"
  - numbers: got string, want boolean
  - offset: minimum: got 0, want at least 1
  - path: minLength: got 0 characters, want at least 1
Received arguments:
{
  "extra": 1,
  "limit": "x10",
  "mode": "all",
  "numbers": "yes",
  "offset": 0,
  "path": ""
}`
	if got := errorText(t, msg); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	details, ok := msg.Details.(map[string]any)
	if !ok || details["error"] != "validation" {
		t.Errorf("details: %#v", msg.Details)
	}
}

func TestValidationCutsReceivedArguments(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("read", echo)})
	big := strings.Repeat("é", 3000)
	msg := run(t, r, "read", `{"path":[5],"mode":"`+big+`"}`)
	got := errorText(t, msg)
	received := got[strings.Index(got, "Received arguments:\n")+len("Received arguments:\n"):]
	if !strings.HasSuffix(received, "é…") || utf8.RuneCountInString(received) > invoke.MaxReceivedChars+1 {
		t.Errorf("received arguments not cut at %d characters: %d characters, ending %q", invoke.MaxReceivedChars, utf8.RuneCountInString(received), received[max(len(received)-20, 0):])
	}
	if !strings.Contains(got, "path: got array, want string") {
		t.Error(got)
	}
	if !utf8Valid(got) {
		t.Error("cut inside a UTF-8 sequence")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestErrorsBecomeResults(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	r := newRunner(t, []tool.Tool{
		fn("fails", func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Result{}, errors.New(`disk "full"`)
		}),
		fn("input", func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Result{}, tool.InputErrorf("file %q not found; list the directory first", "x")
		}),
		fn("panics", func(_ context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
			return tool.Text(call.ID[:100]), nil // a runtime panic: the id is short
		}),
		fn("empty", func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Result{}, nil
		}),
		fn("emptyerr", func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Result{IsError: true}, nil
		}),
		fn("errresult", func(context.Context, tool.Call, *tool.Context, tool.UpdateFunc) (tool.Result, error) {
			return tool.Errorf("nothing matched"), nil
		}),
	}, invoke.WithLogger(logger))
	for _, tc := range []struct {
		name, want string
	}{
		{"fails", `{"status":"error","tool":"fails","error":"disk \"full\""}`},
		{"input", `{"status":"error","tool":"input","error":"file \"x\" not found; list the directory first"}`},
		{"emptyerr", `{"status":"error","tool":"emptyerr","error":"(the tool failed without a message)"}`},
		{"errresult", `{"status":"error","tool":"errresult","error":"nothing matched"}`},
	} {
		msg := run(t, r, tc.name, `{"path":"a"}`)
		if !msg.IsError || text(msg) != tc.want {
			t.Errorf("%s: %v %q, want %q", tc.name, msg.IsError, text(msg), tc.want)
		}
	}
	msg := run(t, r, "panics", `{"path":"a"}`)
	if !msg.IsError || !strings.Contains(text(msg), `"tool":"panics"`) || !strings.Contains(text(msg), "slice bounds out of range") {
		t.Errorf("panic: %q", text(msg))
	}
	if strings.Contains(text(msg), "goroutine") || strings.Contains(text(msg), ".go:") {
		t.Errorf("stack leaked into the result: %q", text(msg))
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "tool panicked") || !strings.Contains(logged, "invoke_test.go") {
		t.Errorf("stack not logged: %s", logged)
	}
	if msg := run(t, r, "empty", `{"path":"a"}`); msg.IsError || len(msg.Content) != 1 || text(msg) != "(no output)" {
		t.Errorf("empty result: %+v", msg)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestTypedToolThroughPipeline(t *testing.T) {
	t.Parallel()
	type args struct {
		Path  string `json:"path" minLength:"1"`
		Limit int    `json:"limit,omitempty" minimum:"1" default:"20"`
	}
	typed := tool.Must(tool.New("lines", "Count.", func(_ context.Context, in args, inv tool.Invocation) (tool.Result, error) {
		return tool.Textf("%s:%d:%s", in.Path, in.Limit, inv.Context.Workspace), nil
	}))
	r := newRunner(t, []tool.Tool{typed})
	if msg := run(t, r, "lines", `"{\"path\":\"a.go\"}"`); msg.IsError || !strings.HasPrefix(text(msg), "a.go:20:/") {
		t.Errorf("%+v", msg)
	}
	if msg := run(t, r, "lines", `{"path":"a.go","limit":0}`); !msg.IsError || !strings.Contains(text(msg), "limit: minimum: got 0, want at least 1") {
		t.Errorf("%+v", msg)
	}
}

func TestUnavailableAndSelection(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := reg.RegisterFactory(func(*tool.Context) (*tool.Tool, error) {
		return nil, errors.New("fs tools need a root and a bridge")
	}, tool.Meta{ID: "read"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(fn("echo", echo)); err != nil {
		t.Fatal(err)
	}
	// A reason that says itself what the model should know (a server that
	// is down) becomes an error envelope that says whether to retry.
	if err := reg.RegisterFactory(func(*tool.Context) (*tool.Tool, error) {
		return nil, fmt.Errorf("importing: %w", downError{})
	}, tool.Meta{ID: "remote"}); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, nil)
	if got := errorText(t, run(t, r, "read", `{}`)); got != `Tool "read" is not available here: fs tools need a root and a bridge` {
		t.Errorf("unavailable: %q", got)
	}
	if msg := run(t, r, "remote", `{}`); !msg.IsError || text(msg) != `{"status":"error","tool":"remote","error":"server is down","canRetry":true,"suggestion":"Try again soon."}` {
		t.Errorf("unavailable with info: %s", text(msg))
	}
	limited := invoke.New(reg, nil, invoke.WithSelection(registry.Exclude("echo")))
	if msg := run(t, limited, "echo", `{"path":"a"}`); !strings.Contains(errorText(t, msg), `Tool "echo" not found`) {
		t.Errorf("excluded tool ran: %+v", msg)
	}
	if got := limited.Tools(nil); len(got) != 0 {
		t.Errorf("Tools() = %v", got)
	}
	var reasons []string
	if got := r.Tools(func(id string, err error) { reasons = append(reasons, id+": "+err.Error()) }); len(got) != 1 || len(reasons) != 2 {
		t.Errorf("Tools() = %d tools, reasons %v", len(got), reasons)
	}
}

type downError struct{}

func (downError) Error() string { return "down" }
func (downError) ErrorInfo() tool.ErrorInfo {
	return tool.ErrorInfo{Message: "server is down", CanRetry: true, Suggestion: "Try again soon."}
}

func TestRegistryChangesAreSeen(t *testing.T) {
	t.Parallel()
	reg := registry.New()
	if err := reg.Register(fn("echo", echo)); err != nil {
		t.Fatal(err)
	}
	r := invoke.New(reg, nil)
	if msg := run(t, r, "echo", `{"path":"a"}`); msg.IsError {
		t.Fatal(text(msg))
	}
	reg.Unregister("echo")
	if msg := run(t, r, "echo", `{"path":"a"}`); !msg.IsError {
		t.Fatal("unregistered tool still runs")
	}
	// Re-registered with another schema: the new schema is enforced.
	strict := tool.Tool{Name: "echo", Execute: echo, Parameters: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}, Required: []string{"n"},
	}}
	if err := reg.Register(strict); err != nil {
		t.Fatal(err)
	}
	if msg := run(t, r, "echo", `{"path":"a"}`); errorText(t, msg) != `Missing required parameter: n (received: path). Supply correct parameters before retrying.` {
		t.Errorf("old schema still used: %q", text(msg))
	}
}

func TestInvalidSchema(t *testing.T) {
	t.Parallel()
	bad := tool.Tool{Name: "bad", Execute: echo, Parameters: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "strang"}}}}
	r := newRunner(t, []tool.Tool{bad}, invoke.WithLogger(slog.New(slog.DiscardHandler)))
	msg := run(t, r, "bad", `{}`)
	if !msg.IsError || !strings.Contains(text(msg), "parameter schema is invalid") {
		t.Errorf("%+v", msg)
	}
}

func TestEventsInOrder(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("steps", func(_ context.Context, _ tool.Call, _ *tool.Context, update tool.UpdateFunc) (tool.Result, error) {
		for i := range 3 {
			update(tool.Textf("step %d", i))
		}
		return tool.Text("done"), nil
	})}, invoke.WithConfig(invoke.Config{UpdateInterval: time.Nanosecond}))
	sub := r.Subscribe(16)
	defer sub.Close()
	other := r.Subscribe(16)
	msg := run(t, r, "steps", `{"path":"p"}`)
	run(t, r, "nope", `{}`)
	other.Close()
	var got []string
	for range 7 {
		e := <-sub.Events()
		s := fmt.Sprintf("%s %s %s", e.Type, e.ToolCallID, e.ToolName)
		switch e.Type {
		case invoke.EventStart:
			s += " " + fmt.Sprint(e.Args)
		case invoke.EventUpdate:
			s += " " + e.PartialResult.Content[0].Text
		case invoke.EventEnd:
			s += fmt.Sprintf(" %s %v", e.Result.Content[0].Text[:min(4, len(e.Result.Content[0].Text))], e.IsError)
		}
		got = append(got, s)
	}
	want := []string{
		`tool_execution_start call_1 steps [123 34 112 97 116 104 34 58 34 112 34 125]`,
		`tool_execution_update call_1 steps step 0`,
		`tool_execution_update call_1 steps step 1`,
		`tool_execution_update call_1 steps step 2`,
		`tool_execution_end call_1 steps done false`,
		`tool_execution_start call_1 nope [123 125]`,
		`tool_execution_end call_1 nope {"st true`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if text(msg) != "done" {
		t.Error(text(msg))
	}
	// The closed subscriber's channel is closed and drained of what it got.
	n := 0
	for range other.Events() {
		n++
	}
	if n != 7 {
		t.Errorf("closed subscriber received %d events, want 7", n)
	}
}

func TestSlowSubscriberMissesAndIsTold(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("echo", echo)})
	slow := r.Subscribe(4)
	defer slow.Close()
	for range 50 { // 100 events; nobody reads meanwhile
		run(t, r, "echo", `{"path":"p"}`)
	}
	if slow.Missed() != 96 {
		t.Errorf("missed %d, want 96", slow.Missed())
	}
	for range 4 {
		<-slow.Events()
	}
	run(t, r, "echo", `{"path":"p"}`)
	if e := <-slow.Events(); e.Type != invoke.EventStart || e.Missed != 96 {
		t.Errorf("first event after the gap: %s missed=%d, want start with missed=96", e.Type, e.Missed)
	}
}

// TestBatchKeepsOrder runs 8 calls that finish in reverse order.
func TestBatchKeepsOrder(t *testing.T) {
	t.Parallel()
	const n = 8
	done := make([]chan struct{}, n+1)
	for i := range done {
		done[i] = make(chan struct{})
	}
	close(done[n])
	var finished []int
	var mu sync.Mutex
	r := newRunner(t, []tool.Tool{fn("step", func(ctx context.Context, call tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		var i int
		fmt.Sscanf(call.ID, "call_%d", &i)
		select {
		case <-done[i+1]: // call i finishes after call i+1
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
		mu.Lock()
		finished = append(finished, i)
		mu.Unlock()
		close(done[i])
		if i == 3 {
			panic("call 3 crashes")
		}
		return tool.Textf("result %d", i), nil
	})}, invoke.WithLogger(slog.New(slog.DiscardHandler)))
	calls := make([]tool.Call, n)
	for i := range calls {
		calls[i] = tool.Call{ID: fmt.Sprintf("call_%d", i), Name: "step", Arguments: json.RawMessage(`{"path":"p"}`)}
	}
	calls = append(calls, tool.Call{ID: "call_8", Name: "missing"})
	msgs := r.RunBatch(context.Background(), calls)
	for i, m := range msgs {
		if m.ToolCallID != calls[i].ID {
			t.Errorf("message %d is for %s", i, m.ToolCallID)
		}
		switch i {
		case 3:
			if !m.IsError || !strings.Contains(text(m), "call 3 crashes") {
				t.Errorf("call 3: %+v", m)
			}
		case 8:
			if !m.IsError || !strings.Contains(text(m), "not found") {
				t.Errorf("call 8: %+v", m)
			}
		default:
			if m.IsError || text(m) != fmt.Sprintf("result %d", i) {
				t.Errorf("call %d: %q", i, text(m))
			}
		}
	}
	if want := []int{7, 6, 5, 4, 3, 2, 1, 0}; !slices.Equal(finished, want) {
		t.Errorf("finished in order %v, want %v", finished, want)
	}
}

func TestBatchCancellation(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 8)
	r := newRunner(t, []tool.Tool{fn("wait", func(ctx context.Context, _ tool.Call, _ *tool.Context, _ tool.UpdateFunc) (tool.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})})
	calls := make([]tool.Call, 8)
	for i := range calls {
		calls[i] = tool.Call{ID: fmt.Sprint(i), Name: "wait", Arguments: json.RawMessage(`{"path":"p"}`)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range calls {
			<-started
		}
		cancel()
	}()
	msgs := r.RunBatch(ctx, calls)
	for i, m := range msgs {
		if errorText(t, m) != "Tool wait was cancelled." || m.ToolCallID != fmt.Sprint(i) {
			t.Errorf("call %d: %+v", i, m)
		}
	}
}

func TestSteps(t *testing.T) {
	t.Parallel()
	var order []string
	mark := func(name string) invoke.Middleware {
		return func(next invoke.Handler) invoke.Handler {
			return func(ctx context.Context, req *invoke.Request) tool.Result {
				order = append(order, name)
				return next(ctx, req)
			}
		}
	}
	block := func(next invoke.Handler) invoke.Handler {
		return func(ctx context.Context, req *invoke.Request) tool.Result {
			args, err := req.Args()
			if err != nil {
				return tool.Errorf("%v", err)
			}
			if args["path"] == "secret" {
				return tool.Envelope{Status: "blocked", Tool: req.Tool.Name, Reason: "no secrets"}.Result()
			}
			args["path"] = "rewritten"
			if err := req.SetArgs(args); err != nil {
				return tool.Errorf("%v", err)
			}
			return next(ctx, req)
		}
	}
	r := newRunner(t, []tool.Tool{fn("echo", echo)},
		invoke.WithSteps(func(steps []invoke.Step) []invoke.Step {
			return slices.Insert(steps, 1, invoke.Step{Name: "between", Wrap: mark("between")})
		}),
		invoke.Use(mark("last"), block),
	)
	var names []string
	for _, s := range r.Steps() {
		names = append(names, s.Name)
	}
	if want := []string{"persist", "between", "shape", "access", "arguments", "normalize", "validate", "policy", "audit", "hooks", "confirm", "after", "loop", "timeout", "external", "output", "use0", "use1"}; !slices.Equal(names, want) {
		t.Errorf("steps %v, want %v", names, want)
	}
	if msg := run(t, r, "echo", `{"path":"a"}`); text(msg) != `{"path":"rewritten"}` {
		t.Errorf("SetArgs not passed on: %q", text(msg))
	}
	if !slices.Equal(order, []string{"between", "last"}) {
		t.Errorf("order %v", order)
	}
	if msg := run(t, r, "echo", `{"path":"secret"}`); text(msg) != `{"status":"blocked","tool":"echo","reason":"no secrets"}` {
		t.Errorf("block: %q", text(msg))
	}
}

func TestStepPanicIsContained(t *testing.T) {
	t.Parallel()
	r := newRunner(t, []tool.Tool{fn("echo", echo)}, invoke.WithLogger(slog.New(slog.DiscardHandler)), invoke.Use(func(invoke.Handler) invoke.Handler {
		return func(context.Context, *invoke.Request) tool.Result { panic("broken step") }
	}))
	msg := run(t, r, "echo", `{"path":"a"}`)
	if !msg.IsError || text(msg) != `{"status":"error","tool":"echo","error":"internal error in the tool pipeline: broken step"}` {
		t.Errorf("%+v", msg)
	}
}
