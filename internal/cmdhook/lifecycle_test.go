package cmdhook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
	"github.com/toolbelt/toolbelt/registry"
	"github.com/toolbelt/toolbelt/tool"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// transport makes hooks that answer answer and record what they read, as
// commands or as HTTP hooks; inputs returns the records, in order.
type transport struct {
	name   string
	hook   func(answer string) Hook
	inputs func() []map[string]any
}

// commandTransport runs hooks as commands that append their input to a
// file.
func commandTransport(t *testing.T) transport {
	log := filepath.Join(t.TempDir(), "inputs")
	return transport{
		name: "command",
		hook: func(answer string) Hook {
			return Hook{Command: "{ cat; echo; } >> " + log + "; printf '%s' '" + answer + "'"}
		},
		inputs: func() []map[string]any {
			b, _ := os.ReadFile(log)
			return decodeLines(t, strings.Split(strings.TrimSpace(string(b)), "\n"))
		},
	}
}

// httpTransport runs hooks as HTTP hooks of a server on 127.0.0.1 that
// refuses a request whose Standard Webhooks signature does not verify
// under testSecret.
func httpTransport(t *testing.T) transport {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := stdwebhook.Verify(testSecret, r.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		_, _ = io.WriteString(w, r.URL.Query().Get("answer"))
	}))
	t.Cleanup(srv.Close)
	return transport{
		name: "http",
		hook: func(answer string) Hook {
			return Hook{URL: srv.URL + "/hook?answer=" + urlQuery(answer), Secret: testSecret}
		},
		inputs: func() []map[string]any {
			mu.Lock()
			defer mu.Unlock()
			return decodeLines(t, bodies)
		},
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", "?", "%3F", "=", "%3D")
	return r.Replace(s)
}

// resultOf is the text of the transcript's first tool result.
func resultOf(transcript []llm.Message) string {
	for _, m := range transcript {
		if m.Role == llm.RoleToolResult {
			return m.Text()
		}
	}
	return ""
}

