package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	pngenc "image/png"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

var files = map[string]string{"a.txt": "alpha says hi", "b.txt": "beta says bye"}

type readArgs struct {
	Path string `json:"path" jsonschema:"File to read" maxLength:"100"`
}

type waitArgs struct{}

// tools returns a registry with read (from files), wait (until cancelled;
// started is closed when it runs) and a runner over it.
func tools(t testing.TB) (*invoke.Runner, chan struct{}) {
	reg := registry.New()
	read := tool.Must(tool.New("read", "Read a file.", func(ctx context.Context, in readArgs, inv tool.Invocation) (tool.Result, error) {
		s, ok := files[in.Path]
		if !ok {
			return tool.Result{}, errors.New("no such file: " + in.Path)
		}
		return tool.Text(s), nil
	}))
	read.Meta = tool.Meta{ReadOnly: true}
	started := make(chan struct{})
	var once sync.Once
	wait := tool.Must(tool.New("wait", "Wait.", func(ctx context.Context, in waitArgs, inv tool.Invocation) (tool.Result, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}))
	wait.Meta = tool.Meta{ReadOnly: true}
	for _, tl := range []tool.Tool{read, wait} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return invoke.New(reg, nil), started
}

var fastRetry = &llm.Retry{Attempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond, MaxWait: time.Second}

type wireCase struct {
	spec string
	body func(string, string, ...llmtest.Call) string
	// results returns the second request's tool results: (id, text, isError) in order.
	results func(t *testing.T, req map[string]any) [][3]any
}

func list(v any) []any { l, _ := v.([]any); return l }
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

var wires = []wireCase{
	{"anthropic/claude-test", llmtest.Anthropic, func(t *testing.T, req map[string]any) [][3]any {
		msgs := list(req["messages"])
		var out [][3]any
		for _, b := range list(obj(msgs[len(msgs)-1])["content"]) {
			b := obj(b)
			if b["type"] == "tool_result" {
				out = append(out, [3]any{b["tool_use_id"], obj(list(b["content"])[0])["text"], b["is_error"] == true})
			}
		}
		return out
	}},
	{"openai/gpt-test", llmtest.Chat, chatResults},
	{"ollama/llama-test", llmtest.Chat, chatResults},
	{"openai-responses/gpt-test", llmtest.Responses, func(t *testing.T, req map[string]any) [][3]any {
		var out [][3]any
		for _, it := range list(req["input"]) {
			it := obj(it)
			if it["type"] == "function_call_output" {
				out = append(out, [3]any{it["call_id"], it["output"], strings.HasPrefix(it["output"].(string), `{"status":"error"`)})
			}
		}
		return out
	}},
	{"google/gemini-test", llmtest.Gemini, func(t *testing.T, req map[string]any) [][3]any {
		cs := list(req["contents"])
		var out [][3]any
		for _, p := range list(obj(cs[len(cs)-1])["parts"]) {
			fr := obj(obj(p)["functionResponse"])
			if fr == nil {
				continue
			}
			r := obj(fr["response"])
			text, isErr := r["output"], false
			if e, ok := r["error"]; ok {
				text, isErr = e, true
			}
			out = append(out, [3]any{fr["name"], text, isErr})
		}
		return out
	}},
}

func chatResults(t *testing.T, req map[string]any) [][3]any {
	var out [][3]any
	for _, m := range list(req["messages"]) {
		m := obj(m)
		if m["role"] == "tool" {
			out = append(out, [3]any{m["tool_call_id"], m["content"], strings.HasPrefix(m["content"].(string), `{"status":"error"`)})
		}
	}
	return out
}

func baseURL(s *llmtest.Server, spec string) string {
	if strings.HasPrefix(spec, "anthropic") || strings.HasPrefix(spec, "google") {
		return s.URL
	}
	return s.URL + "/v1"
}

