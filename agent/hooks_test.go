package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/toolbelt/toolbelt/agent"
	"github.com/toolbelt/toolbelt/invoke"
	"github.com/toolbelt/toolbelt/llm"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// hookEvents collects an agent's hook events as "hook:decision".
func hookEvents(a *agent.Agent) func() []string {
	var mu sync.Mutex
	var got []string
	a.OnEvent = func(e agent.Event) {
		if e.Type == agent.EventHook {
			mu.Lock()
			got = append(got, e.Hook+":"+e.Decision)
			mu.Unlock()
		}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestSessionPromptAndStopHooks: session_start adds context once per
// session (not on the second run), user_prompt_submit adds context after
// the prompt, a stop hook makes the run go on with its reason given to the
// model, and session_end runs at EndSession.
func TestSessionPromptAndStopHooks(t *testing.T) {
	runner, _ := tools(t)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "done, I think")},
		llmtest.Response{Body: llmtest.Anthropic("", "tests pass now")},
		llmtest.Response{Body: llmtest.Anthropic("", "second run")},
	)
	a := newAgent(t, "anthropic/claude-test", s, runner)
	events := hookEvents(a)
	var ends []agent.SessionEnd
	var stops []agent.Stop
	a.Hooks = agent.Hooks{
		SessionStart: func(_ context.Context, e agent.SessionStart) (agent.SessionStartDecision, error) {
			return agent.SessionStartDecision{Context: "session context: branch main (" + e.Source + ")"}, nil
		},
		UserPromptSubmit: func(_ context.Context, e agent.UserPromptSubmit) (agent.PromptDecision, error) {
			return agent.PromptDecision{Context: "prompt context for: " + e.Prompt}, nil
		},
		Stop: func(_ context.Context, e agent.Stop) (agent.StopDecision, error) {
			stops = append(stops, e)
			if e.Answer == "done, I think" {
				return agent.StopDecision{Continue: true, Reason: "run the tests before you stop"}, nil
			}
			return agent.StopDecision{}, nil
		},
		SessionEnd: func(_ context.Context, e agent.SessionEnd) error {
			ends = append(ends, e)
			return nil
		},
	}
	tr, err := a.Run(context.Background(), nil, llm.UserText("fix it"))
	if err != nil {
		t.Fatal(err)
	}
	if last := tr[len(tr)-1].Text(); last != "tests pass now" {
		t.Fatalf("last answer %q", last)
	}
	reqs := s.Requests()
	first := string(reqs[0].Body)
	for _, want := range []string{"session context: branch main (startup)", "fix it", "prompt context for: fix it"} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %q: %s", want, first)
		}
	}
	if !strings.Contains(string(reqs[1].Body), "run the tests before you stop") {
		t.Errorf("second request lacks the stop hook's reason: %s", reqs[1].Body)
	}
	if len(stops) != 2 || stops[0].Answer != "done, I think" || stops[1].Continues != 1 {
		t.Errorf("stop hook saw %+v", stops)
	}
	if _, err := a.Run(context.Background(), tr, llm.UserText("again")); err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(s.Requests()[2].Body), "session context") != 1 {
		t.Error("session_start ran again on the session's second run")
	}
	a.EndSession(context.Background(), "exit")
	a.EndSession(context.Background(), "exit") // once only
	if len(ends) != 1 || ends[0].Reason != "exit" {
		t.Errorf("session_end saw %+v", ends)
	}
	want := "session_start:observe user_prompt_submit:context stop:continue stop:stop user_prompt_submit:context stop:stop session_end:observe"
	if got := strings.Join(events(), " "); got != want {
		t.Errorf("hook events\n%s\nwant\n%s", got, want)
	}
}

