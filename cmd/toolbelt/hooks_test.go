package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/internal/stdwebhook"
	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// TestRunLifecycleHooks: toolbelt run runs toolbelt.yaml's lifecycle hooks:
// session_start's context reaches the model, a permission_request hook
// lets an exec call that would need a person run, a signed HTTP stop hook
// makes the run go on once with its reason, session_end runs at the end;
// a user_prompt_submit hook that exits 2 stops a run before any model call.
func TestRunLifecycleHooks(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var mu sync.Mutex
	var stops int
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := stdwebhook.Verify(secret, r.Header, body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		stops++
		if stops == 1 {
			_, _ = io.WriteString(w, `{"decision":"continue","reason":"say goodbye too"}`)
		}
	}))
	defer hook.Close()
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Chat("", "", llmtest.Call{ID: "c1", Name: "exec", Args: `{"command":"touch made && echo hooked-run"}`})},
		llmtest.Response{Body: llmtest.Chat("", "Ran it.")},
		llmtest.Response{Body: llmtest.Chat("", "Goodbye.")},
	)
	dir := t.TempDir()
	ended := filepath.Join(dir, "ended")
	cfg := filepath.Join(dir, "toolbelt.yaml")
	yaml := `hooks:
  session_start:
    - command: "echo '{\"context\":\"the branch is main\"}'"
  user_prompt_submit:
    - command: "grep -q password && { echo 'no passwords' >&2; exit 2; } || true"
  permission_request:
    - command: "grep -q hooked-run && echo '{\"decision\":\"allow\"}' || true"
  stop:
    - url: ` + hook.URL + `
      secret: ${TB_TEST_HOOK_SECRET}
  session_end:
    - command: "cat > ` + ended + `"
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(cliEnvironment(t), "TB_TEST_HOOK_SECRET="+secret)
	r := runCLIWith(t, env, "", "", "--config", cfg, "run", "--workspace", dir, "--model", "vllm/m", "--base-url", s.URL+"/v1", "run echo").expect(t, 0)
	if r.stdout != "Goodbye.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Body), "the branch is main") {
		t.Error("the model did not read session_start's context")
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err != nil {
		t.Errorf("exec did not run: %v; the model read %s", err, reqs[1].Body)
	}
	if !strings.Contains(string(reqs[2].Body), "say goodbye too") {
		t.Error("the model did not read the stop hook's reason")
	}
	if b, err := os.ReadFile(ended); err != nil || !strings.Contains(string(b), `"event":"session_end"`) {
		t.Errorf("session_end hook read %q (%v)", b, err)
	}
	r = runCLIWith(t, env, "", "", "--config", cfg, "run", "--workspace", dir, "--model", "vllm/m", "--base-url", s.URL+"/v1", "my password is x")
	if r.code == 0 || !strings.Contains(r.stderr, "no passwords") || len(s.Requests()) != 3 {
		t.Errorf("blocked prompt: code %d, stderr %q, %d model calls", r.code, r.stderr, len(s.Requests()))
	}
}