func newAgent(t testing.TB, spec string, s *llmtest.Server, r *invoke.Runner) *agent.Agent {
	c, err := llm.New(spec, llm.Options{BaseURL: baseURL(s, spec), APIKey: "k", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	return &agent.Agent{Client: c, Runner: r}
}

// TestLoopPerProvider: two parallel calls (one split in 1-byte fragments,
// one for a file that does not exist), an unknown tool and malformed
// arguments in one turn; the results go back in the provider's format, in
// the model's order, with the ids as issued; then the final answer.
func TestLoopPerProvider(t *testing.T) {
	for _, w := range wires {
		t.Run(w.spec, func(t *testing.T) {
			runner, _ := tools(t)
			calls := []llmtest.Call{
				{ID: "call_1", Name: "read", Args: `{"path": "a.txt"}`, Piece: 1},
				{ID: "call_2", Name: "read", Args: `{"path": "missing.txt"}`},
				{ID: "call_3", Name: "raed_file", Args: `{}`},
				{ID: "call_4", Name: "read", Args: `{"path": "b.txt",}`},
			}
			s := llmtest.New(t, llmtest.Response{Body: w.body("", "Reading.", calls...), Chunk: 5}, llmtest.Response{Body: w.body("", "a.txt says: alpha says hi")})
			a := newAgent(t, w.spec, s, runner)
			var mu sync.Mutex
			var types []agent.EventType
			ends := map[string]any{} // tool_execution_end's isError by call, as written
			a.OnEvent = func(e agent.Event) {
				mu.Lock()
				types = append(types, e.Type)
				if e.Type == agent.EventToolEnd {
					var m map[string]any
					b, _ := json.Marshal(e)
					_ = json.Unmarshal(b, &m)
					ends[e.ToolCallID] = m["isError"]
				}
				mu.Unlock()
			}
			tr, err := a.Run(context.Background(), nil, llm.UserText("read a.txt and tell me what it says"))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr) != 7 || tr[len(tr)-1].Text() != "a.txt says: alpha says hi" {
				t.Fatalf("transcript: %d messages, last %q", len(tr), tr[len(tr)-1].Text())
			}
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			got := w.results(t, reqs[1].JSON(t))
			if len(got) != 4 {
				t.Fatalf("second request carries %d results: %v", len(got), got)
			}
			gemini := strings.HasPrefix(w.spec, "google")
			for i, want := range []struct {
				id, name, text string
				isErr          bool
			}{
				{"call_1", "read", "alpha says hi", false},
				{"call_2", "read", `{"status":"error","tool":"read","error":"no such file: missing.txt"}`, true},
				{"call_3", "raed_file", `{"status":"error","tool":"raed_file","error":"Tool \"raed_file\" not found`, true},
				{"call_4", "read", "beta says bye", false},
			} {
				id := want.id
				if gemini {
					id = want.name // Gemini matches results by name and order
				}
				if got[i][0] != id || !strings.HasPrefix(got[i][1].(string), want.text) || got[i][2] != want.isErr {
					t.Errorf("result %d = %v; want %s %q error=%v", i, got[i], id, want.text, want.isErr)
				}
			}
			// The transcript keeps ids as issued, results in the model's order,
			// and the repair of call 4 in its details.
			for i, m := range tr[2:6] {
				if m.Role != llm.RoleToolResult || m.ToolCallID != tr[1].ToolCalls()[i].ID {
					t.Errorf("result %d answers %q, want %q", i, m.ToolCallID, tr[1].ToolCalls()[i].ID)
				}
			}
			if d, _ := tr[5].Details.(map[string]any); !strings.Contains(fmt.Sprint(d["argumentsRepaired"]), llm.RepairCommas) {
				t.Errorf("details of the repaired call: %v", tr[5].Details)
			}
			want := []agent.EventType{agent.EventAgentStart, agent.EventMessageStart, agent.EventMessageEnd, agent.EventTurnStart, agent.EventMessageStart}
			if len(types) < len(want) || !equal(types[:len(want)], want) || types[len(types)-1] != agent.EventAgentEnd {
				t.Errorf("events start %v … end %v", types[:min(len(types), 6)], types[len(types)-1])
			}
			// The seeds' tool_execution_end {toolCallId, toolName, result,
			// isError}: isError written, false included.
			if ends[tr[2].ToolCallID] != false || ends[tr[3].ToolCallID] != true {
				t.Errorf("tool_execution_end isError by call = %v, want false for the read that ran and true for the missing file", ends)
			}
			count := map[agent.EventType]int{}
			for _, e := range types {
				count[e]++
			}
			if count[agent.EventToolStart] != 4 || count[agent.EventToolEnd] != 4 || count[agent.EventTurnStart] != 2 || count[agent.EventTurnEnd] != 2 || count[agent.EventMessageUpdate] < 10 {
				t.Errorf("event counts %v", count)
			}
		})
	}
}

func equal(a, b []agent.EventType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTranscriptJSON(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("hmm", "", llmtest.Call{ID: "toolu_1", Name: "read", Args: `{"path":"a.txt"}`})}, llmtest.Response{Body: llmtest.Anthropic("", "done")})
	tr, err := newAgent(t, "anthropic/x", s, runner).Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tr)
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range back {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,toolResult,assistant" {
		t.Fatalf("roles %v", roles)
	}
	blocks := list(back[1]["content"])
	if obj(blocks[0])["type"] != "thinking" || obj(blocks[0])["thinking"] != "hmm" {
		t.Errorf("thinking block %v", blocks[0])
	}
	call := obj(blocks[1])
	if call["type"] != "toolCall" || call["id"] != "toolu_1" || call["name"] != "read" || obj(call["arguments"])["path"] != "a.txt" {
		t.Errorf("toolCall block %v", call)
	}
	if back[2]["toolCallId"] != "toolu_1" || obj(list(back[2]["content"])[0])["text"] != "alpha says hi" {
		t.Errorf("tool result %v", back[2])
	}
}