// TestUserPromptSubmitBlocks: a hook that blocks the prompt, or fails, ends
// the run before any model call (fail closed).
func TestUserPromptSubmitBlocks(t *testing.T) {
	for name, hook := range map[string]func(context.Context, agent.UserPromptSubmit) (agent.PromptDecision, error){
		"block": func(context.Context, agent.UserPromptSubmit) (agent.PromptDecision, error) {
			return agent.PromptDecision{Block: true, Reason: "no secrets in prompts"}, nil
		},
		"error": func(context.Context, agent.UserPromptSubmit) (agent.PromptDecision, error) {
			return agent.PromptDecision{}, errors.New("hook down")
		},
		"panic": func(context.Context, agent.UserPromptSubmit) (agent.PromptDecision, error) { panic("bug") },
	} {
		t.Run(name, func(t *testing.T) {
			runner, _ := tools(t)
			s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "never")})
			a := newAgent(t, "anthropic/claude-test", s, runner)
			a.Hooks.UserPromptSubmit = hook
			_, err := a.Run(context.Background(), nil, llm.UserText("my password is hunter2"))
			var blocked *agent.HookBlocked
			if !errors.As(err, &blocked) || blocked.Event != agent.HookUserPromptSubmit {
				t.Fatalf("err = %v, want a *HookBlocked", err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("the model was called %d times", n)
			}
		})
	}
}

// TestUserPromptSubmitSeesQueuedMessages: a steering message and a
// follow-up that come during a run pass the user_prompt_submit hook as the
// prompt does; one it blocks ends the run before the model reads it.
func TestUserPromptSubmitSeesQueuedMessages(t *testing.T) {
	noSecrets := func(_ context.Context, e agent.UserPromptSubmit) (agent.PromptDecision, error) {
		return agent.PromptDecision{Block: strings.Contains(e.Prompt, "hunter2"), Reason: "no secrets in prompts"}, nil
	}
	t.Run("steering", func(t *testing.T) {
		runner, _ := tools(t)
		s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "never")})
		a := newAgent(t, "anthropic/claude-test", s, runner)
		a.Hooks.UserPromptSubmit = noSecrets
		a.OnEvent = func(e agent.Event) {
			if e.Type == agent.EventMessageEnd && e.Message.Text() == "hello" {
				a.Steer(llm.UserText("my password is hunter2"))
			}
		}
		_, err := a.Run(context.Background(), nil, llm.UserText("hello"))
		var blocked *agent.HookBlocked
		if !errors.As(err, &blocked) || blocked.Reason != "no secrets in prompts" {
			t.Fatalf("err = %v, want the steering message blocked", err)
		}
		if n := len(s.Requests()); n != 0 {
			t.Errorf("the model was called %d times", n)
		}
	})
	t.Run("follow-up", func(t *testing.T) {
		runner, _ := tools(t)
		s := llmtest.New(t, llmtest.Response{Body: llmtest.Anthropic("", "hi")}, llmtest.Response{Body: llmtest.Anthropic("", "never")})
		a := newAgent(t, "anthropic/claude-test", s, runner)
		a.Hooks.UserPromptSubmit = noSecrets
		a.FollowUp(llm.UserText("my password is hunter2"))
		_, err := a.Run(context.Background(), nil, llm.UserText("hello"))
		var blocked *agent.HookBlocked
		if !errors.As(err, &blocked) {
			t.Fatalf("err = %v, want the follow-up blocked", err)
		}
		if n := len(s.Requests()); n != 1 {
			t.Errorf("the model was called %d times, want once (before the follow-up)", n)
		}
	})
}

