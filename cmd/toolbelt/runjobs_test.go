package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolbelt/toolbelt/llm/llmtest"
)

// asyncToolDir writes a directory tool "render" whose job is done at its
// first poll, in a tools folder under dir, and a config that loads it.
func asyncToolDir(t *testing.T, dir string) (config string) {
	t.Helper()
	return asyncToolDirAnswering(t, dir, `{"status": "completed", "result": "rendered clip.mp4"}`)
}

// asyncToolDirAnswering is asyncToolDir with poll, the answer to the first
// poll (one line of JSON without a single quote).
func asyncToolDirAnswering(t *testing.T, dir, poll string) (config string) {
	t.Helper()
	writeToolFolder(t, filepath.Join(dir, "tools", "render"), 0o755, map[string]string{
		"metadata.json": `{"name": "render", "description": "Renders a clip in the background.", "async": true, "asyncType": "polling", "pollingInterval": 0.1, "estimatedTime": 5}`,
		"schema.json":   `{"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}`,
		"handler.sh": `#!/bin/sh
req=$(cat)
case "$req" in
*'"operation":"submit"'*) echo '{"success": true, "taskId": "ext-1"}' ;;
*'"operation":"poll"'*) printf '%s\n' '` + poll + `' ;;
*) echo '{"success": false, "error": "unexpected"}' ;;
esac
`,
	})
	config = filepath.Join(dir, "toolbelt.yaml")
	if err := os.WriteFile(config, []byte("tools:\n  dirs:\n    - path: "+filepath.Join(dir, "tools")+"\n      trusted: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

// TestRunWaitsForJobs: the model calls an async tool and ends its turn;
// toolbelt run waits for the job, hands its result to the model as a
// follow-up, and returns the model's answer to it.
func TestRunWaitsForJobs(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	config := asyncToolDir(t, dir)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Starting the render.", llmtest.Call{ID: "toolu_01A", Name: "render", Args: `{"prompt": "a cat"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "The render is running; I will report when it is done.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Your clip is ready: rendered clip.mp4")})
	r := runCLI(t, "", "--config", config, "run", "--model", "anthropic/claude-test", "--base-url", s.URL, "--workspace", ws, "render a cat")
	r.expect(t, 0)
	if !strings.Contains(r.stdout, "Your clip is ready: rendered clip.mp4") {
		t.Errorf("stdout = %q", r.stdout)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (call, turn end, follow-up)", len(reqs))
	}
	second, third := compactJSON(t, reqs[1].Body), compactJSON(t, reqs[2].Body)
	if !strings.Contains(second, `\"status\":\"pending\"`) || !strings.Contains(second, `\"taskId\":\"task`) {
		t.Errorf("the tool result is not the pending envelope:\n%s", second)
	}
	if !strings.Contains(third, "[Background job task") || !strings.Contains(third, "of render completed.]") || !strings.Contains(third, "rendered clip.mp4") {
		t.Errorf("the follow-up lacks the job's result:\n%s", third)
	}
}

// TestJobsCommand: toolbelt call records an async tool's job (nobody works
// it here); toolbelt jobs lists it, shows it, cancels it and retries it.
func TestJobsCommand(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	config := asyncToolDir(t, dir)
	env := cliEnvironment(t)
	cli := configuredCLI(t, env, config)
	var msg struct {
		Details struct{ Status, TaskID string }
	}
	if err := json.Unmarshal([]byte(cli(0, "call", "--workspace", ws, "--yes", "--json", "render", "--args", `{"prompt":"a cat"}`).stdout), &msg); err != nil || msg.Details.Status != "pending" {
		t.Fatalf("call: %+v %v", msg, err)
	}
	env1 := msg.Details
	var list []map[string]any
	if err := json.Unmarshal([]byte(cli(0, "jobs", "--workspace", ws, "--json").stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("jobs --json: %v %v", list, err)
	}
	for _, k := range []string{"taskId", "tool", "status", "progress", "createdAt", "completedAt"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("jobs --json lacks %q: %v", k, list[0])
		}
	}
	if list[0]["taskId"] != env1.TaskID || list[0]["tool"] != "render" || list[0]["status"] != "pending" || list[0]["completedAt"] != nil {
		t.Errorf("job: %v", list[0])
	}
	if out := cli(0, "jobs", "--workspace", ws).stdout; !strings.Contains(out, env1.TaskID) || !strings.Contains(out, "pending") {
		t.Errorf("jobs: %q", out)
	}
	if out := cli(0, "jobs", "show", env1.TaskID, "--workspace", ws).stdout; !strings.Contains(out, "status     pending") || !strings.Contains(out, "tool       render") {
		t.Errorf("jobs show: %q", out)
	}
	if r := cli(2, "jobs", "retry", env1.TaskID, "--workspace", ws); !strings.Contains(r.stderr, "is pending: only a failed or cancelled job can be retried") {
		t.Errorf("retry of a pending job: %+v", r)
	}
	if out := cli(0, "jobs", "cancel", env1.TaskID, "--workspace", ws).stdout; !strings.Contains(out, "status     cancelled") {
		t.Errorf("jobs cancel: %q", out)
	}
	if r := cli(2, "jobs", "cancel", env1.TaskID, "--workspace", ws); !strings.Contains(r.stderr, "already finished (cancelled)") {
		t.Errorf("second cancel: %+v", r)
	}
	if out := cli(0, "jobs", "retry", env1.TaskID, "--workspace", ws, "--json").stdout; !strings.Contains(out, `"status": "pending"`) {
		t.Errorf("jobs retry: %q", out)
	}
	if r := cli(2, "jobs", "show", "task_nope", "--workspace", ws); !strings.Contains(r.stderr, `no job "task_nope": toolbelt jobs lists them`) {
		t.Errorf("unknown id: %+v", r)
	}
	if r := cli(2, "jobs", "--status", "done", "--workspace", ws); !strings.Contains(r.stderr, "use one of pending, processing") {
		t.Errorf("bad status: %+v", r)
	}
}

// TestChatFollowsJobs: in toolbelt chat, a turn that starts an async tool's
// job ends at once (the prompt comes back); when the job finishes, its
// outcome reaches the conversation and the model's answer to it is printed
// without the user typing anything.
func TestChatFollowsJobs(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	config := asyncToolDir(t, dir)
	s := llmtest.New(t,
		llmtest.Response{Body: llmtest.Anthropic("", "Starting the render.", llmtest.Call{ID: "toolu_01C", Name: "render", Args: `{"prompt": "a cat"}`})},
		llmtest.Response{Body: llmtest.Anthropic("", "The render is running.")},
		llmtest.Response{Body: llmtest.Anthropic("", "Your clip is ready: rendered clip.mp4")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "--config", config, "chat", "--model", "anthropic/claude-test", "--base-url", s.URL, "--workspace", ws)
	cmd.Env = cliEnvironment(t)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "render a cat\n"); err != nil {
		t.Fatal(err)
	}
	// Nothing more is typed until the answer to the job's outcome shows
	// (the command is killed at the deadline, which ends the output).
	var out strings.Builder
	for lines := bufio.NewScanner(stdout); !strings.Contains(out.String(), "Your clip is ready: rendered clip.mp4"); {
		if !lines.Scan() {
			cmd.Wait()
			t.Fatalf("the job's outcome never reached the chat:\n%s\n%s", out.String(), stderr.String())
		}
		out.WriteString(lines.Text() + "\n")
	}
	io.WriteString(stdin, "/quit\n")
	stdin.Close()
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	reqs := s.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "[Background job task") {
		t.Errorf("%d requests; the last does not carry the job's outcome", len(reqs))
	}
}