func TestMaxTurns(t *testing.T) {
	runner, _ := tools(t)
	call := llmtest.Call{ID: "c", Name: "read", Args: `{"path":"a.txt"}`}
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", call)}, llmtest.Response{Body: llmtest.Chat("", "", call)})
	a := newAgent(t, "openai/x", s, runner)
	a.MaxTurns = 2
	tr, err := a.Run(context.Background(), nil, llm.UserText("loop"))
	if !errors.Is(err, agent.ErrMaxTurns) || len(s.Requests()) != 2 {
		t.Fatalf("err %v after %d requests", err, len(s.Requests()))
	}
	// The last turn's calls have their results.
	if last := tr[len(tr)-1]; last.Role != llm.RoleToolResult {
		t.Errorf("transcript ends with %s", last.Role)
	}
}

// TestAbortDuringTool: cancelling while a tool runs leaves every call with
// a result and the run reports the abort.
func TestAbortDuringTool(t *testing.T) {
	runner, started := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_w", Name: "wait", Args: `{}`}, llmtest.Call{ID: "toolu_r", Name: "read", Args: `{"path":"a.txt"}`})})
	a := newAgent(t, "anthropic/x", s, runner)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	tr, err := a.Run(ctx, nil, llm.UserText("wait"))
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(tr) != 4 || tr[2].ToolCallID != "toolu_w" || !tr[2].IsError || tr[3].ToolCallID != "toolu_r" {
		t.Fatalf("transcript after abort: %+v", tr)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("the model was called again after the abort")
	}
}