func decodeLines(t *testing.T, lines []string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("hook input %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// hookAgent returns an agent over a replayed Anthropic stream whose runner
// has an echo tool that needs approval (a before hook asks for it).
func hookAgent(t *testing.T, s *llmtest.Server, permission []Hook) *agent.Agent {
	reg := registry.New()
	if err := reg.Register(echoTool("echo")); err != nil {
		t.Fatal(err)
	}
	h := invoke.NewHooks()
	h.OnBefore("asks", 0, func(context.Context, invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
		return invoke.BeforeDecision{RequireApproval: true, ApprovalMessage: "echo needs a yes"}, nil
	})
	InstallPermission(h, permission, Options{Dir: t.TempDir()})
	r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir(), SessionKey: "agent:main:s1"}}, invoke.WithHooks(h))
	c, err := llm.New("anthropic/claude-test", llm.Options{BaseURL: s.URL, APIKey: "k", Retry: &llm.Retry{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &agent.Agent{Client: c, Runner: r}
}

// TestLifecycleHooks: every event's hooks, as commands and as signed HTTP
// hooks, over a replayed stream: session_start and user_prompt_submit add
// context the model reads, permission_request allows a call with updated
// input, stop makes the run go on with a reason the model reads (bounded),
// and the observing events get their payloads.
func TestLifecycleHooks(t *testing.T) {
	for _, tr := range []transport{commandTransport(t), httpTransport(t)} {
		t.Run(tr.name, func(t *testing.T) {
			rs := []llmtest.Response{{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "echo", Args: `{"a":1}`})}}
			for range agent.MaxStopContinues + 1 {
				rs = append(rs, llmtest.Response{Body: llmtest.Anthropic("", "done")})
			}
			s := llmtest.New(t, rs...)
			a := hookAgent(t, s, []Hook{tr.hook(`{"decision":"allow","params":{"a":2}}`)})
			a.Hooks = AgentHooks(Events{
				SessionStart:     []Hook{tr.hook(`{"context":"from session_start"}`)},
				UserPromptSubmit: []Hook{tr.hook(`{"context":"from user_prompt_submit"}`)},
				Stop:             []Hook{tr.hook(`{"decision":"continue","reason":"check again"}`)},
				SessionEnd:       []Hook{tr.hook(``)},
				PreCompact:       []Hook{tr.hook(``)},
				SubagentStart:    []Hook{tr.hook(``)},
				SubagentStop:     []Hook{tr.hook(``)},
			}, Options{Dir: t.TempDir()})
			var failed []string
			a.OnEvent = func(e agent.Event) {
				if e.Type == agent.EventHook && e.Decision == "error" {
					failed = append(failed, e.Hook+": "+e.Error)
				}
			}
			ctx := context.Background()
			transcript, err := a.Run(ctx, nil, llm.UserText("echo something"))
			if err != nil {
				t.Fatal(err)
			}
			a.RunPreCompact(ctx, agent.PreCompact{Trigger: "auto", Messages: transcript[:1], Tokens: 1234})
			a.RunSubagentStart(ctx, agent.SubagentStart{Session: "agent:main:s1", Child: "agent:coder:subagent:x", Agent: "coder", Task: "fix"})
			a.RunSubagentStop(ctx, agent.SubagentStop{Session: "agent:main:s1", Child: "agent:coder:subagent:x", Agent: "coder", Status: "done", Answer: "fixed"})
			a.EndSession(ctx, "exit")
			if len(failed) > 0 {
				t.Fatalf("hooks failed: %v", failed)
			}
			reqs := s.Requests()
			if len(reqs) != agent.MaxStopContinues+2 {
				t.Fatalf("%d model calls, want %d", len(reqs), agent.MaxStopContinues+2)
			}
			for _, want := range []string{"from session_start", "from user_prompt_submit"} {
				if !strings.Contains(string(reqs[0].Body), want) {
					t.Errorf("the model did not read %q", want)
				}
			}
			if !strings.Contains(string(reqs[2].Body), "check again") {
				t.Error("the model did not read the stop hook's reason")
			}
			if got := resultOf(transcript); got != `{"a":2}` {
				t.Errorf("the call ran with %s, want the permission hook's updated input", got)
			}
			var events []string
			byEvent := map[string]map[string]any{}
			for _, in := range tr.inputs() {
				ev, _ := in["event"].(string)
				events = append(events, ev)
				byEvent[ev] = in
			}
			want := "session_start user_prompt_submit permission_request stop stop stop pre_compact subagent_start subagent_stop session_end"
			if got := strings.Join(events, " "); got != want {
				t.Errorf("hooks ran for\n%s\nwant\n%s", got, want)
			}
			for ev, fields := range map[string]map[string]any{
				"session_start":      {"session": "agent:main:s1", "source": "startup"},
				"user_prompt_submit": {"prompt": "echo something"},
				"permission_request": {"tool": "echo", "reason": "requested by the asks hook: echo needs a yes"},
				"stop":               {"continues": 2.0, "answer": "done"},
				"pre_compact":        {"trigger": "auto", "tokens": 1234.0},
				"subagent_start":     {"child": "agent:coder:subagent:x", "task": "fix"},
				"subagent_stop":      {"status": "done", "answer": "fixed"},
				"session_end":        {"reason": "exit"},
			} {
				for k, v := range fields {
					if byEvent[ev][k] != v {
						t.Errorf("%s hook read %s = %v, want %v (input %v)", ev, k, byEvent[ev][k], v, byEvent[ev])
					}
				}
			}
			if msgs, _ := byEvent["pre_compact"]["messages"].([]any); len(msgs) != 1 {
				t.Errorf("pre_compact hook read messages %v", byEvent["pre_compact"]["messages"])
			}
		})
	}
}