// TestStopHookIsBounded: a stop hook that always asks to go on makes a run
// go on MaxStopContinues times, then it stops.
func TestStopHookIsBounded(t *testing.T) {
	runner, _ := tools(t)
	var rs []llmtest.Response
	for range agent.MaxStopContinues + 2 {
		rs = append(rs, llmtest.Response{Body: llmtest.Anthropic("", "stopping")})
	}
	s := llmtest.New(t, rs...)
	a := newAgent(t, "anthropic/claude-test", s, runner)
	events := hookEvents(a)
	a.Hooks.Stop = func(context.Context, agent.Stop) (agent.StopDecision, error) {
		return agent.StopDecision{Continue: true, Reason: "keep going"}, nil
	}
	if _, err := a.Run(context.Background(), nil, llm.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != agent.MaxStopContinues+1 {
		t.Errorf("%d model calls, want %d", n, agent.MaxStopContinues+1)
	}
	if got := events(); got[len(got)-1] != "stop:limit" {
		t.Errorf("hook events %v", got)
	}
}

// TestPermissionRequestHook: the agent's permission_request hook answers
// for a call that needs approval, with updated input, before anyone is
// asked; without it the call is blocked, nobody being there to ask.
func TestPermissionRequestHook(t *testing.T) {
	for _, withHook := range []bool{true, false} {
		runner, _ := tools(t)
		runner.Hooks().OnBefore("asks", 0, func(context.Context, invoke.BeforeToolCall) (invoke.BeforeDecision, error) {
			return invoke.BeforeDecision{RequireApproval: true, ApprovalMessage: "reading needs a yes"}, nil
		})
		s := llmtest.New(t,
			llmtest.Response{Body: llmtest.Anthropic("", "", llmtest.Call{ID: "toolu_1", Name: "read", Args: `{"path":"a.txt"}`})},
			llmtest.Response{Body: llmtest.Anthropic("", "done")},
		)
		a := newAgent(t, "anthropic/claude-test", s, runner)
		var seen invoke.PermissionRequest
		if withHook {
			a.Hooks.PermissionRequest = func(_ context.Context, r invoke.PermissionRequest) (invoke.PermissionDecision, error) {
				seen = r
				return invoke.PermissionDecision{Decision: invoke.PermissionAllow, Params: map[string]any{"path": "b.txt"}}, nil
			}
		}
		tr, err := a.Run(context.Background(), nil, llm.UserText("read a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := tr[2].Text()
		switch {
		case withHook && (got != "beta says bye" || seen.Tool != "read" || seen.Params["path"] != "a.txt"):
			t.Errorf("with the hook: result %q, hook saw %+v", got, seen)
		case !withHook && !strings.Contains(got, "no one is available to approve it"):
			t.Errorf("without the hook: result %q", got)
		}
	}
}

// TestObservingHooks: pre_compact, subagent_start and subagent_stop run
// with their payloads; a failing one is reported, nothing more.
func TestObservingHooks(t *testing.T) {
	runner, _ := tools(t)
	a := newAgent(t, "anthropic/claude-test", llmtest.New(t), runner)
	events := hookEvents(a)
	var compact agent.PreCompact
	var start agent.SubagentStart
	a.Hooks = agent.Hooks{
		PreCompact: func(_ context.Context, e agent.PreCompact) error { compact = e; return nil },
		SubagentStart: func(_ context.Context, e agent.SubagentStart) error {
			start = e
			return nil
		},
		SubagentStop: func(context.Context, agent.SubagentStop) error { return errors.New("log server down") },
	}
	msgs := []llm.Message{llm.UserText("old"), llm.UserText("older")}
	a.RunPreCompact(context.Background(), agent.PreCompact{Trigger: "auto", Messages: msgs, Tokens: 9000})
	a.RunSubagentStart(context.Background(), agent.SubagentStart{Session: "p", Child: "c", Agent: "coder", Task: "fix"})
	a.RunSubagentStop(context.Background(), agent.SubagentStop{Session: "p", Child: "c", Status: "done"})
	if compact.Trigger != "auto" || compact.Tokens != 9000 || len(compact.Messages) != 2 || start.Child != "c" || start.Task != "fix" {
		t.Errorf("hooks saw %+v and %+v", compact, start)
	}
	if got := strings.Join(events(), " "); got != "pre_compact:observe subagent_start:observe subagent_stop:error" {
		t.Errorf("hook events %s", got)
	}
}