// TestProviderRejectsSchemaKeyword: a Gemini server answers 400 to a keyword
// its dialect cannot take; the compiled dialect is what is sent.
func TestProviderRejectsSchemaKeyword(t *testing.T) {
	runner, _ := tools(t)
	reject := func(body []byte) *llmtest.Response {
		if strings.Contains(string(body), `"maxLength"`) || strings.Contains(string(body), `"additionalProperties"`) {
			return &llmtest.Response{Status: 400, Body: `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"maxLength\"","status":"INVALID_ARGUMENT"}}`}
		}
		return nil
	}
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Gemini("", "ok"), Check: reject})
	if _, err := newAgent(t, "google/x", s, runner).Run(context.Background(), nil, llm.UserText("hi")); err != nil {
		t.Fatalf("gemini got a keyword it rejects: %v", err)
	}
	body := string(s.Requests()[0].Body)
	if !strings.Contains(body, `"functionDeclarations"`) || !strings.Contains(body, "100") {
		t.Errorf("tools sent: %s", body)
	}
	// The same tools to Anthropic keep the keyword.
	s = llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "ok")})
	if _, err := newAgent(t, "anthropic/x", s, runner).Run(context.Background(), nil, llm.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s.Requests()[0].Body), `"maxLength":100`) {
		t.Errorf("anthropic lost maxLength: %s", s.Requests()[0].Body)
	}
}

func TestProviderErrorEndsRunWithTranscript(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Status: 401, Body: `{"error":{"message":"Incorrect API key provided"}}`})
	tr, err := newAgent(t, "openai/x", s, runner).Run(context.Background(), nil, llm.UserText("hi"))
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("err = %v", err)
	}
	if len(tr) != 2 || tr[1].StopReason != "error" || tr[1].ErrorMessage == "" {
		t.Errorf("transcript %+v", tr)
	}
}

func TestSteering(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "read", Args: `{"path":"a.txt"}`})}, llmtest.Response{Body: llmtest.Chat("", "ok")})
	a := newAgent(t, "openai/x", s, runner)
	a.OnEvent = func(e agent.Event) {
		if e.Type == agent.EventToolStart {
			a.Steer(llm.UserText("also, be brief"))
		}
	}
	tr, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if tr[3].Role != llm.RoleUser || tr[3].Text() != "also, be brief" {
		t.Fatalf("steering message not delivered after the results: %+v", tr[3])
	}
	if !strings.Contains(string(s.Requests()[1].Body), "also, be brief") {
		t.Errorf("the second request lacks the steering message")
	}
}

// TestSteeringInterruptsTools: a steering message that comes while a tool
// runs stops it; its result says it was interrupted, and the message
// follows it in the next request.
func TestSteeringInterruptsTools(t *testing.T) {
	runner, started := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "wait", Args: `{}`})}, llmtest.Response{Body: llmtest.Chat("", "ok")})
	a := newAgent(t, "openai/x", s, runner)
	go func() {
		<-started
		a.Steer(llm.UserText("never mind"))
	}()
	tr, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 5 || !tr[2].IsError || !strings.Contains(tr[2].Text(), "Tool wait was cancelled: "+agent.ErrSteered.Error()) || tr[3].Text() != "never mind" {
		t.Fatalf("transcript %+v", tr)
	}
	if body := string(s.Requests()[1].Body); !strings.Contains(body, agent.ErrSteered.Error()) || !strings.Contains(body, "never mind") {
		t.Errorf("the second request lacks the interrupted result or the message: %s", body)
	}
}

// TestEventsOnRunnerBus: a subscriber to the runner sees the agent's events
// and the runner's tool events, in one stream.
func TestEventsOnRunnerBus(t *testing.T) {
	runner, _ := tools(t)
	sub := runner.Subscribe(0)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "read", Args: `{"path":"a.txt"}`})}, llmtest.Response{Body: llmtest.Anthropic("", "done")})
	if _, err := newAgent(t, "anthropic/x", s, runner).Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	var types []string
	for e := range sub.Events() {
		if e.Type != invoke.EventType(agent.EventMessageUpdate) {
			types = append(types, string(e.Type))
		}
		if e.Type == invoke.EventType(agent.EventAgentEnd) {
			if ae, ok := e.Agent.(agent.Event); !ok || len(ae.Messages) != 4 {
				t.Errorf("agent_end carries %+v", e.Agent)
			}
		}
	}
	got := strings.Join(types, ",")
	want := "agent_start,message_start,message_end,turn_start,message_start,message_end,tool_execution_start,tool_execution_end,message_start,message_end,turn_end,turn_start,message_start,message_end,turn_end,agent_end"
	if got != want {
		t.Errorf("bus events:\n%s\nwant\n%s", got, want)
	}
}