// TestBlockingLifecycleHooksFailClosed: a user_prompt_submit hook that
// blocks, fails, or whose HTTP request is refused (a wrong secret) ends the
// run before the model is called; a permission_request hook that fails
// blocks the call.
func TestBlockingLifecycleHooksFailClosed(t *testing.T) {
	tr := httpTransport(t)
	wrongSecret := tr.hook(`{}`)
	wrongSecret.Secret = "whsec_" + strings.Repeat("QUFB", 8)
	// A redirect to a hook that would let the prompt through is not its
	// answer.
	allowing := tr.hook(`{}`).URL
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, allowing, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	for name, hook := range map[string]Hook{
		"http redirect":   {URL: redirect.URL + "/hook", Secret: testSecret},
		"http elsewhere":  {URL: "http://hooks.example.invalid/hook", Secret: testSecret},
		"exit 2":          {Command: "echo 'no secrets' >&2; exit 2"},
		"json block":      {Command: `echo '{"decision":"block","reason":"no secrets"}'`},
		"exit 1":          {Command: "exit 1"},
		"garbage":         {Command: "echo nope"},
		"timeout":         {Command: "sleep 30", Timeout: 100 * time.Millisecond},
		"http block":      tr.hook(`{"decision":"block","reason":"no secrets"}`),
		"http bad secret": wrongSecret,
		"http down":       {URL: "http://127.0.0.1:1/hook", Secret: testSecret},
	} {
		t.Run(name, func(t *testing.T) {
			s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "never")})
			a := hookAgent(t, s, nil)
			a.Hooks = AgentHooks(Events{UserPromptSubmit: []Hook{hook}}, Options{Dir: t.TempDir()})
			_, err := a.Run(context.Background(), nil, llm.UserText("my password is hunter2"))
			var blocked *agent.HookBlocked
			if !errors.As(err, &blocked) {
				t.Fatalf("err = %v, want the prompt blocked", err)
			}
			if strings.Contains(name, "block") || name == "exit 2" {
				if blocked.Reason != "no secrets" {
					t.Errorf("reason %q", blocked.Reason)
				}
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("the model was called %d times", n)
			}
		})
	}
	t.Run("permission_request fails", func(t *testing.T) {
		s := llmtest.New(t,
			llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "echo", Args: `{"a":1}`})},
			llmtest.Response{Body: llmtest.Anthropic("", "ok")})
		a := hookAgent(t, s, []Hook{wrongSecret})
		transcript, err := a.Run(context.Background(), nil, llm.UserText("echo"))
		if err != nil {
			t.Fatal(err)
		}
		if got := resultOf(transcript); !strings.Contains(got, invoke.PermissionHookFailed) {
			t.Errorf("result %s", got)
		}
	})
}

// TestHTTPToolHooks: the tool hooks take url and secret too: a signed
// before hook changes the arguments, one refused for its signature blocks
// the call, and an after hook reads the call.
func TestHTTPToolHooks(t *testing.T) {
	tr := httpTransport(t)
	bad := tr.hook(`{}`)
	bad.Secret = "whsec_" + strings.Repeat("QUFB", 8)
	r, _ := setup(t, []Hook{tr.hook(`{"params":{"a":2}}`)}, []Hook{tr.hook(``)})
	if got := textOf(run(r, "echo", `{"a":1}`)); got != `{"a":2}` {
		t.Errorf("result %s", got)
	}
	if in := tr.inputs(); len(in) != 2 || in[0]["event"] != "before_tool_call" || in[1]["event"] != "after_tool_call" {
		t.Errorf("hooks read %v", in)
	}
	r, _ = setup(t, []Hook{bad}, nil)
	if got := textOf(run(r, "echo", `{"a":1}`)); !strings.Contains(got, invoke.HookFailed) {
		t.Errorf("result %s", got)
	}
}

// TestHTTPHookURLNotLogged: an HTTP hook without a name is named by its
// URL without user information, query or fragment, which may hold a
// token: the log of its failure, the call's result and the error of an
// endpoint it refuses show the path and none of the token.
func TestHTTPHookURLNotLogged(t *testing.T) {
	t.Parallel()
	for name, raw := range map[string]string{
		"down":      "http://user:pw-s3cr3t@127.0.0.1:1/hook?token=tok-s3cr3t#frag-s3cr3t",
		"elsewhere": "http://user:pw-s3cr3t@hooks.example.invalid/hook?token=tok-s3cr3t",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			var mu sync.Mutex
			reg := registry.New()
			if err := reg.Register(echoTool("echo")); err != nil {
				t.Fatal(err)
			}
			h := invoke.NewHooks()
			Install(h, []Hook{{URL: raw, Secret: testSecret}}, nil, nil, Options{Registry: reg, Dir: t.TempDir()})
			logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logs.Write(p)
			}), nil))
			r := invoke.New(reg, &tool.Context{Identity: tool.Identity{Workspace: t.TempDir()}}, invoke.WithHooks(h), invoke.WithLogger(logger))
			res := textOf(run(r, "echo", `{"a":1}`))
			mu.Lock()
			all := logs.String() + "\n" + res
			mu.Unlock()
			if !strings.Contains(all, "/hook") {
				t.Errorf("the hook is not named by its URL's path:\n%s", all)
			}
			if strings.Contains(all, "s3cr3t") || strings.Contains(all, "token=") {
				t.Errorf("a secret of the hook's URL is shown:\n%s", all)
			}
			if !strings.Contains(res, invoke.HookFailed) {
				t.Errorf("the failing hook did not block the call: %s", res)
			}
		})
	}
	if got := stdwebhook.Display("https://u:p@h.example:8443/a/b?x=1#f"); got != "https://h.example:8443/a/b" {
		t.Errorf("Display = %q", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