func TestFollowUp(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "first answer")}, llmtest.Response{Body: llmtest.Chat("", "second answer")})
	a := newAgent(t, "openai/x", s, runner)
	a.FollowUp(llm.UserText("and one more thing"))
	tr, err := a.Run(context.Background(), nil, llm.UserText("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 4 || tr[1].Text() != "first answer" || tr[2].Text() != "and one more thing" || tr[3].Text() != "second answer" {
		t.Fatalf("transcript %+v", tr)
	}
}

// TestAnthropicOAuth: with a Claude subscription's OAuth token the requests
// are Claude Code's — Bearer authorization, its betas and identity, its
// tool names — and a tool_use named Read runs Toolbelt's read; its result
// goes back under the id as issued, and the call keeps Claude Code's name
// on the wire.
func TestAnthropicOAuth(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		oauth     bool
	}{
		{"token prefix", "sk-ant-oat01-test", false},
		{"configured", "subscription-token", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runner, _ := tools(t)
			s := llmtest.New(t,
				llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_01A", Name: "Read", Args: `{"path":"a.txt"}`})},
				llmtest.Response{Body: llmtest.Anthropic("", "It says hi.")})
			p, _ := llm.LookupProvider("anthropic")
			p.Quirks.OAuth = tc.oauth
			c, err := llm.NewClient(p, "claude-test", llm.Options{BaseURL: s.URL, APIKey: tc.key, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			a := &agent.Agent{Client: c, Runner: runner, System: "Be brief."}
			tr, err := a.Run(context.Background(), nil, llm.UserText("read a.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if calls := tr[1].ToolCalls(); len(calls) != 1 || calls[0].Name != "read" || calls[0].ID != "toolu_01A" {
				t.Fatalf("the call in the transcript: %+v", calls)
			}
			if tr[2].ToolName != "read" || tr[2].IsError || tr[2].Text() != "alpha says hi" {
				t.Errorf("the result: %+v", tr[2])
			}
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				if r.Header.Get("Authorization") != "Bearer "+tc.key || r.Header.Get("X-Api-Key") != "" {
					t.Errorf("request %d: Authorization %q, x-api-key %q; want the token as a bearer only", i, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
				}
				if beta := r.Header.Get("Anthropic-Beta"); !strings.Contains(beta, "oauth-2025-04-20") || !strings.Contains(beta, "claude-code-20250219") {
					t.Errorf("request %d: anthropic-beta %q", i, beta)
				}
				if !strings.HasPrefix(r.Header.Get("User-Agent"), "claude-cli/") || r.Header.Get("X-App") != "cli" {
					t.Errorf("request %d: user-agent %q, x-app %q", i, r.Header.Get("User-Agent"), r.Header.Get("X-App"))
				}
			}
			first := reqs[0].JSON(t)
			var names []string
			for _, tl := range list(first["tools"]) {
				names = append(names, obj(tl)["name"].(string))
			}
			if strings.Join(names, ",") != "Read,wait" {
				t.Errorf("tools went out as %v, want Read (Claude Code's name) and wait (no Claude Code tool)", names)
			}
			system := list(first["system"])
			if len(system) != 2 || obj(system[0])["text"] != "You are Claude Code, Anthropic's official CLI for Claude." || obj(system[1])["text"] != "Be brief." {
				t.Errorf("system = %v", first["system"])
			}
			msgs := list(reqs[1].JSON(t)["messages"])
			use := obj(list(obj(msgs[1])["content"])[0])
			res := obj(list(obj(msgs[2])["content"])[0])
			if use["type"] != "tool_use" || use["name"] != "Read" || use["id"] != "toolu_01A" {
				t.Errorf("the call went back as %v", use)
			}
			if res["type"] != "tool_result" || res["tool_use_id"] != "toolu_01A" || obj(list(res["content"])[0])["text"] != "alpha says hi" {
				t.Errorf("the result went back as %v", res)
			}
		})
	}
}

// An API key is sent as x-api-key, the tools under their own names.
func TestAnthropicAPIKeyIsNotOAuth(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "hi")})
	c, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: s.URL, APIKey: "sk-ant-api03-test", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&agent.Agent{Client: c, Runner: runner, System: "Be brief."}).Run(context.Background(), nil, llm.UserText("hi")); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.Header.Get("X-Api-Key") != "sk-ant-api03-test" || r.Header.Get("Authorization") != "" || r.Header.Get("Anthropic-Beta") != "" {
		t.Errorf("headers %v", r.Header)
	}
	b := r.JSON(t)
	if b["system"] != "Be brief." || obj(list(b["tools"])[0])["name"] != "read" {
		t.Errorf("system %v, tools %v", b["system"], b["tools"])
	}
}

// TestResponsesImageInFunctionOutput: a tool's image goes back to the
// Responses API inside the function_call_output of its call, as input_text
// and input_image items.
func TestResponsesImageInFunctionOutput(t *testing.T) {
	var png bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	if err := pngenc.Encode(&png, img); err != nil {
		t.Fatal(err)
	}
	reg := registry.New()
	snap := tool.Must(tool.New("snap", "Take a picture.", func(ctx context.Context, in waitArgs, inv tool.Invocation) (tool.Result, error) {
		return tool.Image("a red dot", png.Bytes(), "image/png"), nil
	}))
	snap.Meta = tool.Meta{ReadOnly: true}
	if err := reg.Register(snap); err != nil {
		t.Fatal(err)
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Responses("", "", llmtest.Call{ID: "call_snap1", Name: "snap", Args: `{}`})},
		llmtest.Response{Body: llmtest.Responses("", "A red dot.")})
	a := newAgent(t, "openai-responses/gpt-test", s, invoke.New(reg, nil))
	if _, err := a.Run(context.Background(), nil, llm.UserText("what do you see?")); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	input := list(reqs[1].JSON(t)["input"])
	last := obj(input[len(input)-1])
	if last["type"] != "function_call_output" || last["call_id"] != "call_snap1" {
		t.Fatalf("the last input item is %v, want the call's output", last)
	}
	items := list(last["output"])
	if len(items) != 2 || obj(items[0])["type"] != "input_text" || obj(items[0])["text"] != "a red dot" ||
		obj(items[1])["type"] != "input_image" || !strings.HasPrefix(obj(items[1])["image_url"].(string), "data:image/png;base64,") {
		t.Errorf("output = %v, want the caption and the image", last["output"])
	}
}

// TestMistralCallIDs: on the wire to Mistral every call id has 9
// characters — ids from another provider's history and ids a server
// issued in another form are rewritten, the same for a call and its
// result — while the ids Mistral issues itself go back unchanged; the
// transcript keeps every id as it was issued.
func TestMistralCallIDs(t *testing.T) {
	runner, _ := tools(t)
	history := []llm.Message{
		llm.UserText("read a.txt"),
		{Role: llm.RoleAssistant, Provider: "openai", Content: []llm.Block{{Type: llm.BlockToolCall, ID: "call_Xy7sLq2Pz9Aa3Bb4Cc5Dd6Ee", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Role: llm.RoleToolResult, ToolCallID: "call_Xy7sLq2Pz9Aa3Bb4Cc5Dd6Ee", ToolName: "read", Content: []llm.Block{{Type: llm.BlockText, Text: "alpha says hi"}}},
		{Role: llm.RoleAssistant, Provider: "openai", Content: []llm.Block{{Type: llm.BlockText, Text: "It says hi."}}},
	}
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "D681PevKs", Name: "read", Args: `{"path":"b.txt"}`})},
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "call_1", Name: "read", Args: `{"path":"a.txt"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Done.")})
	tr, err := newAgent(t, "mistral/mistral-test", s, runner).Run(context.Background(), history, llm.UserText("and b.txt, then a.txt again"))
	if err != nil {
		t.Fatal(err)
	}
	nine := regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// wire returns the ids of the calls and of the results of a request, in order.
	wire := func(r llmtest.Request) (calls, results []string) {
		for _, m := range list(r.JSON(t)["messages"]) {
			for _, c := range list(obj(m)["tool_calls"]) {
				calls = append(calls, obj(c)["id"].(string))
			}
			if id, ok := obj(m)["tool_call_id"].(string); ok {
				results = append(results, id)
			}
		}
		return calls, results
	}
	calls, results := wire(reqs[2])
	if len(calls) != 3 || strings.Join(calls, ",") != strings.Join(results, ",") {
		t.Fatalf("last request: calls %v, results %v; want three calls, each answered under its id", calls, results)
	}
	for i, id := range calls {
		if !nine.MatchString(id) {
			t.Errorf("call %d went to Mistral as %q, not 9 characters", i, id)
		}
	}
	if calls[1] != "D681PevKs" {
		t.Errorf("Mistral's own id went back as %q", calls[1])
	}
	if first, _ := wire(reqs[0]); len(first) != 1 || first[0] != calls[0] {
		t.Errorf("the history's call went as %v, then as %q: the rewrite must be the same in every request", first, calls[0])
	}
	var ids []string
	for _, m := range tr {
		for _, c := range m.ToolCalls() {
			ids = append(ids, c.ID)
		}
		if m.Role == llm.RoleToolResult {
			ids = append(ids, m.ToolCallID)
		}
	}
	if want := "call_Xy7sLq2Pz9Aa3Bb4Cc5Dd6Ee,call_Xy7sLq2Pz9Aa3Bb4Cc5Dd6Ee,D681PevKs,D681PevKs,call_1,call_1"; strings.Join(ids, ",") != want {
		t.Errorf("transcript ids %v, want %s", ids, want)
	}
}

// TestGeminiThoughtSignature: the thoughtSignature Gemini attaches to a
// call's part goes back unchanged on that part in the next request.
func TestGeminiThoughtSignature(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Gemini("", "", llmtest.Call{Name: "read", Args: `{"path":"a.txt"}`, Signature: "CiQBVKhc7+sig/=="}, llmtest.Call{Name: "read", Args: `{"path":"b.txt"}`})},
		llmtest.Response{Body: llmtest.Gemini("", "Both read.")})
	if _, err := newAgent(t, "google/gemini-test", s, runner).Run(context.Background(), nil, llm.UserText("read a.txt and b.txt")); err != nil {
		t.Fatal(err)
	}
	contents := list(s.Requests()[1].JSON(t)["contents"])
	parts := list(obj(contents[1])["parts"])
	if len(parts) != 2 || obj(parts[0])["thoughtSignature"] != "CiQBVKhc7+sig/==" || obj(obj(parts[0])["functionCall"])["name"] != "read" {
		t.Errorf("the model's parts went back as %v", parts)
	}
	if _, has := obj(parts[1])["thoughtSignature"]; has {
		t.Errorf("a signature was added to the part that had none: %v", parts[1])
	}
}

// TestUnreadableArgumentsExcerpt: arguments that are not JSON and cannot be
// repaired are answered with an error quoting their start, cut after 300
// characters and never inside one (a cut inside "é" reaches the model as
// U+FFFD).
func TestUnreadableArgumentsExcerpt(t *testing.T) {
	t.Parallel()
	runner, _ := tools(t)
	args := `{"p":` + strings.Repeat("é", 400) + `}`
	s := llmtest.New(t, llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "read", Args: args, Piece: len(args)})}, llmtest.Response{Body: llmtest.Chat("", "ok")})
	tr, err := newAgent(t, "openai/x", s, runner).Run(context.Background(), nil, llm.UserText("read"))
	if err != nil {
		t.Fatal(err)
	}
	got := tr[2].Text()
	if want := `received: {\"p\":` + strings.Repeat("é", 295) + "…. Send"; !strings.Contains(got, want) || strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("the result is %q, want it to quote %q", got, want)
	}
}
